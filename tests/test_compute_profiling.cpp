// Per-scope FLOPs and bytes on the recording path: the macros and calls that declare work,
// how it adds up in the model, the store, and the roofline place of each scope.
#include <gtest/gtest.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <thread>

#include "analysis/compute.hpp"
#include "nnprof/analysis.hpp"
#include "nnprof/flops.hpp"
#include "nnprof/profiler.hpp"
#include "nnprof/scope.hpp"
#include "sample_profiles.hpp"

namespace {

using nnprof::Profile;
using nnprof::ScopeStats;

// Peaks chosen so that the ridge points are round: one core 10 GFLOP/s over 10 GB/s (ridge 1),
// all cores 40 GFLOP/s over 20 GB/s (ridge 2).
nnprof::MachinePeaks test_peaks() { return nnprof::testing::synthetic_peaks(10e9, 40e9, 10e9, 20e9, 4); }

TEST(ComputeRecording, ScopeFlopsMacroStartWithFlopsAndAddFlopsDeclareWorkPerScope) {
  nnprof::Profiler p;
  for (int i = 0; i < 4; ++i) {
    NNPROF_SCOPE_IN(p, "step");
    {
      NNPROF_SCOPE_FLOPS_IN(p, "matmul", 2.0e6, 12'000);
    }
    p.start_with_flops("softmax", 5.0e3, 8'000);
    p.stop("softmax");
    p.add_flops(100.0, 16);  // declared in "step" itself
  }
  const Profile profile = p.snapshot();
  const ScopeStats* matmul = profile.find_scope("matmul");
  const ScopeStats* softmax = profile.find_scope("softmax");
  const ScopeStats* step = profile.find_scope("step");
  ASSERT_TRUE(matmul && softmax && step);
  EXPECT_DOUBLE_EQ(matmul->flops, 4 * 2.0e6);
  EXPECT_EQ(matmul->bytes, 4u * 12'000u);
  EXPECT_DOUBLE_EQ(softmax->flops, 4 * 5.0e3);
  EXPECT_EQ(softmax->bytes, 4u * 8'000u);
  // Inclusive: the step's own work plus everything inside it.
  EXPECT_DOUBLE_EQ(step->flops, 4 * (2.0e6 + 5.0e3 + 100.0));
  EXPECT_EQ(step->bytes, 4u * (12'000u + 8'000u + 16u));
  EXPECT_DOUBLE_EQ(step->arithmetic_intensity(), step->flops / static_cast<double>(step->bytes));
  EXPECT_NEAR(matmul->flops_per_second(), matmul->flops * 1e9 / static_cast<double>(matmul->total_ns), 1e-6);
  // The call tree keeps what was declared at each node (self), summing to the step's inclusive figure.
  double tree_flops = 0.0;
  for (const auto& n : profile.call_tree) tree_flops += n.flops;
  EXPECT_DOUBLE_EQ(tree_flops, step->flops);
}

TEST(ComputeRecording, GuardAddFlopsOnceShapesAreKnownAndOpCostHelpers) {
  nnprof::Profiler p;
  const nnprof::OpCost cost = nnprof::flops::matmul(64, 64, 64);
  {
    nnprof::ProfileGuard guard(p, "gemm");
    guard.add_flops(cost.flops, static_cast<std::uint64_t>(cost.bytes));
  }
  const auto s = p.stats("gemm");
  ASSERT_TRUE(s.has_value());
  EXPECT_DOUBLE_EQ(s->flops, 2.0 * 64 * 64 * 64);
  EXPECT_EQ(s->bytes, 3u * 64 * 64 * 4);
}

TEST(ComputeRecording, WorkAcrossThreadsAndOutsideAnyScope) {
  nnprof::Profiler p;
  auto work = [&] {
    for (int i = 0; i < 100; ++i) {
      NNPROF_SCOPE_FLOPS_IN(p, "kernel", 1000, 10);
    }
  };
  std::thread a(work), b(work);
  a.join();
  b.join();
  p.add_flops(7.0, 3);  // no scope open: the root keeps it
  const Profile profile = p.snapshot();
  const ScopeStats* k = profile.find_scope("kernel");
  ASSERT_NE(k, nullptr);
  EXPECT_DOUBLE_EQ(k->flops, 200 * 1000.0);
  EXPECT_EQ(k->bytes, 200u * 10u);
  EXPECT_EQ(k->thread_count, 2u);
  EXPECT_DOUBLE_EQ(profile.call_tree[0].flops, 7.0);
  EXPECT_EQ(profile.call_tree[0].bytes, 3u);
  const nnprof::analysis::WorkTotal total = nnprof::analysis::work_total(profile);
  EXPECT_DOUBLE_EQ(total.flops, 200 * 1000.0 + 7.0);
}

TEST(ComputeRecording, DisabledProfilerDeclaresNothing) {
  nnprof::Profiler p;
  p.set_enabled(false);
  {
    NNPROF_SCOPE_FLOPS_IN(p, "x", 1e9, 1);
  }
  p.add_flops(5.0);
  p.set_enabled(true);
  EXPECT_EQ(p.snapshot().find_scope("x"), nullptr);
}

TEST(ComputeRecording, TopByTimeNamesCallsTotalAndGflops) {
  nnprof::Profiler p;
  for (int i = 0; i < 3; ++i) {
    NNPROF_SCOPE_FLOPS_IN(p, "slow", 3e6, 1000);
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  {
    NNPROF_SCOPE_IN(p, "fast");
  }
  const auto top = p.top_by_time(1);
  ASSERT_EQ(top.size(), 1u);
  EXPECT_EQ(top[0].name, "slow");
  EXPECT_EQ(top[0].calls, 3u);
  EXPECT_GE(top[0].total, std::chrono::milliseconds(15));
  EXPECT_DOUBLE_EQ(top[0].flops, 9e6);
  EXPECT_NEAR(top[0].gflops_per_second, 9e6 / (static_cast<double>(top[0].total.count()) * 1e-9) / 1e9, 1e-12);
  EXPECT_EQ(p.top_by_time(10).size(), 2u);
}

TEST(ComputeRecording, FlopsAndMachinePeaksSurviveSaveAndLoad) {
  nnprof::Profiler p;
  {
    NNPROF_SCOPE_FLOPS_IN(p, "conv", 1.5e9, 3'000'000);
  }
  Profile profile = p.snapshot();
  profile.machine = test_peaks();
  const std::string path = (std::filesystem::temp_directory_path() / "nnprof_compute_roundtrip.nnprof").string();
  profile.save(path);
  const Profile loaded = Profile::load(path);
  std::filesystem::remove(path);
  EXPECT_EQ(loaded, profile);
  EXPECT_DOUBLE_EQ(loaded.find_scope("conv")->flops, 1.5e9);
  EXPECT_EQ(loaded.machine, test_peaks());
}

// A profile with one scope that did `flops` and `bytes` in `ns`.
Profile one_scope(double flops, std::uint64_t bytes, std::uint64_t ns) {
  Profile p;
  p.strings = {"op"};
  ScopeStats s;
  s.name = 0;
  s.total_ns = s.self_ns = ns;
  s.time.count = 1;
  s.time.sum_ns = ns;
  s.flops = flops;
  s.bytes = bytes;
  s.thread_count = 1;
  p.scopes.push_back(s);
  p.machine = test_peaks();
  return p;
}

TEST(Roofline, ASyntheticMemoryBoundScopeIsClassifiedAgainstTheBandwidthRoof) {
  // 0.25 FLOP/byte, below the one-core ridge of 1: the roof there is 10 GB/s × 0.25 = 2.5 GFLOP/s.
  // 1 GFLOP in 1 s = 1 GFLOP/s = 40% of it.
  const Profile p = one_scope(1e9, 4'000'000'000, 1'000'000'000);
  const auto scopes = nnprof::analysis::compute_scopes(p);
  ASSERT_EQ(scopes.size(), 1u);
  ASSERT_TRUE(scopes[0].roofline.has_value());
  const nnprof::RooflinePoint& r = *scopes[0].roofline;
  EXPECT_EQ(r.bound, nnprof::RooflineBound::Memory);
  EXPECT_TRUE(scopes[0].one_core);
  EXPECT_DOUBLE_EQ(r.intensity, 0.25);
  EXPECT_DOUBLE_EQ(r.attainable, 2.5e9);
  EXPECT_DOUBLE_EQ(r.fraction, 0.4);
}

TEST(Roofline, ASyntheticComputeBoundScopeIsClassifiedAgainstTheFlopRoof) {
  // 8 FLOP/byte, above the ridge: the roof is the one-core 10 GFLOP/s; 8 GFLOP in 1 s = 80%.
  const Profile p = one_scope(8e9, 1'000'000'000, 1'000'000'000);
  const auto scopes = nnprof::analysis::compute_scopes(p);
  ASSERT_TRUE(scopes.at(0).roofline.has_value());
  EXPECT_EQ(scopes[0].roofline->bound, nnprof::RooflineBound::Compute);
  EXPECT_DOUBLE_EQ(scopes[0].roofline->attainable, 10e9);
  EXPECT_DOUBLE_EQ(scopes[0].roofline->fraction, 0.8);
}

TEST(Roofline, AScopeFasterThanOneCoreIsPlacedUnderTheWholeMachinesRoofs) {
  // 30 GFLOP/s at 8 FLOP/byte: more than one core can do, so it used several.
  const Profile p = one_scope(30e9, 3'750'000'000, 1'000'000'000);
  const auto scopes = nnprof::analysis::compute_scopes(p);
  ASSERT_TRUE(scopes.at(0).roofline.has_value());
  EXPECT_FALSE(scopes[0].one_core);
  EXPECT_EQ(scopes[0].roofline->bound, nnprof::RooflineBound::Compute);
  EXPECT_DOUBLE_EQ(scopes[0].roofline->attainable, 40e9);
  EXPECT_DOUBLE_EQ(scopes[0].roofline->fraction, 0.75);
}

TEST(Roofline, WithoutPeaksOrBytesThereIsNoPoint) {
  Profile p = one_scope(1e9, 0, 1'000'000'000);
  EXPECT_FALSE(nnprof::analysis::compute_scopes(p).at(0).roofline.has_value());
  p = one_scope(1e9, 100, 1'000'000'000);
  p.machine = {};
  EXPECT_FALSE(nnprof::analysis::machine_known(p));
  EXPECT_FALSE(nnprof::analysis::compute_scopes(p).at(0).roofline.has_value());
}

}  // namespace
