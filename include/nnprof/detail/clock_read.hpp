// The clock read on the recording hot path: rdtsc on x86-64 with an invariant TSC,
// CLOCK_MONOTONIC nanoseconds everywhere else. Which one is decided once, at load time.
#pragma once

#include <cstdint>
#include <ctime>

#include "nnprof/config.hpp"

#if defined(__x86_64__) || defined(__i386__)
#include <x86intrin.h>
#define NNPROF_HAVE_RDTSC 1
#else
#define NNPROF_HAVE_RDTSC 0
#endif

namespace nnprof::detail {

/// True when ticks are TSC cycles; false when ticks are CLOCK_MONOTONIC nanoseconds.
/// Set by a load-time constructor of libnnprof (before any user static initializer runs)
/// and never changed afterwards.
NNPROF_API extern bool g_ticks_are_tsc;

inline std::uint64_t monotonic_ns() noexcept {
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<std::uint64_t>(ts.tv_sec) * 1'000'000'000ull + static_cast<std::uint64_t>(ts.tv_nsec);
}

/// One clock read in ticks (see `g_ticks_are_tsc`); convert with a `ClockCalibration`.
inline std::uint64_t read_ticks() noexcept {
#if NNPROF_HAVE_RDTSC
  if (g_ticks_are_tsc) [[likely]]
    return __rdtsc();
#endif
  return monotonic_ns();
}

}  // namespace nnprof::detail
