// The first profiler of a process calibrates the clock (a 10 ms sleep); that setup must not
// count as the session's time. This test is its own executable so that its profiler is the
// process's first.
#include <gtest/gtest.h>

#include <chrono>
#include <cstdint>

#include "nnprof/nnprof.hpp"

namespace {

using Clock = std::chrono::steady_clock;

std::int64_t ns_between(Clock::time_point a, Clock::time_point b) {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(b - a).count();
}

TEST(SessionStart, TheFirstProfilersSetupIsNotPartOfItsSession) {
  const Clock::time_point before = Clock::now();
  nnprof::Profiler profiler;
  const Clock::time_point constructed = Clock::now();
  const nnprof::Profile profile = profiler.snapshot();
  const Clock::time_point after = Clock::now();
  // The constructor took the calibration's 10 ms at least...
  ASSERT_GE(ns_between(before, constructed), 10'000'000);
  // ...and the session counts from its end: everything from before the constructor to after the
  // snapshot, less the calibration's sleep (whatever else was slow, e.g. starting the drain
  // thread under a sanitizer, happened inside the session and is on both sides).
  const auto duration = static_cast<std::int64_t>(profile.meta.duration_ns);
  EXPECT_LE(duration, ns_between(before, after) - 9'000'000)
      << "session " << duration << " ns; constructor " << ns_between(before, constructed) << " ns";
}

}  // namespace
