// torch.distributed's collectives as nnprof records them: a c10d operator's span
// (`c10d::allreduce_`) covers only the enqueue of the work, which then runs as its backend's own
// record (`gloo:all_reduce` on a gloo worker thread, `nccl:all_reduce`). These pair the two on one
// rank, for the rank analysis (where a collective ends) and for the rank merge (what its ends
// prove about the ranks' clocks).
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace nnprof::analysis {

/// An operation's name with underscores and a trailing "base" dropped, so that PyTorch's
/// operator (`allreduce_`, `_allgather_base`) and its backend's work record (`all_reduce`,
/// `all_gather`) compare equal.
[[nodiscard]] std::string plain_operation(std::string_view name);

/// The plain operation of a c10d operator's span name (`c10d::allreduce_` gives "allreduce");
/// "" for any other name.
[[nodiscard]] std::string c10d_operation(std::string_view span_name);

/// The plain operation of a backend's work record (`gloo:all_reduce` gives "allreduce"); "" for
/// any other name.
[[nodiscard]] std::string backend_work_operation(std::string_view span_name);

/// Whether no member can leave a collective of this plain operation before every member has
/// entered it (allreduce, allgather, alltoall, reduce-scatter, barrier), so that its ends bound
/// the members' clock offsets. A broadcast's root, for one, may leave first.
[[nodiscard]] bool synchronises_every_member(std::string_view plain);

/// A c10d call or a backend work record on one rank: its start and plain operation.
struct TimedOperation {
  std::uint64_t start_ns = 0;
  std::string operation;
};

/// For each of one rank's c10d calls, the index in `works` of the backend work record that ran
/// it, or kNone. A process group starts its works in the order they were enqueued, so the
/// n-th call of an operation (in start order) gets the first record of that operation that
/// started after it and is not taken yet.
[[nodiscard]] std::vector<std::uint32_t> pair_backend_works(std::span<const TimedOperation> calls,
                                                            std::span<const TimedOperation> works);

}  // namespace nnprof::analysis
