#include "collect/gpu/gpu_clock.hpp"

#include <cmath>

namespace nnprof::detail {

namespace {
std::uint64_t midpoint(const ClockBracket& b) noexcept {
  return b.monotonic_before + (b.monotonic_after - b.monotonic_before) / 2;
}
}  // namespace

std::uint64_t GpuClockMap::to_monotonic(std::uint64_t foreign) const noexcept {
  if (foreign == 0) return 0;
  if (identity()) return foreign;
  const double since_anchor = static_cast<double>(static_cast<std::int64_t>(foreign - anchor));
  const double mapped = static_cast<double>(anchor) + static_cast<double>(offset_ns) + since_anchor * slope;
  return mapped <= 0.0 ? 0 : static_cast<std::uint64_t>(std::llround(mapped));
}

GpuClockMap map_clocks(const ClockBracket& first) {
  GpuClockMap m;
  m.source = "cupti-realtime-mapped";
  m.anchor = first.foreign;
  m.offset_ns = static_cast<std::int64_t>(midpoint(first)) - static_cast<std::int64_t>(first.foreign);
  m.uncertainty_ns = (first.monotonic_after - first.monotonic_before + 1) / 2;
  return m;
}

GpuClockMap map_clocks(const ClockBracket& first, const ClockBracket& second) {
  GpuClockMap m = map_clocks(first);
  const std::uint64_t u2 = (second.monotonic_after - second.monotonic_before + 1) / 2;
  if (u2 > m.uncertainty_ns) m.uncertainty_ns = u2;
  constexpr std::uint64_t kMinSpanNs = 1'000'000;
  if (second.foreign > first.foreign + kMinSpanNs) {
    const double mono = static_cast<double>(midpoint(second)) - static_cast<double>(midpoint(first));
    const double foreign = static_cast<double>(second.foreign - first.foreign);
    m.slope = mono / foreign;
  }
  return m;
}

}  // namespace nnprof::detail
