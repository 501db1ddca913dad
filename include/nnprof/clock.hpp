// Converting recorded ticks to nanoseconds of CLOCK_MONOTONIC.
#pragma once

#include <cstdint>
#include <string>

#include "nnprof/config.hpp"
#include "nnprof/detail/clock_read.hpp"

namespace nnprof {

/// A (ticks, CLOCK_MONOTONIC) pair read as close together as the machine allows.
struct ClockPair {
  std::uint64_t ticks = 0;
  std::uint64_t monotonic_ns = 0;
  std::uint64_t uncertainty_ns = 0;  ///< width of the bracket the pair was read in
};

/// How ticks map to nanoseconds: ns = monotonic_origin_ns + (ticks - tick_origin) * ns_per_tick.
/// Stored with every profile so that its numbers can be re-derived and checked.
struct ClockCalibration {
  std::string source = "clock_monotonic";  ///< "tsc" (invariant TSC) or "clock_monotonic"
  double ns_per_tick = 1.0;
  std::uint64_t tick_origin = 0;        ///< ticks at the session's start
  std::uint64_t monotonic_origin_ns = 0;  ///< CLOCK_MONOTONIC at the session's start
  std::int64_t unix_origin_ns = 0;      ///< wall-clock time (CLOCK_REALTIME) at the session's start
  double relative_error = 0.0;          ///< bound on |error| of ns_per_tick, as a fraction

  /// Nanoseconds since the session's start for a tick value read during the session.
  [[nodiscard]] std::uint64_t since_origin_ns(std::uint64_t ticks) const noexcept {
    if (ticks <= tick_origin) return 0;
    return static_cast<std::uint64_t>(static_cast<double>(ticks - tick_origin) * ns_per_tick + 0.5);
  }
  /// A duration in ticks as nanoseconds.
  [[nodiscard]] std::uint64_t to_ns(std::uint64_t ticks) const noexcept {
    return static_cast<std::uint64_t>(static_cast<double>(ticks) * ns_per_tick + 0.5);
  }

  bool operator==(const ClockCalibration&) const = default;
};

namespace clock {

/// Reads a tick/CLOCK_MONOTONIC pair, keeping the tightest of several brackets.
NNPROF_API ClockPair read_pair();

/// Calibration from two pairs read at different times (the longer apart, the better).
NNPROF_API ClockCalibration calibrate(const ClockPair& first, const ClockPair& second);

/// The process-wide estimate of ns per tick (measured once over ~10 ms on first use);
/// sessions refine it over their own duration.
NNPROF_API double nominal_ns_per_tick();

/// "tsc" or "clock_monotonic": what `read_ticks()` returns on this machine.
NNPROF_API const char* tick_source();

}  // namespace clock
}  // namespace nnprof
