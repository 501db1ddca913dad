// `nnprof record` in the ranks of real distributed jobs (issue 24): 4 MPI ranks under Open MPI's
// mpirun (collectives through the PMPI interposer, the clock exchange at MPI_Init and
// MPI_Finalize, an offset injected into one rank recovered), and 2 torch.distributed ranks on
// gloo (c10d collectives through the operator observer, the clock over TCP). Each test skips when
// its launcher is missing.
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <map>
#include <string>
#include <tuple>
#include <vector>

#include "nnprof/distributed.hpp"
#include "nnprof/distributed_analysis.hpp"
#include "nnprof/profile.hpp"
#include "test_directory.hpp"

namespace {

namespace fs = std::filesystem;
namespace arg = nnprof::collective_arg;

struct ShellRun {
  int status = -1;
  std::string output;
};

ShellRun run_shell(const std::string& command) {
  ShellRun r;
  FILE* pipe = popen((command + " 2>&1").c_str(), "r");
  if (pipe == nullptr) return r;
  std::array<char, 4096> buf{};
  while (std::fgets(buf.data(), buf.size(), pipe) != nullptr) r.output += buf.data();
  const int raw = pclose(pipe);
  r.status = WIFEXITED(raw) ? WEXITSTATUS(raw) : -1;
  return r;
}

/// A collective as the spans of one rank show it.
struct Collective {
  std::string name, operation, group;
  std::int64_t seq = -1, bytes = -1, root = -1, group_size = -1;
  std::uint64_t start_ns = 0, end_ns = 0;
};

/// The spans that carry collective arguments, in the order of (group, seq).
std::vector<Collective> collectives(const nnprof::Profile& p) {
  std::map<std::uint32_t, Collective> by_span;
  for (const nnprof::SpanArg& a : p.span_args) {
    Collective& c = by_span[a.span];
    if (a.key == arg::kOperation) c.operation = a.string_value;
    if (a.key == arg::kGroup) c.group = a.string_value;
    if (a.key == arg::kSequence) c.seq = a.int_value;
    if (a.key == arg::kBytes) c.bytes = a.int_value;
    if (a.key == arg::kRoot) c.root = a.int_value;
    if (a.key == arg::kGroupSize) c.group_size = a.int_value;
  }
  std::vector<Collective> out;
  for (auto& [span, c] : by_span) {
    if (c.group.empty()) continue;
    c.name = p.str(p.spans[span].name);
    c.start_ns = p.spans[span].start_ns;
    c.end_ns = p.spans[span].end_ns;
    out.push_back(c);
  }
  std::sort(out.begin(), out.end(),
            [](const Collective& a, const Collective& b) { return std::tie(a.group, a.seq) < std::tie(b.group, b.seq); });
  return out;
}

class DistributedRecord : public nnprof::testing::TestDirectory {
 protected:
  DistributedRecord() : TestDirectory("distributed_record") {}
};

#ifdef MPIEXEC_PATH
std::string mpirun_prefix() {
  // Root in a container needs --allow-run-as-root; a 2-core machine needs --oversubscribe
  // for 4 ranks. Bounded: a hung rank fails the test instead of the suite's timeout.
  return std::string("timeout 240 ") + MPIEXEC_PATH + (geteuid() == 0 ? " --allow-run-as-root" : "") +
         " --oversubscribe --mca btl self,vader,tcp";
}

std::string record(const std::string& pattern) {
  return std::string(NNPROF_CLI_PATH) + " record -q -o '" + pattern + "' -- " + MPI_RANKS_PATH;
}

TEST_F(DistributedRecord, FourMpiRanksWriteOneProfileEachWithMatchingCollectives) {
  if (!fs::exists(MPIEXEC_PATH)) GTEST_SKIP() << MPIEXEC_PATH << " is not installed";
  const std::string pattern = path("mpi.rank{rank}.nnprof");
  const ShellRun r = run_shell(mpirun_prefix() + " -np 4 " + record(pattern));
  ASSERT_EQ(r.status, 0) << r.output;
  std::vector<nnprof::Profile> ranks;
  for (int i = 0; i < 4; ++i) {
    const std::string file = path("mpi.rank" + std::to_string(i) + ".nnprof");
    ASSERT_TRUE(fs::exists(file)) << file << "\n" << r.output;
    ranks.push_back(nnprof::Profile::load(file));
    const nnprof::Profile& p = ranks.back();
    ASSERT_EQ(p.ranks.size(), 1u);
    EXPECT_EQ(p.ranks[0].rank, i);
    EXPECT_EQ(p.ranks[0].world_size, 4);
    EXPECT_EQ(p.ranks[0].local_rank, i);  // one host
    EXPECT_EQ(p.ranks[0].launcher, "mpirun");
    EXPECT_EQ(p.ranks[0].pid, p.meta.pid);
    if (i == 0) {
      EXPECT_FALSE(p.ranks[0].clock.aligned);  // the reference
    } else {
      EXPECT_TRUE(p.ranks[0].clock.aligned) << i;
      EXPECT_TRUE(p.ranks[0].clock.method.starts_with("mpi-ping-pong")) << p.ranks[0].clock.method;
      EXPECT_EQ(p.ranks[0].clock.exchanges, 128u);
      EXPECT_GT(p.ranks[0].clock.residual_ns, 0.0);
    }
  }
  // 5 rounds of 8 collectives on the world, 5 on the halves; the same (group, seq, operation)
  // on every rank, and the same group size.
  const std::vector<Collective> zero = collectives(ranks[0]);
  ASSERT_EQ(zero.size(), 45u);
  std::map<std::string, int> per_operation;
  for (const Collective& c : zero) ++per_operation[c.operation];
  EXPECT_EQ(per_operation["allreduce"], 10);
  EXPECT_EQ(per_operation["broadcast"], 5);
  EXPECT_EQ(per_operation["barrier"], 5);
  for (int i = 1; i < 4; ++i) {
    const std::vector<Collective> other = collectives(ranks[static_cast<std::size_t>(i)]);
    ASSERT_EQ(other.size(), zero.size()) << i;
    for (std::size_t k = 0; k < zero.size(); ++k) {
      const Collective& a = zero[k];
      const Collective& b = other[k];
      if (a.group == "world") {
        EXPECT_EQ(b.group, "world");
        EXPECT_EQ(std::tie(a.seq, a.operation, a.name, a.group_size, a.root),
                  std::tie(b.seq, b.operation, b.name, b.group_size, b.root))
            << "rank " << i << " collective " << k;
      }
    }
  }
  // The ring: a send to the right and a receive from the left, as scopes with peer, tag and bytes.
  for (int i = 0; i < 4; ++i) {
    const nnprof::Profile& p = ranks[static_cast<std::size_t>(i)];
    std::map<std::string, std::map<std::string, std::int64_t>> p2p;
    for (const nnprof::SpanArg& a : p.span_args) {
      const std::string name = p.str(p.spans[a.span].name);
      if (name == "MPI_Send" || name == "MPI_Irecv") p2p[name][a.key] = a.int_value;
    }
    EXPECT_EQ(p2p["MPI_Send"]["peer"], (i + 1) % 4);
    EXPECT_EQ(p2p["MPI_Irecv"]["peer"], (i + 3) % 4);
    EXPECT_EQ(p2p["MPI_Send"]["tag"], 7);
    EXPECT_EQ(p2p["MPI_Send"]["bytes"], 800);
    EXPECT_NE(p.find_scope("MPI_Wait"), nullptr);
  }
  // The halves: ranks 0 and 2 share a communicator, 1 and 3 another, named alike by both.
  auto halves_of = [&](int i) {
    std::string group;
    for (const Collective& c : collectives(ranks[static_cast<std::size_t>(i)]))
      if (c.group != "world") group = c.group;
    return group;
  };
  EXPECT_EQ(halves_of(0), halves_of(2));
  EXPECT_EQ(halves_of(1), halves_of(3));
  EXPECT_NE(halves_of(0), halves_of(1));
  // Bytes and roots as the program passed them.
  for (const Collective& c : zero) {
    if (c.operation == "allreduce" && c.group == "world") {
      EXPECT_EQ(c.bytes, 1024 * 8);
    }
    if (c.operation == "broadcast") {
      EXPECT_EQ(c.bytes, 256 * 8);
      EXPECT_EQ(c.root, 1);
    }
    if (c.operation == "alltoall") {
      EXPECT_EQ(c.bytes, 8 * 8 * 4);
    }
    if (c.operation == "barrier") {
      EXPECT_EQ(c.root, -1);
    }
    EXPECT_EQ(c.group_size, c.group == "world" ? 4 : 2);
  }
}

// The straggler check on a real job: 4 ranks under mpirun, rank 2 sleeps 200 ms before
// the allreduce of step 3. After `nnprof merge`, rank 2 is the straggler and every other rank's
// wait at that allreduce is the sleep. Tolerance: -25 ms to +40 ms: 4 busy-polling ranks share 2
// cores (CI runs another test beside this one), so a rank descheduled for a few time slices
// during its own ~1 ms of compute arrives late too and waits that much less, and the late rank
// itself may be descheduled after its sleep.
TEST_F(DistributedRecord, ARankMadeLateByASleepIsTheStragglerAndTheOthersWaitTheSleep) {
  if (!fs::exists(MPIEXEC_PATH)) GTEST_SKIP() << MPIEXEC_PATH << " is not installed";
  constexpr std::uint64_t kSleepNs = 200'000'000;
  const std::string pattern = path("late.rank{rank}.nnprof");
  const ShellRun r = run_shell(mpirun_prefix() + " -np 4 " + NNPROF_CLI_PATH + " record -q --mpi -o '" + pattern +
                               "' -- " + MPI_STRAGGLER_PATH + " 2 200");
  ASSERT_EQ(r.status, 0) << r.output;
  const std::string job = path("late.nnprof");
  const ShellRun m = run_shell(std::string(NNPROF_CLI_PATH) + " merge " + path("late.rank0.nnprof") + " " +
                               path("late.rank1.nnprof") + " " + path("late.rank2.nnprof") + " " +
                               path("late.rank3.nnprof") + " -o " + job);
  ASSERT_EQ(m.status, 0) << m.output;
  const nnprof::Profile p = nnprof::Profile::load(job);
  ASSERT_EQ(p.ranks.size(), 4u);
  const nnprof::RankAnalysis a = nnprof::analyze_ranks(p);
  ASSERT_NE(a.straggler, nnprof::kNone);
  EXPECT_EQ(p.ranks[a.straggler].rank, 2);
  EXPECT_EQ(p.str(a.step_name), "train_step");
  EXPECT_EQ(a.steps, 6u);
  // The allreduce of step 3 (seq 3 on the world): rank 2 came last, the others waited the sleep.
  const nnprof::CollectiveCall* late = nullptr;
  for (const nnprof::CollectiveCall& c : a.collectives)
    if (c.operation == "allreduce" && c.seq == 3) late = &c;
  ASSERT_NE(late, nullptr);
  ASSERT_EQ(late->arrivals.size(), 4u);
  EXPECT_EQ(p.ranks[late->last_rank].rank, 2);
  for (const nnprof::CollectiveArrival& arrival : late->arrivals) {
    if (p.ranks[arrival.rank].rank == 2) continue;
    EXPECT_GE(arrival.wait_ns + 25'000'000, kSleepNs) << "rank " << p.ranks[arrival.rank].rank;
    EXPECT_LE(arrival.wait_ns, kSleepNs + 40'000'000) << "rank " << p.ranks[arrival.rank].rank;
  }
  // Rank 2 caused most of the waiting.
  const nnprof::RankSummary& two = a.ranks[a.straggler];
  EXPECT_GE(two.caused_wait_ns, 3 * (kSleepNs - 25'000'000));
}

#ifdef MPI_NONBLOCKING_PATH
// Nonblocking collectives on a real job: 4 ranks under mpirun, 5 steps; each starts its
// collectives, computes 50 ms beside them (a busy loop on the wall clock) and completes them. In
// step 3 rank 2 sleeps 300 ms before starting them, so every other rank computes its 50 ms and
// then is blocked for the remaining 250 ms: that, not the 300 ms between the arrivals, is its
// wait. Tolerance as for the blocking straggler (-25 ms to +40 ms, 4 busy ranks on 2 cores).
// The sleep is long against what a loaded 2-core machine does to the other steps (a rank
// descheduled at the end of its computation makes the others wait for it there; with 150 ms,
// 1 run in 6 beside another 4-rank job named another rank straggler).
struct NonblockingJob {
  nnprof::Profile profile;
  nnprof::RankAnalysis analysis;
};

constexpr std::uint64_t kLateSleepNs = 300'000'000;
constexpr std::uint64_t kOverlapNs = 50'000'000;
// What the interposer may miss of a rank's blocked time: the moments between polls of MPI_Test
// in which its thread used CPU (libnnprof_mpi counts a gap between polls only when the thread
// ran for under 20 us of it) and the moment before the first poll. Measured 0 to 2.4 ms.
constexpr std::int64_t kBetweenPollsToleranceNs = 10'000'000;

class DistributedNonblocking : public DistributedRecord {
 protected:
  void record_and_merge(const std::string& mode) {
    const std::string pattern = path(mode + ".rank{rank}.nnprof");
    // Ranks that find nothing to do yield the CPU (mpi_yield_when_idle) instead of spinning:
    // polling ranks on 2 cores can otherwise keep a rank from running for longer than the
    // sleep, and then it, not rank 2, is last.
    const ShellRun r = run_shell(mpirun_prefix() + " --mca mpi_yield_when_idle 1 -np 4 " + NNPROF_CLI_PATH +
                                 " record -q --mpi -o '" + pattern + "' -- " + MPI_NONBLOCKING_PATH + " 2 300 50 " +
                                 mode);
    ASSERT_EQ(r.status, 0) << r.output;
    std::string inputs;
    for (int i = 0; i < 4; ++i) {
      inputs += ' ';  // appended piece by piece: GCC 12 warns (-Wrestrict) on " " + std::string
      inputs += path(mode + ".rank" + std::to_string(i) + ".nnprof");
    }
    const std::string job = path(mode + ".nnprof");
    const ShellRun m = run_shell(std::string(NNPROF_CLI_PATH) + " merge" + inputs + " -o " + job);
    ASSERT_EQ(m.status, 0) << m.output;
    job_.profile = nnprof::Profile::load(job);
    ASSERT_EQ(job_.profile.ranks.size(), 4u);
    job_.analysis = nnprof::analyze_ranks(job_.profile);
  }

