#include <gtest/gtest.h>

#include <chrono>
#include <thread>

#include "nnprof/clock.hpp"

namespace {

TEST(Clock, TickSourceMatchesTheCpu) {
  const std::string source = nnprof::clock::tick_source();
  EXPECT_TRUE(source == "tsc" || source == "clock_monotonic");
}

TEST(Clock, TicksAreMonotonic) {
  std::uint64_t prev = nnprof::detail::read_ticks();
  for (int i = 0; i < 100000; ++i) {
    const std::uint64_t now = nnprof::detail::read_ticks();
    ASSERT_GE(now, prev);
    prev = now;
  }
}

TEST(Clock, PairBracketIsTight) {
  const nnprof::ClockPair p = nnprof::clock::read_pair();
  EXPECT_GT(p.monotonic_ns, 0u);
  EXPECT_LT(p.uncertainty_ns, 100'000u) << "the tightest of 21 brackets should be well under 100 us";
}

TEST(Clock, CalibrationConvertsTicksToMonotonicNanoseconds) {
  const nnprof::ClockPair a = nnprof::clock::read_pair();
  std::this_thread::sleep_for(std::chrono::milliseconds(30));
  const nnprof::ClockPair b = nnprof::clock::read_pair();
  const nnprof::ClockCalibration c = nnprof::clock::calibrate(a, b);
  EXPECT_GT(c.ns_per_tick, 0.0);
  EXPECT_LT(c.relative_error, 1e-2);
  // The calibration maps b's ticks onto b's monotonic time (within the pair uncertainty).
  const double predicted = static_cast<double>(c.since_origin_ns(b.ticks));
  const double actual = static_cast<double>(b.monotonic_ns - a.monotonic_ns);
  EXPECT_NEAR(predicted, actual, static_cast<double>(a.uncertainty_ns + b.uncertainty_ns) + 2.0);
  // The process-wide rate agrees with this one to better than 0.1%.
  EXPECT_NEAR(nnprof::clock::nominal_ns_per_tick() / c.ns_per_tick, 1.0, 1e-3);
}

TEST(Clock, ConversionsRoundToNearest) {
  nnprof::ClockCalibration c;
  c.ns_per_tick = 0.25;
  c.tick_origin = 1000;
  EXPECT_EQ(c.since_origin_ns(1000), 0u);
  EXPECT_EQ(c.since_origin_ns(999), 0u) << "ticks before the origin clamp to zero";
  EXPECT_EQ(c.since_origin_ns(1010), 3u);  // 2.5 rounds up
  EXPECT_EQ(c.to_ns(4000), 1000u);
}

}  // namespace
