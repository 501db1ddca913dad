// Recording one rank of a distributed job (issue 24, part 1 and 3): the launchers' variables,
// the output path pattern, the clock offset from round trips, the rank tables of the store,
// and a snapshot's RankInfo from the environment.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <map>
#include <string>

#include "nnprof/error.hpp"
#include "nnprof/profiler.hpp"
#include "nnprof/rank_recording.hpp"
#include "nnprof/scope.hpp"
#include "test_directory.hpp"

namespace {

using Env = std::map<std::string, std::string, std::less<>>;

nnprof::RankEnvironment read(const Env& env) {
  return nnprof::read_rank_environment([&](std::string_view name) -> std::optional<std::string> {
    const auto it = env.find(name);
    if (it == env.end()) return std::nullopt;
    return it->second;
  });
}

std::string joined(const std::vector<std::string>& problems) {
  std::string all;
  for (const auto& p : problems) all += p + "\n";
  return all;
}

TEST(RankEnvironment, NoLauncherIsNoRank) {
  const auto env = read({{"HOME", "/root"}});
  EXPECT_FALSE(env.rank);
  EXPECT_TRUE(env.problems.empty());
}

TEST(RankEnvironment, EachLauncher) {
  struct Case {
    Env env;
    std::int32_t rank, size, local;
    const char* launcher;
  };
  const Case cases[] = {
      {{{"OMPI_COMM_WORLD_RANK", "3"}, {"OMPI_COMM_WORLD_SIZE", "4"}, {"OMPI_COMM_WORLD_LOCAL_RANK", "1"}}, 3, 4, 1,
       "mpirun"},
      {{{"PMI_RANK", "5"}, {"PMI_SIZE", "8"}}, 5, 8, -1, "pmi"},
      {{{"RANK", "1"}, {"WORLD_SIZE", "2"}, {"LOCAL_RANK", "1"}, {"TORCHELASTIC_RUN_ID", "x"}}, 1, 2, 1, "torchrun"},
      {{{"RANK", "0"}, {"WORLD_SIZE", "2"}}, 0, 2, -1, "env"},
      {{{"SLURM_PROCID", "7"}, {"SLURM_NTASKS", "16"}, {"SLURM_LOCALID", "3"}}, 7, 16, 3, "slurm"},
  };
  for (const Case& c : cases) {
    const auto env = read(c.env);
    ASSERT_TRUE(env.rank) << c.launcher;
    EXPECT_EQ(env.rank->rank, c.rank) << c.launcher;
    EXPECT_EQ(env.rank->world_size, c.size) << c.launcher;
    EXPECT_EQ(env.rank->local_rank, c.local) << c.launcher;
    EXPECT_EQ(env.rank->launcher, c.launcher);
    EXPECT_TRUE(env.problems.empty()) << joined(env.problems);
  }
}

TEST(RankEnvironment, MpirunTakesPrecedenceAndAConflictIsNamed) {
  const auto env = read({{"OMPI_COMM_WORLD_RANK", "2"}, {"OMPI_COMM_WORLD_SIZE", "4"}, {"RANK", "1"}, {"WORLD_SIZE", "4"}});
  ASSERT_TRUE(env.rank);
  EXPECT_EQ(env.rank->rank, 2);
  EXPECT_EQ(env.rank->launcher, "mpirun");
  ASSERT_EQ(env.problems.size(), 1u);
  EXPECT_NE(env.problems[0].find("RANK=1"), std::string::npos) << env.problems[0];
  EXPECT_NE(env.problems[0].find("OMPI_COMM_WORLD_RANK=2"), std::string::npos) << env.problems[0];
  EXPECT_NE(env.problems[0].find("recorded as rank 2 of 4"), std::string::npos) << env.problems[0];
}

TEST(RankEnvironment, SlurmUnderTorchrunIsNoConflict) {
  // srun starts one torchrun per node: SLURM_PROCID counts nodes, RANK counts ranks.
  const auto env = read({{"RANK", "5"}, {"WORLD_SIZE", "8"}, {"SLURM_PROCID", "1"}, {"SLURM_NTASKS", "2"}});
  ASSERT_TRUE(env.rank);
  EXPECT_EQ(env.rank->rank, 5);
  EXPECT_TRUE(env.problems.empty()) << joined(env.problems);
}

TEST(RankEnvironment, GarbageIsIgnoredWithADiagnostic) {
  {
    const auto env = read({{"RANK", "one"}, {"WORLD_SIZE", "2"}});
    EXPECT_FALSE(env.rank);
    const std::string all = joined(env.problems);
    EXPECT_NE(all.find("RANK='one' is not a whole number"), std::string::npos) << all;
    EXPECT_NE(all.find("WORLD_SIZE is set but RANK is not"), std::string::npos) << all;
  }
  for (const char* bad : {"", "-1", "2x", "99999999999", " 1"}) {
    const auto env = read({{"OMPI_COMM_WORLD_RANK", bad}, {"OMPI_COMM_WORLD_SIZE", "4"}});
    EXPECT_FALSE(env.rank) << bad;
    EXPECT_FALSE(env.problems.empty()) << bad;
  }
  {
    const auto env = read({{"RANK", "4"}, {"WORLD_SIZE", "4"}});
    EXPECT_FALSE(env.rank);
    EXPECT_NE(joined(env.problems).find("RANK=4 is not below WORLD_SIZE=4"), std::string::npos);
  }
  {
    const auto env = read({{"RANK", "1"}, {"WORLD_SIZE", "0"}});
    EXPECT_FALSE(env.rank);
  }
  {
    // A bad local rank loses only the local rank.
    const auto env = read({{"RANK", "1"}, {"WORLD_SIZE", "2"}, {"LOCAL_RANK", "7"}});
    ASSERT_TRUE(env.rank);
    EXPECT_EQ(env.rank->local_rank, -1);
    EXPECT_NE(joined(env.problems).find("LOCAL_RANK=7 is not below WORLD_SIZE=2"), std::string::npos);
  }
  {
    // A garbage value of the first launcher lets the next one speak.
    const auto env = read({{"OMPI_COMM_WORLD_RANK", "x"}, {"OMPI_COMM_WORLD_SIZE", "4"}, {"PMI_RANK", "3"},
                           {"PMI_SIZE", "4"}});
    ASSERT_TRUE(env.rank);
    EXPECT_EQ(env.rank->rank, 3);
    EXPECT_EQ(env.rank->launcher, "pmi");
  }
}

TEST(RankPattern, Expands) {
  nnprof::RankInfo r;
  r.rank = 3;
  r.world_size = 4;
  r.local_rank = 1;
  EXPECT_EQ(nnprof::expand_rank_pattern("nnprof-record.rank{rank}.nnprof", r), "nnprof-record.rank3.nnprof");
  EXPECT_EQ(nnprof::expand_rank_pattern("run/{rank}-of-{world_size}.l{local_rank}.nnprof", r), "run/3-of-4.l1.nnprof");
  EXPECT_EQ(nnprof::expand_rank_pattern("a{{rank}}b.nnprof", r), "a{rank}b.nnprof");
  EXPECT_EQ(nnprof::expand_rank_pattern("plain.nnprof", r), "plain.nnprof");
  EXPECT_EQ(nnprof::expand_rank_pattern("p.rank{rank}.nnprof", std::nullopt), "p.ranknone.nnprof");
  r.local_rank = -1;
  EXPECT_EQ(nnprof::expand_rank_pattern("{local_rank}", r), "none");
  EXPECT_TRUE(nnprof::is_rank_pattern("x{rank}"));
  EXPECT_FALSE(nnprof::is_rank_pattern("x{{rank}}"));
  EXPECT_FALSE(nnprof::is_rank_pattern("x.nnprof"));
}

TEST(RankPattern, RefusesMalformed) {
  for (const char* bad : {"p{rnk}.nnprof", "p{rank.nnprof", "p}.nnprof", "{}"}) {
    try {
      (void)nnprof::expand_rank_pattern(bad, std::nullopt);
      ADD_FAILURE() << bad << " was accepted";
    } catch (const nnprof::Error& e) {
      EXPECT_NE(std::string(e.what()).find("output pattern"), std::string::npos) << e.what();
    }
    EXPECT_THROW((void)nnprof::is_rank_pattern(bad), nnprof::Error) << bad;
  }
}

TEST(ClockOffset, ShortestRoundTripWins) {
  // Rank 0's clock is 5 ms behind this one: t_local = t0 + 5'000'000.
  const std::int64_t offset = 5'000'000;
  auto trip = [&](std::int64_t start, std::int64_t out_ns, std::int64_t back_ns) {
    nnprof::ClockRoundTrip t;
    t.t1 = start;
    t.t2 = start + out_ns - offset;
    t.t3 = t.t2 + 100;
    t.t4 = t.t3 + offset + back_ns;
    return t;
  };
  const std::vector<nnprof::ClockRoundTrip> trips = {trip(0, 40'000, 900'000), trip(1'000'000, 3'000, 3'400),
                                                      trip(2'000'000, 500'000, 20'000)};
  const auto best = nnprof::best_clock_offset(trips);
  ASSERT_TRUE(best);
  EXPECT_EQ(best->round_trip_ns, 6'400);
  EXPECT_DOUBLE_EQ(best->offset_ns, offset + (3'400 - 3'000) / 2.0);  // the legs' difference halved is the error
  EXPECT_EQ(best->exchanges, 3u);
  EXPECT_LE(std::abs(best->offset_ns - offset), best->round_trip_ns / 2.0);
  // An impossible trip (answer before question) is never the shortest.
  const std::vector<nnprof::ClockRoundTrip> broken = {{10, 0, 0, 5}};
  EXPECT_FALSE(nnprof::best_clock_offset(broken));
  EXPECT_FALSE(nnprof::best_clock_offset({}));
}

TEST(ClockOffset, DriftFromTheTwoEnds) {
  nnprof::ClockOffsetSample start{1'000.0, 10'000'000, 4'000, 64};
  nnprof::ClockOffsetSample end{1'000.0 + 20'000.0, 10'000'000 + 1'000'000'000, 10'000, 64};  // +20 us over 1 s
  const nnprof::ClockAlignment a = nnprof::align_clock(start, end, "mpi-ping-pong");
  EXPECT_TRUE(a.aligned);
  EXPECT_EQ(a.method, "mpi-ping-pong");
  EXPECT_EQ(a.reference_ns, 10'000'000);
  EXPECT_DOUBLE_EQ(a.offset_ns, 1'000.0);
  EXPECT_NEAR(a.drift_ppb, 20'000.0, 1e-9);  // 20 us per s = 20000 ppb
  EXPECT_DOUBLE_EQ(a.residual_ns, 5'000.0);  // half the longer of the two best round trips
  EXPECT_EQ(a.exchanges, 128u);
  const nnprof::ClockAlignment only_start = nnprof::align_clock(start, std::nullopt, "tcp-rendezvous");
  EXPECT_DOUBLE_EQ(only_start.drift_ppb, 0.0);
  EXPECT_DOUBLE_EQ(only_start.residual_ns, 2'000.0);
}

TEST(ClockOffset, NoDriftWhereTheErrorsExplainTheChange) {
  // 1.5 us apart after 3 ms, with errors of 0.8 and 0.4 us: no drift, the tighter offset.
  nnprof::ClockOffsetSample start{24'298'679.5, 5'000'000, 1'600, 64};
  nnprof::ClockOffsetSample end{24'298'678.0, 8'000'000, 800, 64};
  const nnprof::ClockAlignment a = nnprof::align_clock(start, end, "mpi-ping-pong");
  EXPECT_DOUBLE_EQ(a.drift_ppb, 0.0);
  EXPECT_DOUBLE_EQ(a.offset_ns, 24'298'678.0);
  EXPECT_EQ(a.reference_ns, 8'000'000);
  EXPECT_DOUBLE_EQ(a.residual_ns, 400.0);
  EXPECT_EQ(a.exchanges, 128u);
}

TEST(ClockOffset, CollectivesNarrowTheRoundTripsInterval) {
  // True offset 1000 ns. Rank 0 enters a barrier at 500 and leaves at 800 (its clock); this
  // rank enters at 1700 and leaves at 1750 (its clock: 700 and 750 on rank 0's).
  const nnprof::ClockBound b = nnprof::collective_clock_bound(1'700, 1'750, 500, 800);
  EXPECT_DOUBLE_EQ(b.lower_ns, 900.0);   // 1700 - 800
  EXPECT_DOUBLE_EQ(b.upper_ns, 1'250.0);  // 1750 - 500
  EXPECT_EQ(b.local_ns, 1'725);
  nnprof::ClockAlignment clock{true, "mpi-ping-pong", 0, 1'100.0, 0.0, 300.0, 128};  // [800, 1400]
  bool narrowed = false;
  const nnprof::ClockAlignment refined = nnprof::refine_clock(clock, std::vector{b}, &narrowed);
  EXPECT_TRUE(narrowed);
  EXPECT_EQ(refined.method, "mpi-ping-pong+collectives");
  EXPECT_DOUBLE_EQ(refined.offset_ns, 1'075.0);  // middle of [900, 1250]
  EXPECT_DOUBLE_EQ(refined.residual_ns, 175.0);
  EXPECT_LE(std::abs(refined.offset_ns - 1'000.0), refined.residual_ns);
  // A bound that contradicts the round trips changes nothing.
  const nnprof::ClockBound wrong{5'000.0, 6'000.0, 0};
  EXPECT_EQ(nnprof::refine_clock(clock, std::vector{wrong}, &narrowed), clock);
  EXPECT_FALSE(narrowed);
  // Nor does one looser than the round trips.
  const nnprof::ClockBound loose{0.0, 10'000.0, 0};
  EXPECT_EQ(nnprof::refine_clock(clock, std::vector{loose}), clock);
  // The drift moves each bound to the reference time: +1 us per ms, a bound 1 ms later.
  nnprof::ClockAlignment drifting = clock;
  drifting.drift_ppb = 1e6;
  const nnprof::ClockBound later{1'900.0, 2'250.0, 1'000'000};
  EXPECT_DOUBLE_EQ(nnprof::refine_clock(drifting, std::vector{later}).offset_ns, 1'075.0);
}

TEST(ClockOffset, InjectedOffsetIsReadFromTheTestHook) {
  ::setenv("NNPROF_TEST_CLOCK_OFFSET_NS", "-12345", 1);
  EXPECT_EQ(nnprof::injected_clock_offset_ns(), -12345);
  ::setenv("NNPROF_TEST_CLOCK_OFFSET_NS", "12x", 1);
  EXPECT_EQ(nnprof::injected_clock_offset_ns(), 0);
  ::unsetenv("NNPROF_TEST_CLOCK_OFFSET_NS");
  EXPECT_EQ(nnprof::injected_clock_offset_ns(), 0);
}

class RankStore : public nnprof::testing::TestDirectory {
 protected:
  RankStore() : TestDirectory("rank_store") {}
};

nnprof::Profile small_profile() {
  nnprof::Profiler profiler;
  {
    nnprof::ProfileGuard g(profiler, "step");
  }
  return profiler.snapshot();
}

TEST_F(RankStore, RanksAndThreadRanksRoundTrip) {
  nnprof::Profile p = small_profile();
  ASSERT_FALSE(p.threads.empty());
  nnprof::RankInfo r0;
  r0.rank = 0;
  r0.world_size = 2;
  r0.local_rank = 0;
  r0.launcher = "mpirun";
  r0.hostname = "node-a";
  r0.pid = 4242;
  nnprof::RankInfo r1 = r0;
  r1.rank = 1;
  r1.local_rank = -1;
  r1.hostname = "node-b";
  r1.clock = {true, "mpi-ping-pong", 123'456'789, -4'567.25, 12.5, 830.5, 128};
  p.ranks = {r0, r1};
  p.threads.back().rank = 1;
  p.save(path("ranks.nnprof"));
  const nnprof::Profile back = nnprof::Profile::load(path("ranks.nnprof"));
  EXPECT_EQ(back.ranks, p.ranks);
  EXPECT_EQ(back.threads, p.threads);
}

TEST_F(RankStore, AProcessThatIsNoRankHasNone) {
  const nnprof::Profile p = small_profile();
  p.save(path("none.nnprof"));
  EXPECT_TRUE(nnprof::Profile::load(path("none.nnprof")).ranks.empty());
}

TEST_F(RankStore, AThreadOfAMissingRankIsRefused) {
  nnprof::Profile p = small_profile();
  p.threads.front().rank = 1;
  EXPECT_THROW(p.save(path("bad.nnprof")), nnprof::Error);
  p.ranks.resize(1);
  p.ranks[0].world_size = 1;
  p.ranks[0].rank = 0;
  EXPECT_THROW(p.save(path("bad.nnprof")), nnprof::Error);
}

// The environment of this test process stands for a launcher's.
class SnapshotRank : public ::testing::Test {
 protected:
  void TearDown() override {
    for (const char* v : {"OMPI_COMM_WORLD_RANK", "OMPI_COMM_WORLD_SIZE", "OMPI_COMM_WORLD_LOCAL_RANK", "RANK", "WORLD_SIZE"})
      ::unsetenv(v);
  }
};

TEST_F(SnapshotRank, CarriesTheLaunchersRankAndTheMeasuredClock) {
  ::setenv("OMPI_COMM_WORLD_RANK", "2", 1);
  ::setenv("OMPI_COMM_WORLD_SIZE", "4", 1);
  ::setenv("OMPI_COMM_WORLD_LOCAL_RANK", "2", 1);
  nnprof::Profiler profiler;
  nnprof::ClockAlignment clock{true, "mpi-ping-pong", 1'000, 2'500.0, 3.0, 40.0, 128};
  profiler.set_clock_alignment(clock);
  const nnprof::Profile p = profiler.snapshot();
  ASSERT_EQ(p.ranks.size(), 1u);
  EXPECT_EQ(p.ranks[0].rank, 2);
  EXPECT_EQ(p.ranks[0].world_size, 4);
  EXPECT_EQ(p.ranks[0].local_rank, 2);
  EXPECT_EQ(p.ranks[0].launcher, "mpirun");
  EXPECT_EQ(p.ranks[0].hostname, p.meta.hostname);
  EXPECT_EQ(p.ranks[0].pid, p.meta.pid);
  EXPECT_EQ(p.ranks[0].clock, clock);
  EXPECT_EQ(profiler.start_monotonic_ns(), p.meta.clock.monotonic_origin_ns);
}

TEST_F(SnapshotRank, UnalignedRankAndGarbageAreDiagnosed) {
  ::setenv("RANK", "1", 1);
  ::setenv("WORLD_SIZE", "2", 1);
  ::setenv("OMPI_COMM_WORLD_RANK", "zero", 1);
  ::setenv("OMPI_COMM_WORLD_SIZE", "2", 1);
  nnprof::Profiler profiler;
  const nnprof::Profile p = profiler.snapshot();
  ASSERT_EQ(p.ranks.size(), 1u);
  EXPECT_EQ(p.ranks[0].rank, 1);
  EXPECT_FALSE(p.ranks[0].clock.aligned);
  std::string said;
  for (const auto& d : p.diagnostics)
    if (d.kind == nnprof::DiagnosticKind::Distributed) said += d.message + "\n";
  EXPECT_NE(said.find("OMPI_COMM_WORLD_RANK='zero'"), std::string::npos) << said;
  EXPECT_NE(said.find("rank 1's clock was not aligned"), std::string::npos) << said;
}

}  // namespace