  /// The checks both variants share: `per_step` nonblocking collectives a step, matched on all 4
  /// ranks; rank 2 the straggler and last at step 3's; the others' wait there the sleep less
  /// their overlapped computation; the critical path through rank 2's late work.
  void expect_late_rank_found(std::size_t per_step) {
    const nnprof::Profile& p = job_.profile;
    const nnprof::RankAnalysis& a = job_.analysis;
    EXPECT_EQ(p.str(a.step_name), "train_step");
    ASSERT_EQ(a.steps, 5u);
    ASSERT_EQ(a.collectives.size(), 5 * per_step);
    EXPECT_EQ(a.incomplete_collectives, 0u);
    for (const nnprof::CollectiveCall& c : a.collectives) {
      EXPECT_TRUE(c.nonblocking) << c.operation << " " << c.seq;
      ASSERT_EQ(c.arrivals.size(), 4u) << c.operation << " " << c.seq;
      for (const nnprof::CollectiveArrival& arrival : c.arrivals) {
        EXPECT_TRUE(arrival.nonblocking);
        // The completion was seen: the end is past the overlapped computation, not the call's end.
        EXPECT_GE(arrival.end_ns, arrival.arrival_ns + kOverlapNs - 1'000'000) << c.operation << " " << c.seq;
      }
    }
    ASSERT_NE(a.straggler, nnprof::kNone);
    EXPECT_EQ(p.ranks[a.straggler].rank, 2);
    // Step 3's collectives: rank 2 came last to each. Each other rank's waiting over them (one
    // moment counted once, however many a Waitall completed) is the sleep less its overlapped
    // computation. Both as they really ran: the computation is a busy loop of 50 ms on the wall
    // clock, but a rank descheduled at its end (4 busy ranks on 2 cores, more on a loaded
    // machine) computes longer, so its overlap is from its arrival to the end of its
    // computation; the sleep of 300 ms may end late for the same reason, so it is rank 2's
    // forward_backward scope of step 3 (the sleep and about 1 ms of arithmetic).
    std::map<std::uint32_t, std::uint64_t> step3_wait, step3_arrival;
    std::uint64_t last_arrival = 0;
    std::size_t step3_calls = 0;
    for (const nnprof::CollectiveCall& c : a.collectives) {
      if (c.seq / static_cast<std::int64_t>(per_step) != 3) continue;
      ++step3_calls;
      EXPECT_EQ(p.ranks[c.last_rank].rank, 2) << c.operation;
      last_arrival = std::max(last_arrival, c.last_arrival_ns);
      for (const nnprof::CollectiveArrival& arrival : c.arrivals) {
        step3_wait[arrival.rank] += arrival.wait_ns;
        if (!step3_arrival.contains(arrival.rank) || arrival.arrival_ns < step3_arrival[arrival.rank])
          step3_arrival[arrival.rank] = arrival.arrival_ns;
      }
    }
    EXPECT_EQ(step3_calls, per_step);
    std::map<std::uint32_t, std::vector<std::uint64_t>> overlapped_end;
    std::vector<std::uint64_t> late_forward;  // durations of rank 2's forward_backward scopes
    for (const nnprof::Span& s : p.spans) {
      const std::uint32_t rank = p.threads[s.thread].rank;
      if (p.str(s.name) == "overlapped_compute") overlapped_end[rank].push_back(s.end_ns);
      if (p.str(s.name) == "forward_backward" && p.ranks[rank].rank == 2) late_forward.push_back(s.end_ns - s.start_ns);
    }
    ASSERT_EQ(late_forward.size(), 5u);
    const std::uint64_t sleep = *std::ranges::max_element(late_forward);
    EXPECT_GE(sleep, kLateSleepNs);
    bool all_waiting_when_late_arrived = true;
    std::uint64_t others_waited = 0;
    for (const auto& [rank, wait] : step3_wait) {
      const int mpi_rank = p.ranks[rank].rank;
      EXPECT_EQ(a.ranks[rank].steps[3].wait_ns, wait) << "rank " << mpi_rank;
      if (mpi_rank == 2) {
        EXPECT_LE(wait, 10'000'000u) << "the late rank itself";
        continue;
      }
      others_waited += wait;
      std::vector<std::uint64_t>& ends = overlapped_end[rank];
      ASSERT_EQ(ends.size(), 5u);
      std::ranges::sort(ends);
      const std::uint64_t overlap = ends[3] - step3_arrival[rank];
      const std::int64_t expected = static_cast<std::int64_t>(sleep) - static_cast<std::int64_t>(overlap);
      EXPECT_GE(static_cast<std::int64_t>(wait) + 25'000'000, expected) << "rank " << mpi_rank;
      EXPECT_LE(static_cast<std::int64_t>(wait), std::max<std::int64_t>(expected, 0) + 40'000'000) << "rank " << mpi_rank;
      // Exactly, on the common clock: the last arrival minus the end of the rank's computation
      // (never more; less by kBetweenPollsToleranceNs at most).
      const std::int64_t truth = last_arrival > ends[3] ? static_cast<std::int64_t>(last_arrival - ends[3]) : 0;
      all_waiting_when_late_arrived = all_waiting_when_late_arrived && truth > 0;
      const std::int64_t error = static_cast<std::int64_t>(wait) - truth;
      std::printf("rank %d: slept %.2f ms, overlapped %.2f ms; step 3 wait %.2f ms; last arrival - own "
                  "computation's end %.2f ms (%+.2f ms)\n",
                  mpi_rank, static_cast<double>(sleep) / 1e6, static_cast<double>(overlap) / 1e6,
                  static_cast<double>(wait) / 1e6,
                  static_cast<double>(truth) / 1e6, static_cast<double>(error) / 1e6);
      EXPECT_LE(error, 1'000'000) << "rank " << mpi_rank;
      EXPECT_GE(error, -kBetweenPollsToleranceNs) << "rank " << mpi_rank;
    }
    EXPECT_GE(a.ranks[a.straggler].caused_wait_ns, others_waited);
    // Step 3's critical path runs through rank 2's late work when every other rank was already
    // waiting for it (a rank descheduled past rank 2's arrival decided the step's end itself).
    // Step 3 is usually the slowest, but on a loaded machine a rank descheduled long enough can
    // make another step slower, so it is asked for by number.
    const nnprof::RankCriticalPath path = nnprof::rank_critical_path(p, a, 3);
    std::uint64_t on_late_rank = 0;
    for (const nnprof::RankPathSegment& s : path.segments)
      if (s.kind == nnprof::RankPathKind::Compute && p.ranks[s.rank].rank == 2) on_late_rank += s.duration_ns();
    if (all_waiting_when_late_arrived) {
      EXPECT_GE(on_late_rank + 25'000'000, kLateSleepNs);
    }
    // Each rank overlapped its collectives with about 50 ms of computation a step.
    for (const nnprof::RankSummary& r : a.ranks) EXPECT_GE(r.overlap_ns + 5'000'000, 5 * kOverlapNs) << r.rank;
  }

