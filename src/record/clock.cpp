// Tick source selection and calibration of ticks against CLOCK_MONOTONIC.
#include "nnprof/clock.hpp"

#include <chrono>
#include <limits>
#include <thread>

#if NNPROF_HAVE_RDTSC
#include <cpuid.h>
#endif

namespace nnprof::detail {

bool g_ticks_are_tsc = false;

namespace {
bool cpu_has_invariant_tsc() noexcept {
#if NNPROF_HAVE_RDTSC
  unsigned eax = 0, ebx = 0, ecx = 0, edx = 0;
  if (__get_cpuid(0x80000000u, &eax, &ebx, &ecx, &edx) == 0 || eax < 0x80000007u) return false;
  if (__get_cpuid(0x80000007u, &eax, &ebx, &ecx, &edx) == 0) return false;
  return (edx & (1u << 8)) != 0;  // "TscInvariant": constant rate, does not stop in C-states
#else
  return false;
#endif
}

// Runs before any C++ static initializer of libnnprof or of programs linked against it, so
// every tick ever read in the process comes from the same source.
[[gnu::constructor(101)]] void choose_tick_source() noexcept { g_ticks_are_tsc = cpu_has_invariant_tsc(); }
}  // namespace

}  // namespace nnprof::detail

namespace nnprof::clock {

ClockPair read_pair() {
  // The tightest of several brackets: a preemption or cache miss widens one bracket, not all.
  ClockPair best;
  best.uncertainty_ns = std::numeric_limits<std::uint64_t>::max();
  for (int i = 0; i < 21; ++i) {
    const std::uint64_t before = detail::monotonic_ns();
    const std::uint64_t ticks = detail::read_ticks();
    const std::uint64_t after = detail::monotonic_ns();
    if (after - before < best.uncertainty_ns) {
      best.ticks = ticks;
      best.monotonic_ns = before + (after - before) / 2;
      best.uncertainty_ns = after - before;
    }
  }
  return best;
}

ClockCalibration calibrate(const ClockPair& first, const ClockPair& second) {
  ClockCalibration c;
  c.source = tick_source();
  c.tick_origin = first.ticks;
  c.monotonic_origin_ns = first.monotonic_ns;
  if (!detail::g_ticks_are_tsc) {
    c.ns_per_tick = 1.0;  // ticks are CLOCK_MONOTONIC nanoseconds already
    c.relative_error = 0.0;
    return c;
  }
  const double dt = static_cast<double>(second.monotonic_ns) - static_cast<double>(first.monotonic_ns);
  const double dticks = static_cast<double>(second.ticks) - static_cast<double>(first.ticks);
  if (dt <= 0.0 || dticks <= 0.0) {
    c.ns_per_tick = nominal_ns_per_tick();
    c.relative_error = 1e-4;
    return c;
  }
  c.ns_per_tick = dt / dticks;
  c.relative_error = static_cast<double>(first.uncertainty_ns + second.uncertainty_ns) / dt;
  return c;
}

double nominal_ns_per_tick() {
  static const double value = [] {
    if (!detail::g_ticks_are_tsc) return 1.0;
    const ClockPair a = read_pair();
    std::this_thread::sleep_for(std::chrono::milliseconds(10));  // 10 ms gives ~7 digits here
    const ClockPair b = read_pair();
    return (static_cast<double>(b.monotonic_ns) - static_cast<double>(a.monotonic_ns)) /
           (static_cast<double>(b.ticks) - static_cast<double>(a.ticks));
  }();
  return value;
}

const char* tick_source() { return detail::g_ticks_are_tsc ? "tsc" : "clock_monotonic"; }

}  // namespace nnprof::clock
