// ComputeProfiler (nnprof/compute_profiler.hpp): operations, their calls and times, and the
// FLOP and byte rates of the work declared in them, read back from the Profiler underneath.
#include <algorithm>
#include <gtest/gtest.h>

#include <chrono>
#include <cstdint>
#include <thread>
#include <vector>

#include "nnprof/analysis.hpp"
#include "nnprof/compute_profiler.hpp"
#include "nnprof/flops.hpp"

namespace {

using nnprof::ComputeProfiler;
using nnprof::OperationStats;
using namespace std::chrono_literals;

// A real n x n x n single-precision matrix multiplication, so that the declared FLOPs are done.
float matmul(int n) {
  std::vector<float> a(static_cast<std::size_t>(n) * n, 1.0f), b(a.size(), 2.0f), c(a.size(), 0.0f);
  for (int i = 0; i < n; ++i)
    for (int k = 0; k < n; ++k)
      for (int j = 0; j < n; ++j) c[i * n + j] += a[i * n + k] * b[k * n + j];
  return c[0];
}

TEST(ComputeProfiler, TopByTimeOrdersByTotalAndCountsCalls) {
  ComputeProfiler profiler;
  for (int i = 0; i < 3; ++i) {
    profiler.start("slow");
    std::this_thread::sleep_for(2ms);
    profiler.stop("slow");
  }
  for (int i = 0; i < 5; ++i) {
    profiler.start("fast");
    profiler.stop("fast");
  }
  const std::vector<OperationStats> top = profiler.top_by_time(5);
  ASSERT_EQ(top.size(), 2u);  // only two operations exist: n is a limit, not a count
  EXPECT_EQ(top[0].name, "slow");
  EXPECT_EQ(top[0].call_count, 3u);
  EXPECT_EQ(top[1].name, "fast");
  EXPECT_EQ(top[1].call_count, 5u);
  EXPECT_GE(top[0].total_time(), 6ms);
  EXPECT_GT(top[0].total_time(), top[1].total_time());
  EXPECT_EQ(top[0].total_time(), top[0].total);
  EXPECT_EQ(top[0].avg_time(), top[0].total / 3);
  EXPECT_GE(top[0].avg_time(), 2ms);

  const std::vector<OperationStats> first = profiler.top_by_time(1);
  ASSERT_EQ(first.size(), 1u);
  EXPECT_EQ(first[0].name, "slow");
  EXPECT_TRUE(profiler.top_by_time(0).empty());
  EXPECT_EQ(profiler.all_stats().size(), 2u);
}

TEST(ComputeProfiler, FlopAndByteRatesComeFromTheDeclaredWorkOverTheTime) {
  ComputeProfiler profiler;
  constexpr int n = 48;
  const nnprof::OpCost cost = nnprof::flops::matmul(n, n, n);
  float sink = 0.0f;
  for (int i = 0; i < 4; ++i) {
    profiler.start_with_flops("matmul", cost.flops, static_cast<std::uint64_t>(cost.bytes));
    sink += matmul(n);
    profiler.stop("matmul");
  }
  EXPECT_FLOAT_EQ(sink, 4.0f * 2.0f * n);

  const auto op = profiler.stats("matmul");
  ASSERT_TRUE(op.has_value());
  EXPECT_EQ(op->call_count, 4u);
  EXPECT_DOUBLE_EQ(op->flops, 4 * 2.0 * n * n * n);
  EXPECT_EQ(op->bytes, 4u * static_cast<std::uint64_t>(cost.bytes));
  ASSERT_GT(op->total.count(), 0);
  const double seconds = static_cast<double>(op->total.count()) * 1e-9;
  EXPECT_DOUBLE_EQ(op->flops_per_second(), op->flops / seconds);
  EXPECT_DOUBLE_EQ(op->bytes_per_second(), static_cast<double>(op->bytes) / seconds);
  EXPECT_DOUBLE_EQ(op->arithmetic_intensity(), op->flops / static_cast<double>(op->bytes));
  EXPECT_GT(op->flops_per_second(), 0.0);

  // The same numbers as the Profiler's own ranking of the same recording.
  const auto timings = profiler.profiler().top_by_time(1);
  ASSERT_EQ(timings.size(), 1u);
  const OperationStats top = profiler.top_by_time(1).at(0);
  EXPECT_EQ(top.name, timings[0].name);
  EXPECT_EQ(top.call_count, timings[0].calls);
  // Two snapshots, each converting ticks to nanoseconds with the clock calibration of its
  // moment (refined as the session runs): the same ticks may differ by rounding.
  const double total = static_cast<double>(top.total.count());
  EXPECT_NEAR(total, static_cast<double>(timings[0].total.count()), std::max(2.0, 1e-4 * total));
  EXPECT_NEAR(top.flops_per_second(), timings[0].gflops_per_second * 1e9, 1e-4 * top.flops_per_second());
  EXPECT_NEAR(top.bytes_per_second(), timings[0].gbytes_per_second * 1e9, 1e-4 * top.bytes_per_second());
}

TEST(ComputeProfiler, WorkDeclaredLaterAndInsideCountsForTheEnclosingOperation) {
  ComputeProfiler profiler;
  profiler.start("layer");
  profiler.add_flops(100.0, 10);  // shapes known only now
  profiler.start_with_flops("gemm", 1000.0, 40);
  profiler.stop("gemm");
  profiler.stop("layer");
  const auto layer = profiler.stats("layer");
  const auto gemm = profiler.stats("gemm");
  ASSERT_TRUE(layer && gemm);
  EXPECT_DOUBLE_EQ(layer->flops, 1100.0);  // inclusive, as the Profiler counts it
  EXPECT_EQ(layer->bytes, 50u);
  EXPECT_DOUBLE_EQ(gemm->flops, 1000.0);
  EXPECT_EQ(gemm->bytes, 40u);
}

TEST(ComputeProfiler, WithoutDeclaredWorkOrCallsTheRatesAreZero) {
  ComputeProfiler profiler;
  EXPECT_FALSE(profiler.stats("never").has_value());
  EXPECT_TRUE(profiler.top_by_time(3).empty());
  profiler.start("copy");
  profiler.stop("copy");
  const auto op = profiler.stats("copy");
  ASSERT_TRUE(op.has_value());
  EXPECT_EQ(op->flops_per_second(), 0.0);
  EXPECT_EQ(op->bytes_per_second(), 0.0);
  EXPECT_EQ(op->arithmetic_intensity(), 0.0);
  const OperationStats empty;
  EXPECT_EQ(empty.avg_time(), 0ns);
  EXPECT_EQ(empty.flops_per_second(), 0.0);
}

TEST(ComputeProfiler, OperationsOfSeveralThreadsAddUp) {
  ComputeProfiler profiler;
  auto work = [&] {
    for (int i = 0; i < 250; ++i) {
      profiler.start_with_flops("kernel", 10.0, 4);
      profiler.stop("kernel");
    }
  };
  std::thread a(work), b(work);
  a.join();
  b.join();
  const auto op = profiler.stats("kernel");
  ASSERT_TRUE(op.has_value());
  EXPECT_EQ(op->call_count, 500u);
  EXPECT_DOUBLE_EQ(op->flops, 5000.0);
  EXPECT_EQ(op->bytes, 2000u);
  EXPECT_EQ(profiler.profiler().call_count("kernel"), 500u);
}

TEST(ComputeProfiler, ItsProfilerFindsTheBottlenecksOfTheOperationsByName) {
  ComputeProfiler profiler;
  profiler.start("slow");
  std::this_thread::sleep_for(3ms);
  profiler.stop("slow");
  const std::vector<nnprof::Bottleneck> found = profiler.profiler().analyze_bottlenecks();
  ASSERT_FALSE(found.empty());
  EXPECT_EQ(found[0].type, nnprof::BottleneckType::SlowOperation);
  EXPECT_EQ(found[0].name, "slow");
  EXPECT_EQ(found[0].scope, found[0].name);  // the former spelling keeps working
}

}  // namespace