  NonblockingJob job_;
};

TEST_F(DistributedNonblocking, AnIallreduceCompletedByPollingMpiTestFindsTheLateRank) {
  if (!fs::exists(MPIEXEC_PATH)) GTEST_SKIP() << MPIEXEC_PATH << " is not installed";
  ASSERT_NO_FATAL_FAILURE(record_and_merge("test"));
  expect_late_rank_found(1);
  // Only the test that completed each step's allreduce is a span: the polls are not.
  const nnprof::Profile& p = job_.profile;
  const nnprof::ScopeStats* tests = p.find_scope("MPI_Test");
  ASSERT_NE(tests, nullptr);
  EXPECT_EQ(tests->time.count, 4u * 5u);
  const nnprof::ScopeStats* completed = p.find_scope("MPI_Iallreduce completed");
  ASSERT_NE(completed, nullptr);
  EXPECT_EQ(completed->time.count, 4u * 5u);
}

TEST_F(DistributedNonblocking, ThreeCollectivesCompletedByOneWaitallFindTheLateRank) {
  if (!fs::exists(MPIEXEC_PATH)) GTEST_SKIP() << MPIEXEC_PATH << " is not installed";
  ASSERT_NO_FATAL_FAILURE(record_and_merge("waitall"));
  expect_late_rank_found(3);
  std::map<std::string, int> per_operation;
  for (const nnprof::CollectiveCall& c : job_.analysis.collectives) ++per_operation[c.operation];
  EXPECT_EQ(per_operation["allreduce"], 5);
  EXPECT_EQ(per_operation["broadcast"], 5);
  EXPECT_EQ(per_operation["barrier"], 5);
}
// Each of the 14 nonblocking collectives once, completed by MPI_Waitany, MPI_Waitsome and by
// polling MPI_Testall, MPI_Testany and MPI_Testsome: every one matched on all 4 ranks in call
// order (seq 0 to 13 on the world), flagged nonblocking, its completion seen on every rank,
// its bytes counted as for the blocking call; the waits and tests that completed them are spans.
TEST_F(DistributedNonblocking, EveryNonblockingCollectiveIsMatchedAndCompletedByEachWaitAndTest) {
  if (!fs::exists(MPIEXEC_PATH)) GTEST_SKIP() << MPIEXEC_PATH << " is not installed";
  const std::string pattern = path("every.rank{rank}.nnprof");
  const ShellRun r = run_shell(mpirun_prefix() + " -np 4 " + NNPROF_CLI_PATH + " record -q --mpi -o '" + pattern +
                               "' -- " + MPI_NONBLOCKING_PATH + " every");
  ASSERT_EQ(r.status, 0) << r.output;
  std::string inputs;
  for (int i = 0; i < 4; ++i) {
    inputs += ' ';
    inputs += path("every.rank" + std::to_string(i) + ".nnprof");
  }
  const std::string job = path("every.nnprof");
  const ShellRun m = run_shell(std::string(NNPROF_CLI_PATH) + " merge" + inputs + " -o " + job);
  ASSERT_EQ(m.status, 0) << m.output;
  EXPECT_NE(m.output.find("14 collective calls"), std::string::npos) << m.output;  // the merge's residual check saw them
  const nnprof::Profile p = nnprof::Profile::load(job);
  const nnprof::RankAnalysis a = nnprof::analyze_ranks(p);
  const char* operations[] = {"barrier",    "broadcast", "allreduce", "reduce",     "allgather",
                              "allgatherv", "gather",    "gatherv",   "scatter",    "scatterv",
                              "alltoall",   "alltoallv", "reduce_scatter", "reduce_scatter_block"};
  const std::int64_t bytes[] = {0, 64 * 8, 64 * 8, 64 * 8, 8 * 8, 8 * 8, 8 * 8, 8 * 8, 8 * 8, 8 * 8,
                                8 * 8 * 4, 8 * 8 * 4, 8 * 8 * 4, 8 * 8 * 4};
  ASSERT_EQ(a.collectives.size(), std::size(operations));
  EXPECT_EQ(a.incomplete_collectives, 0u);
  std::map<std::int64_t, const nnprof::CollectiveCall*> by_seq;
  for (const nnprof::CollectiveCall& c : a.collectives) by_seq[c.seq] = &c;
  for (std::int64_t seq = 0; seq < static_cast<std::int64_t>(std::size(operations)); ++seq) {
    ASSERT_TRUE(by_seq.contains(seq)) << seq;
    const nnprof::CollectiveCall& c = *by_seq[seq];
    EXPECT_EQ(c.operation, operations[seq]) << seq;
    EXPECT_EQ(c.group, "world") << seq;
    EXPECT_EQ(static_cast<std::int64_t>(c.bytes), bytes[seq]) << c.operation;
    EXPECT_TRUE(c.nonblocking) << c.operation;
    ASSERT_EQ(c.arrivals.size(), 4u) << c.operation;
    for (const nnprof::CollectiveArrival& arrival : c.arrivals) {
      EXPECT_GT(arrival.blocked_ns, 0u) << c.operation << " on rank " << arrival.rank << ": no completion seen";
      EXPECT_GT(arrival.end_ns, p.spans[arrival.span].end_ns) << c.operation << " on rank " << arrival.rank;
    }
  }
  for (const char* call : {"MPI_Waitany", "MPI_Waitsome", "MPI_Testall", "MPI_Testany", "MPI_Testsome"})
    EXPECT_NE(p.find_scope(call), nullptr) << call;
  // 14 completions on each rank.
  std::size_t completions = 0;
  for (const nnprof::SpanArg& arg : p.span_args) completions += arg.key == arg::kCompletedSequence ? 1 : 0;
  EXPECT_EQ(completions, 4u * 14u);
}
#endif

TEST_F(DistributedRecord, AnInjectedClockOffsetIsRecoveredWithItsResidual) {
  if (!fs::exists(MPIEXEC_PATH)) GTEST_SKIP() << MPIEXEC_PATH << " is not installed";
  // Rank 2's clock reads 7 ms ahead (the test hook, read only by the clock-alignment code).
  const std::int64_t injected = 7'000'000;
  const std::string pattern = path("clock.rank{rank}.nnprof");
  const ShellRun r = run_shell(mpirun_prefix() + " -np 2 " + record(pattern) + " : -np 1 env NNPROF_TEST_CLOCK_OFFSET_NS=" +
                          std::to_string(injected) + " " + record(pattern) + " : -np 1 " + record(pattern));
  ASSERT_EQ(r.status, 0) << r.output;
  std::vector<nnprof::Profile> ranks;
  for (int i = 0; i < 4; ++i) ranks.push_back(nnprof::Profile::load(path("clock.rank" + std::to_string(i) + ".nnprof")));
  // One host, one CLOCK_MONOTONIC: the true offset between two profiles' clocks is the
  // difference of their sessions' starts; rank 2's must come out 7 ms more.
  const auto origin = [&](int i) { return static_cast<double>(ranks[static_cast<std::size_t>(i)].meta.clock.monotonic_origin_ns); };
  for (int i = 1; i < 4; ++i) {
    const nnprof::ClockAlignment& c = ranks[static_cast<std::size_t>(i)].ranks.at(0).clock;
    ASSERT_TRUE(c.aligned) << i;
    const double expected = origin(0) - origin(i) + (i == 2 ? static_cast<double>(injected) : 0.0);
    const double error = c.offset_ns - expected;
    std::printf("rank %d: offset %.0f ns, expected %.0f ns, error %.0f ns, residual %.0f ns, drift %.1f ppb, %s\n", i,
                c.offset_ns, expected, error, c.residual_ns, c.drift_ppb, c.method.c_str());
    RecordProperty("rank" + std::to_string(i) + "_residual_ns", static_cast<int>(c.residual_ns));
    RecordProperty("rank" + std::to_string(i) + "_error_ns", static_cast<int>(error));
    EXPECT_LT(std::abs(error), 50'000.0) << "rank " << i;
    // The residual is a bound on the error, and it is reported.
    EXPECT_GT(c.residual_ns, 0.0);
    EXPECT_LE(std::abs(error), c.residual_ns + 1.0) << "rank " << i;
  }
}

TEST_F(DistributedRecord, RanksWriteTheDefaultPatternWithoutDashO) {
  if (!fs::exists(MPIEXEC_PATH)) GTEST_SKIP() << MPIEXEC_PATH << " is not installed";
  const ShellRun r = run_shell("cd " + dir_.string() + " && " + mpirun_prefix() + " -np 2 " + NNPROF_CLI_PATH +
                               " record -- " + MPI_RANKS_PATH);
  ASSERT_EQ(r.status, 0) << r.output;
  for (int i = 0; i < 2; ++i) {
    const std::string file = path("nnprof-record.rank" + std::to_string(i) + ".nnprof");
    ASSERT_TRUE(fs::exists(file)) << file << "\n" << r.output;
    EXPECT_EQ(nnprof::Profile::load(file).ranks.at(0).rank, i);
  }
  // Rank 1 prints no report, only where its profile went; rank 0 prints its report.
  EXPECT_NE(r.output.find("nnprof-record.rank1.nnprof"), std::string::npos) << r.output;
}

TEST_F(DistributedRecord, RecordRefusesALauncherAndAMalformedPattern) {
  ShellRun r = run_shell(std::string(NNPROF_CLI_PATH) + " record -- mpirun -np 2 /bin/true");
  EXPECT_EQ(r.status, 2) << r.output;
  EXPECT_NE(r.output.find("put it after mpirun"), std::string::npos) << r.output;
  r = run_shell(std::string(NNPROF_CLI_PATH) + " record -o '" + path("p{rnk}.nnprof") + "' -- /bin/true");
  EXPECT_EQ(r.status, 2) << r.output;
  EXPECT_NE(r.output.find("names {rnk}, which is not a field"), std::string::npos) << r.output;
}
#endif

#ifdef TORCH_GLOO_SCRIPT
bool has_torch_distributed() {
  return fs::exists("/usr/bin/python3") && run_shell("/usr/bin/python3 -c 'import torch.distributed'").status == 0;
}

// Two processes started as torch.distributed's env:// expects (RANK, WORLD_SIZE, MASTER_ADDR,
// MASTER_PORT), each under its own `nnprof record`, the test playing the launcher; the next
// test runs them under torchrun.
TEST_F(DistributedRecord, TwoGlooRanksTagTheirC10dCollectivesAndAlignTheirClocks) {
  if (!has_torch_distributed()) GTEST_SKIP() << "/usr/bin/python3 with torch.distributed is not installed";
  const std::string pattern = path("torch.rank{rank}.nnprof");
  const int port = 20000 + static_cast<int>(getpid() % 20000);  // the clock exchange uses port + 1
  auto rank = [&](int r) {
    return "env RANK=" + std::to_string(r) + " WORLD_SIZE=2 LOCAL_RANK=" + std::to_string(r) +
           " MASTER_ADDR=127.0.0.1 MASTER_PORT=" + std::to_string(port) + " timeout 240 " + NNPROF_CLI_PATH +
           " record -q -o '" + pattern + "' -- /usr/bin/python3 " + TORCH_GLOO_SCRIPT;
  };
  const ShellRun r = run_shell("cd " + dir_.string() + " && { " + rank(1) + " & one=$!; " + rank(0) +
                               "; zero=$?; wait $one; exit $((zero | $?)); }");
  ASSERT_EQ(r.status, 0) << r.output;
  std::vector<std::vector<Collective>> seen;
  std::vector<nnprof::Profile> profiles;
  for (int i = 0; i < 2; ++i) {
    const std::string file = path("torch.rank" + std::to_string(i) + ".nnprof");
    ASSERT_TRUE(fs::exists(file)) << file << "\n" << r.output;
    const nnprof::Profile p = nnprof::Profile::load(file);
    ASSERT_EQ(p.ranks.size(), 1u);
    EXPECT_EQ(p.ranks[0].rank, i);
    EXPECT_EQ(p.ranks[0].world_size, 2);
    EXPECT_EQ(p.ranks[0].local_rank, i);
    EXPECT_EQ(p.ranks[0].launcher, "env");
    seen.push_back(collectives(p));
    profiles.push_back(p);
  }
  // Rank 1's clock, measured over TCP at MASTER_ADDR: one host, so the true offset is the
  // difference of the sessions' starts.
  const nnprof::ClockAlignment& clock = profiles[1].ranks[0].clock;
  ASSERT_TRUE(clock.aligned) << r.output;
  EXPECT_EQ(clock.method, "tcp-rendezvous");
  const double expected = static_cast<double>(profiles[0].meta.clock.monotonic_origin_ns) -
                          static_cast<double>(profiles[1].meta.clock.monotonic_origin_ns);
  std::printf("torch rank 1: offset %.0f ns, expected %.0f ns, residual %.0f ns\n", clock.offset_ns, expected,
              clock.residual_ns);
  EXPECT_LT(std::abs(clock.offset_ns - expected), 50'000.0);
  EXPECT_LE(std::abs(clock.offset_ns - expected), clock.residual_ns + 1.0);
  // The script: 3 rounds of all_reduce, broadcast from rank 1 and barrier on the world group.
  ASSERT_EQ(seen[0].size(), 9u);
  ASSERT_EQ(seen[1].size(), seen[0].size());
  for (std::size_t k = 0; k < seen[0].size(); ++k) {
    const Collective& a = seen[0][k];
    const Collective& b = seen[1][k];
    EXPECT_EQ(std::tie(a.group, a.seq, a.operation, a.name, a.root, a.group_size),
              std::tie(b.group, b.seq, b.operation, b.name, b.root, b.group_size));
    EXPECT_EQ(a.group, "gloo-2#0");
    EXPECT_EQ(a.seq, static_cast<std::int64_t>(k));
    EXPECT_EQ(a.group_size, 2);
    EXPECT_TRUE(a.name.starts_with("c10d::")) << a.name;
  }
  EXPECT_EQ(seen[0][0].operation, "allreduce");
  EXPECT_EQ(seen[0][0].bytes, 4096 * 4);  // float32[4096]
  EXPECT_EQ(seen[0][1].operation, "broadcast");
  EXPECT_EQ(seen[0][1].root, 1);
  EXPECT_EQ(seen[0][2].operation, "barrier");

  // Merged and analysed: a c10d operator's span is only the enqueue; each collective ends with
  // gloo's own record of the work (gloo:all_reduce on a worker thread), so no rank leaves an
  // allreduce or a barrier before the last one arrived (within the clocks' residual).
  const std::string job = path("torch.job.nnprof");
  nnprof::merge_rank_profiles({path("torch.rank0.nnprof"), path("torch.rank1.nnprof")}, job);
  const nnprof::Profile merged = nnprof::Profile::load(job);
  const nnprof::RankAnalysis a = nnprof::analyze_ranks(merged);
  ASSERT_EQ(a.collectives.size(), 9u);
  const double slack = a.clock_residual_ns + 1'000.0;
  for (const nnprof::CollectiveCall& call : a.collectives) {
    if (call.operation != "allreduce" && call.operation != "barrier") continue;
    ASSERT_EQ(call.arrivals.size(), 2u);
    for (const nnprof::CollectiveArrival& arrival : call.arrivals)
      EXPECT_GE(static_cast<double>(arrival.end_ns) + slack, static_cast<double>(call.last_arrival_ns))
          << call.operation << " seq " << call.seq << ": rank " << arrival.rank << " left at " << arrival.end_ns
          << " before the last arrival at " << call.last_arrival_ns;
  }
}

// `nnprof record -- torchrun ...` as docs/DISTRIBUTED.md tells users: torchrun's workers inherit
// the agent, each writes its rank's file (launcher "torchrun", from TORCHELASTIC_RUN_ID), their
// clocks meet over TCP at the MASTER_ADDR torchrun gives them, and the files merge into one job.
// torchrun is Debian's, with its Python 3.11 defect mended in the launcher (torchrun_debian.py).
TEST_F(DistributedRecord, RecordBeforeTorchrunWritesOneProfilePerRankThatMerge) {
  if (!has_torch_distributed()) GTEST_SKIP() << "/usr/bin/python3 with torch.distributed is not installed";
  const ShellRun r = run_shell("cd " + dir_.string() + " && timeout 240 " + NNPROF_CLI_PATH + " record -q -o '" +
                               path("run.rank{rank}.nnprof") + "' -- /usr/bin/python3 " + TORCHRUN_SCRIPT +
                               " --standalone --nproc_per_node 2 " + TORCH_GLOO_SCRIPT);
  ASSERT_EQ(r.status, 0) << r.output;
  EXPECT_TRUE(fs::exists(path("run.ranknone.nnprof"))) << "torchrun's own profile\n" << r.output;
  std::vector<std::string> files;
  std::vector<std::vector<Collective>> seen;
  for (int i = 0; i < 2; ++i) {
    files.push_back(path("run.rank" + std::to_string(i) + ".nnprof"));
    ASSERT_TRUE(fs::exists(files.back())) << files.back() << "\n" << r.output;
    const nnprof::Profile p = nnprof::Profile::load(files.back());
    ASSERT_EQ(p.ranks.size(), 1u);
    EXPECT_EQ(p.ranks[0].rank, i);
    EXPECT_EQ(p.ranks[0].world_size, 2);
    EXPECT_EQ(p.ranks[0].local_rank, i);
    EXPECT_EQ(p.ranks[0].launcher, "torchrun");
    if (i == 1) {
      EXPECT_TRUE(p.ranks[0].clock.aligned) << r.output;
      EXPECT_TRUE(p.ranks[0].clock.method.starts_with("tcp-rendezvous")) << p.ranks[0].clock.method;
    }
    seen.push_back(collectives(p));
  }
  ASSERT_EQ(seen[0].size(), 9u);  // the script's 3 rounds of all_reduce, broadcast and barrier
  ASSERT_EQ(seen[1].size(), 9u);
  for (std::size_t k = 0; k < 9; ++k)
    EXPECT_EQ(std::tie(seen[0][k].group, seen[0][k].seq, seen[0][k].operation),
              std::tie(seen[1][k].group, seen[1][k].seq, seen[1][k].operation));
  const nnprof::RankMergeResult merged = nnprof::merge_rank_profiles(files, path("run.job.nnprof"));
  EXPECT_EQ(merged.ranks_merged, 2u);
  EXPECT_EQ(merged.collectives, 9u);
  const nnprof::RankAnalysis a = nnprof::analyze_ranks(nnprof::Profile::load(path("run.job.nnprof")));
  EXPECT_EQ(a.collectives.size(), 9u);
  EXPECT_EQ(a.incomplete_collectives, 0u);
}
#endif

}  // namespace
