// analysis/torch_collectives: the names of torch.distributed's operators and of their backends'
// work records, which collectives bound the ranks' clocks, and the pairing of each c10d call with
// the work that ran it (used by the rank analysis and the rank merge).
#include "analysis/torch_collectives.hpp"

#include <gtest/gtest.h>

#include <vector>

#include "nnprof/ids.hpp"

namespace {

using nnprof::kNone;
using nnprof::analysis::TimedOperation;

TEST(TorchCollectives, OperatorsAndTheirWorkRecordsHaveOnePlainName) {
  using nnprof::analysis::backend_work_operation;
  using nnprof::analysis::c10d_operation;
  EXPECT_EQ(c10d_operation("c10d::allreduce_"), "allreduce");
  EXPECT_EQ(c10d_operation("c10d::_allgather_base_"), "allgather");
  EXPECT_EQ(c10d_operation("c10d::reduce_scatter_"), "reducescatter");
  EXPECT_EQ(c10d_operation("c10d::barrier"), "barrier");
  EXPECT_EQ(backend_work_operation("gloo:all_reduce"), "allreduce");
  EXPECT_EQ(backend_work_operation("nccl:all_gather"), "allgather");
  EXPECT_EQ(backend_work_operation("nccl:_reduce_scatter_base"), "reducescatter");
  // Names that are neither.
  EXPECT_EQ(c10d_operation("c10d::"), "");
  EXPECT_EQ(c10d_operation("aten::add"), "");
  EXPECT_EQ(backend_work_operation("gloo:"), "");
  EXPECT_EQ(backend_work_operation("mpi:all_reduce"), "");
  EXPECT_EQ(backend_work_operation("allreduce"), "");
}

TEST(TorchCollectives, OnlyCollectivesNoMemberLeavesEarlySynchronise) {
  using nnprof::analysis::synchronises_every_member;
  for (const char* op : {"allreduce", "allgather", "alltoall", "reducescatter", "barrier"})
    EXPECT_TRUE(synchronises_every_member(op)) << op;
  // A broadcast's or a reduce's root, a scatter's or a gather's, may leave before the others came.
  for (const char* op : {"broadcast", "reduce", "scatter", "gather", "send", "recv", ""})
    EXPECT_FALSE(synchronises_every_member(op)) << op;
}

// Each call gets the first work of its operation that started after it and is not taken: works
// of other operations between them, a call whose work never came (the last allreduce) and a
// work that started before its call (a record of an earlier, unrecorded call) change nothing.
TEST(TorchCollectives, EachCallIsPairedWithTheNextWorkOfItsOperation) {
  const std::vector<TimedOperation> calls = {
      {100, "allreduce"}, {200, "broadcast"}, {300, "allreduce"}, {400, "barrier"}, {900, "allreduce"}};
  const std::vector<TimedOperation> works = {
      {50, "allreduce"},   // before every call: no call's work
      {110, "allreduce"},  // the first allreduce's
      {210, "broadcast"},
      {350, "barrier"},    // before the barrier's call: not its work
      {305, "allreduce"},  // the second allreduce's (the list need not be in start order)
      {420, "barrier"}};
  const std::vector<std::uint32_t> pair = nnprof::analysis::pair_backend_works(calls, works);
  EXPECT_EQ(pair, (std::vector<std::uint32_t>{1, 2, 4, 5, kNone}));
}

TEST(TorchCollectives, CallsOutOfStartOrderArePairedByStart) {
  const std::vector<TimedOperation> calls = {{300, "allreduce"}, {100, "allreduce"}};
  const std::vector<TimedOperation> works = {{150, "allreduce"}, {350, "allreduce"}};
  EXPECT_EQ(nnprof::analysis::pair_backend_works(calls, works), (std::vector<std::uint32_t>{1, 0}));
}

}  // namespace
