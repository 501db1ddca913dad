// Bottleneck analysis and the advisor: each kind triggered by a program built to trigger it
// and not by one built not to, thresholds as options, and speedups that follow Amdahl's law.
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <string>

#include "analysis/advisor.hpp"
#include "analysis/bottlenecks.hpp"
#include "cpu_profile_fixture.hpp"
#include "render/sentence_markup.hpp"
#include "nnprof/analysis.hpp"
#include "nnprof/profiler.hpp"
#include "nnprof/scope.hpp"
#include "sample_profiles.hpp"

namespace {

using nnprof::Bottleneck;
using nnprof::BottleneckType;
using nnprof::Profile;

void spin_for(std::chrono::microseconds d) {
  const auto end = std::chrono::steady_clock::now() + d;
  while (std::chrono::steady_clock::now() < end) {
  }
}

std::size_t count_of(const std::vector<Bottleneck>& found, BottleneckType type, const std::string& scope = {}) {
  return static_cast<std::size_t>(std::count_if(found.begin(), found.end(), [&](const Bottleneck& b) {
    return b.type == type && (scope.empty() || b.scope == scope);
  }));
}

nnprof::MachinePeaks peaks() { return nnprof::testing::synthetic_peaks(10e9, 20e9, 10e9, 15e9, 2); }

// One step of "train": a slow "attention" (~60% of the time), ten "mlp" calls, cheap ones.
Profile slow_operation_program(bool slow) {
  nnprof::Profiler p;
  for (int step = 0; step < 5; ++step) {
    NNPROF_SCOPE_IN(p, "train");
    {
      NNPROF_SCOPE_IN(p, "attention");
      spin_for(std::chrono::microseconds(slow ? 6000 : 300));
    }
    for (int i = 0; i < 10; ++i) {
      NNPROF_SCOPE_IN(p, "mlp");
      spin_for(std::chrono::microseconds(300));
    }
  }
  return p.snapshot();
}

TEST(Bottlenecks, SlowOperationIsTheScopeWhoseOwnTimePassesTwentyPercent) {
  const auto found = nnprof::analyze_bottlenecks(slow_operation_program(true));
  EXPECT_EQ(count_of(found, BottleneckType::SlowOperation, "attention"), 1u);
  // (That the wrapper "train" is not flagged is checked on balanced_profile: here a preemption
  // between its child scopes on a loaded machine would count as its own time.)
  const auto it = std::find_if(found.begin(), found.end(), [](const Bottleneck& b) { return b.scope == "attention"; });
  ASSERT_NE(it, found.end());
  EXPECT_GT(it->value, 0.4);
  EXPECT_DOUBLE_EQ(it->threshold, 0.20);
  EXPECT_NE(it->description.find("of the instrumented time (threshold 20.0%)"), std::string::npos) << it->description;
  EXPECT_FALSE(it->suggestion.empty());
}

// The program built not to trigger the time kinds, written down exactly rather than recorded:
// a recorded one on a loaded 2-core machine can have one scope stretched past any margin.
// "train" (100 ms, 10 calls) holds ten scopes of 9.5 ms each (100 calls each); 5 ms is its own.
Profile balanced_profile() {
  Profile p;
  p.strings = {"train"};
  p.call_tree.resize(1);
  auto add = [&](std::uint32_t parent, nnprof::StringId name, std::uint64_t total, std::uint64_t self,
                 std::uint64_t calls) {
    nnprof::CallTreeNode n;
    n.id = static_cast<std::uint32_t>(p.call_tree.size());
    n.parent = parent;
    n.name = name;
    n.depth = p.call_tree[parent].depth + 1;
    n.time.count = calls;
    n.time.sum_ns = total;
    n.time.mean_ns = static_cast<double>(total) / static_cast<double>(calls);
    n.self_ns = self;
    n.thread_count = 1;
    p.call_tree[parent].children.push_back(n.id);
    p.call_tree.push_back(n);
    nnprof::ScopeStats s;
    s.name = name;
    s.total_ns = total;
    s.self_ns = self;
    s.time = n.time;
    s.thread_count = 1;
    p.scopes.push_back(s);
    return n.id;
  };
  const std::uint32_t train = add(0, 0, 100'000'000, 5'000'000, 10);
  for (int i = 0; i < 10; ++i) {
    p.strings.push_back(std::string(1, static_cast<char>('a' + i)));
    add(train, static_cast<nnprof::StringId>(i + 1), 9'500'000, 9'500'000, 100);
  }
  p.threads.push_back({0, 1, "main", false, 1010, 100'000'000});
  return p;
}

TEST(Bottlenecks, NoTimeBottleneckWhenTheTimeIsSpreadOutOverRarelyCalledScopes) {
  const Profile p = balanced_profile();
  ASSERT_EQ(p.instrumented_ns(), 100'000'000u);
  EXPECT_TRUE(nnprof::analyze_bottlenecks(p).empty());
  nnprof::BottleneckThresholds t;
  t.slow_operation_share = 0.09;  // each scope holds 9.5%
  EXPECT_EQ(count_of(nnprof::analyze_bottlenecks(p, t), BottleneckType::SlowOperation), 10u);
}

TEST(Bottlenecks, HighCallCountPastTenThousandCallsOnly) {
  nnprof::Profiler p;
  for (int i = 0; i < 12'000; ++i) {
    NNPROF_SCOPE_IN(p, "tokenize");
  }
  for (int i = 0; i < 9'000; ++i) {
    NNPROF_SCOPE_IN(p, "embed");
  }
  const auto found = p.analyze_bottlenecks();
  EXPECT_EQ(count_of(found, BottleneckType::HighCallCount, "tokenize"), 1u);
  EXPECT_EQ(count_of(found, BottleneckType::HighCallCount, "embed"), 0u);
  nnprof::BottleneckThresholds t;
  t.high_call_count = 5'000;  // configurable
  EXPECT_EQ(count_of(p.analyze_bottlenecks(t), BottleneckType::HighCallCount), 2u);
}

TEST(Bottlenecks, LowThroughputBelowOneGflopPerSecond) {
  nnprof::Profiler p;
  {
    NNPROF_SCOPE_FLOPS_IN(p, "scalar_loop", 1e6, 0);  // 1 MFLOP in >= 5 ms: < 0.2 GFLOP/s
    spin_for(std::chrono::microseconds(5000));
  }
  {
    NNPROF_SCOPE_FLOPS_IN(p, "tuned_gemm", 1e12, 0);  // declared 1 TFLOP in ~1 ms: far above 1 GFLOP/s
    spin_for(std::chrono::microseconds(1000));
  }
  const auto found = p.analyze_bottlenecks();
  EXPECT_EQ(count_of(found, BottleneckType::LowThroughput, "scalar_loop"), 1u);
  EXPECT_EQ(count_of(found, BottleneckType::LowThroughput, "tuned_gemm"), 0u);
  const auto it = std::find_if(found.begin(), found.end(),
                               [](const Bottleneck& b) { return b.type == BottleneckType::LowThroughput; });
  ASSERT_NE(it, found.end());
  EXPECT_EQ(it->severity, nnprof::BottleneckSeverity::High);  // below half the threshold
  EXPECT_NE(it->description.find("threshold 1 GFLOP/s"), std::string::npos) << it->description;
}

TEST(Bottlenecks, BelowRooflineWhenFarFromTheAttainableRoof) {
  nnprof::Profiler p;
  {
    // 1 FLOP/byte, on the one-core ridge (roof 10 GFLOP/s): 10 MFLOP in >= 20 ms is at most
    // 0.5 GFLOP/s, 5% of the roof.
    NNPROF_SCOPE_FLOPS_IN(p, "far", 1e7, 10'000'000);
    spin_for(std::chrono::microseconds(20'000));
  }
  {
    // 0.16 GFLOP over 0.16 GB in ~20 ms: ~8 GFLOP/s, ~80% of the roof.
    NNPROF_SCOPE_FLOPS_IN(p, "near", 1.6e8, 160'000'000);
    spin_for(std::chrono::microseconds(20'000));
  }
  Profile profile = p.snapshot();
  // A loaded machine can stretch the 20 ms spin of "near" far enough to leave its roof; pin its
  // time to what the program asked for, so that only "far" can be far.
  for (nnprof::ScopeStats& s : profile.scopes)
    if (profile.str(s.name) == "near") s.total_ns = s.self_ns = 20'000'000;
  profile.machine = {};  // snapshot() takes them from the `nnprof machine` cache when there is one
  EXPECT_EQ(count_of(nnprof::analyze_bottlenecks(profile), BottleneckType::BelowRoofline), 0u);  // no peaks: no roofline
  profile.machine = peaks();
  const auto found = nnprof::analyze_bottlenecks(profile);
  EXPECT_EQ(count_of(found, BottleneckType::BelowRoofline, "far"), 1u);
  EXPECT_EQ(count_of(found, BottleneckType::BelowRoofline, "near"), 0u);
}

TEST(Bottlenecks, MemoryKindsComeFromHeapTrackingWithTheirThresholds) {
  const Profile p = nnprof::testing::heap_profile();
  const auto found = nnprof::analyze_bottlenecks(p);
  EXPECT_GE(count_of(found, BottleneckType::MemoryHotspot), 1u);
  EXPECT_EQ(count_of(found, BottleneckType::MemoryLeak), 1u);
  nnprof::BottleneckThresholds t;
  t.memory_hotspot_share = 0.99;
  t.memory_leak_share = 0.99;
  const auto none = nnprof::analyze_bottlenecks(p, t);
  EXPECT_EQ(count_of(none, BottleneckType::MemoryHotspot), 0u);
  EXPECT_EQ(count_of(none, BottleneckType::MemoryLeak), 0u);
  // A profile with neither heap tracking nor memory counters has no memory findings at all
  // (the counters' findings: test_counter_findings.cpp).
  EXPECT_EQ(count_of(nnprof::analyze_bottlenecks(slow_operation_program(true)), BottleneckType::MemoryLeak), 0u);
}

TEST(Bottlenecks, SamplingFindingsWhenSamplesExist) {
  const Profile p = nnprof::testing::cpu_profile();
  nnprof::BottleneckThresholds t;
  t.cpu_hotspot_share = 0.25;
  t.cpu_min_samples = 10;  // the fixture has 14
  const auto found = nnprof::analyze_bottlenecks(p, t);
  EXPECT_GE(count_of(found, BottleneckType::CpuHotspot), 1u);
  t.scope_hotspot_share = 0.3;
  t.scope_hotspot_min_share = 0.1;
  const auto in_scopes = nnprof::analyze_bottlenecks(p, t);
  EXPECT_GE(count_of(in_scopes, BottleneckType::ScopeCpuHotspot), 1u);
  // matmul dominates forward and, through it, train_step: reported once, at the innermost scope.
  EXPECT_EQ(count_of(in_scopes, BottleneckType::ScopeCpuHotspot, "forward"), 1u);
  EXPECT_EQ(count_of(in_scopes, BottleneckType::ScopeCpuHotspot, "train_step"), 0u);
  for (const Bottleneck& b : in_scopes) {
    if (b.type == BottleneckType::ScopeCpuHotspot) {
      EXPECT_GT(b.value, 0.3);
    }
  }
  t.scope_hotspot_share = 1.0;  // no function can pass 100%
  EXPECT_EQ(count_of(nnprof::analyze_bottlenecks(p, t), BottleneckType::ScopeCpuHotspot), 0u);
  EXPECT_EQ(count_of(nnprof::analyze_bottlenecks(slow_operation_program(true)), BottleneckType::CpuHotspot), 0u);
}

TEST(Bottlenecks, MostSevereFirstAndEveryOneHasNumbersAndAFix) {
  const auto found = nnprof::analyze_bottlenecks(nnprof::testing::heap_profile());
  ASSERT_FALSE(found.empty());
  for (std::size_t i = 1; i < found.size(); ++i) EXPECT_GE(found[i - 1].severity, found[i].severity);
  for (const Bottleneck& b : found) {
    EXPECT_FALSE(b.description.empty());
    EXPECT_FALSE(b.suggestion.empty());
    EXPECT_STRNE(nnprof::to_string(b.type), "unknown");
  }
}

// ---- advisor --------------------------------------------------------------------------

// Hand-built: "step" (100 ms) holds "gemm" (60 ms, compute-bound at 25% of its roof) and
// "norm" (30 ms, memory-bound at 50% of its roof); 10 ms of the step is its own.
Profile advisor_profile() {
  using nnprof::ScopeStats;
  Profile p;
  p.strings = {"step", "gemm", "norm"};
  p.machine = peaks();  // one core: 10 GFLOP/s, 10 GB/s, ridge 1
  p.call_tree.resize(4);
  p.call_tree[0].children = {1};
  p.call_tree[1] = {1, 0, 0, 1, {2, 3}, {}, 10'000'000, 1, {}, {}, 0.0, 0};
  p.call_tree[1].time.count = 1;
  p.call_tree[1].time.sum_ns = 100'000'000;
  p.call_tree[2] = {2, 1, 1, 2, {}, {}, 60'000'000, 1, {}, {}, 0.15e9, 15'000'000};
  p.call_tree[2].time.count = 1;
  p.call_tree[2].time.sum_ns = 60'000'000;
  p.call_tree[3] = {3, 1, 2, 2, {}, {}, 30'000'000, 1, {}, {}, 0.015e9, 60'000'000};
  p.call_tree[3].time.count = 1;
  p.call_tree[3].time.sum_ns = 30'000'000;
  p.threads.push_back({0, 1, "main", false, 3, 100'000'000});
  auto scope = [](nnprof::StringId name, std::uint64_t total, std::uint64_t self, double flops, std::uint64_t bytes) {
    ScopeStats s;
    s.name = name;
    s.total_ns = total;
    s.self_ns = self;
    s.time.count = 1;
    s.time.sum_ns = total;
    s.time.mean_ns = static_cast<double>(total);
    s.thread_count = 1;
    s.flops = flops;
    s.bytes = bytes;
    return s;
  };
  // gemm: 0.15 GFLOP / 15 MB = 10 FLOP/byte (compute-bound), 2.5 GFLOP/s = 25% of 10 GFLOP/s.
  // norm: 15 MFLOP / 60 MB = 0.25 FLOP/byte (memory-bound, roof 2.5 GFLOP/s), 0.5 GFLOP/s = 20%.
  p.scopes = {scope(0, 100'000'000, 10'000'000, 0.165e9, 75'000'000), scope(1, 60'000'000, 60'000'000, 0.15e9, 15'000'000),
              scope(2, 30'000'000, 30'000'000, 0.015e9, 60'000'000)};
  return p;
}

TEST(Advisor, ExpectedSpeedupsFollowAmdahlFromTheRooflinePosition) {
  const Profile p = advisor_profile();
  ASSERT_EQ(p.instrumented_ns(), 100'000'000u);
  nnprof::AdvisorOptions o;  // a tuned kernel reaches 80% of its roof
  const auto recs = nnprof::recommend(p, o);
  const auto find = [&](const std::string& scope) {
    return std::find_if(recs.begin(), recs.end(), [&](const nnprof::Recommendation& r) { return r.scope == scope; });
  };
  const auto gemm = find("gemm"), norm = find("norm");
  ASSERT_NE(gemm, recs.end());
  ASSERT_NE(norm, recs.end());
  // gemm: p = 0.6, s = 0.8 / 0.25 = 3.2; whole run 1 / (0.4 + 0.6 / 3.2) = 1.7021...
  EXPECT_DOUBLE_EQ(gemm->time_share, 0.6);
  EXPECT_DOUBLE_EQ(gemm->part_speedup, 3.2);
  EXPECT_NEAR(gemm->expected_speedup, 1.0 / (0.4 + 0.6 / 3.2), 1e-12);
  EXPECT_NEAR(gemm->max_speedup, 1.0 / 0.4, 1e-12);
  // norm: p = 0.3, s = 0.8 / 0.2 = 4; whole run 1 / (0.7 + 0.3 / 4) = 1.2903...
  EXPECT_DOUBLE_EQ(norm->part_speedup, 4.0);
  EXPECT_NEAR(norm->expected_speedup, nnprof::amdahl_speedup(0.3, 4.0), 1e-12);
  EXPECT_NEAR(norm->expected_speedup, 1.0 / (0.7 + 0.075), 1e-12);
  // Largest gain first; every recommendation says why and what to do.
  EXPECT_LT(gemm - recs.begin(), norm - recs.begin());
  for (const auto& r : recs) {
    EXPECT_FALSE(r.evidence.empty());
    EXPECT_FALSE(r.steps.empty());
    EXPECT_LE(r.expected_speedup, r.max_speedup);
  }
  EXPECT_NE(gemm->title.find("compute roof"), std::string::npos) << gemm->title;
  EXPECT_NE(norm->title.find("memory roof"), std::string::npos) << norm->title;
}

TEST(Advisor, AmdahlHelper) {
  EXPECT_DOUBLE_EQ(nnprof::amdahl_speedup(0.5, 2.0), 1.0 / 0.75);
  EXPECT_DOUBLE_EQ(nnprof::amdahl_speedup(1.0, 4.0), 4.0);
  EXPECT_DOUBLE_EQ(nnprof::amdahl_speedup(0.0, 10.0), 1.0);
  EXPECT_DOUBLE_EQ(nnprof::amdahl_speedup(0.3, 0.0), 0.0);  // unknown gain
}

TEST(Advisor, UnknownGainsGiveOnlyTheLimit) {
  const auto recs = nnprof::recommend(slow_operation_program(true));
  const auto it = std::find_if(recs.begin(), recs.end(), [](const auto& r) { return r.scope == "attention"; });
  ASSERT_NE(it, recs.end());
  EXPECT_EQ(it->part_speedup, 0.0);
  EXPECT_EQ(it->expected_speedup, 0.0);
  EXPECT_NEAR(it->max_speedup, 1.0 / (1.0 - it->time_share), 1e-9);
}

TEST(Advisor, NothingToRecommendForABalancedProgram) {
  EXPECT_TRUE(nnprof::recommend(balanced_profile()).empty());
}

}  // namespace
