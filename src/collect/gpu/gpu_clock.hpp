// Mapping CUPTI's timestamps onto the session clock (CLOCK_MONOTONIC nanoseconds).
//
// Normally CUPTI is told to take its timestamps from CLOCK_MONOTONIC (a timestamp callback),
// and the map is the identity. When that registration fails, CUPTI keeps its own clock
// (CLOCK_REALTIME on Linux): the map is then measured by bracketing cuptiGetTimestamp between
// two CLOCK_MONOTONIC reads at start and at stop, and applied as offset + slope.
#pragma once

#include <cstdint>
#include <string>

namespace nnprof::detail {

/// One reading of the foreign clock bracketed by two reads of CLOCK_MONOTONIC.
struct ClockBracket {
  std::uint64_t monotonic_before = 0;
  std::uint64_t foreign = 0;
  std::uint64_t monotonic_after = 0;
};

struct GpuClockMap {
  std::string source = "monotonic-callback";
  std::int64_t offset_ns = 0;       ///< monotonic = foreign + offset (at the first bracket)
  double slope = 1.0;               ///< monotonic ns per foreign ns
  std::uint64_t anchor = 0;         ///< the foreign time the offset was read at
  std::uint64_t uncertainty_ns = 0; ///< half the widest bracket

  /// A foreign timestamp as CLOCK_MONOTONIC ns; 0 stays 0 (CUPTI's "no timestamp").
  [[nodiscard]] std::uint64_t to_monotonic(std::uint64_t foreign) const noexcept;
  [[nodiscard]] bool identity() const noexcept { return offset_ns == 0 && slope == 1.0; }
};

/// The map from one bracket (offset only) or two (offset and slope). A second bracket less
/// than 1 ms after the first leaves the slope at 1.
GpuClockMap map_clocks(const ClockBracket& first);
GpuClockMap map_clocks(const ClockBracket& first, const ClockBracket& second);

/// The tightest of `rounds` brackets of `read_foreign` (the narrowest bracket bounds the error).
template <class ReadForeign, class ReadMonotonic>
ClockBracket bracket_clock(ReadForeign&& read_foreign, ReadMonotonic&& read_monotonic, int rounds = 21) {
  ClockBracket best{};
  std::uint64_t best_width = ~std::uint64_t{0};
  for (int i = 0; i < rounds; ++i) {
    ClockBracket b;
    b.monotonic_before = read_monotonic();
    b.foreign = read_foreign();
    b.monotonic_after = read_monotonic();
    const std::uint64_t width = b.monotonic_after - b.monotonic_before;
    if (width < best_width) {
      best_width = width;
      best = b;
    }
  }
  return best;
}

}  // namespace nnprof::detail
