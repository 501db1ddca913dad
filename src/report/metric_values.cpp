#include "report/metric_values.hpp"

#include <cmath>
#include <cstdint>

#include <fmt/format.h>


namespace nnprof::report {

using report::format_count;
using report::format_duration;
using report::format_bytes;


namespace {

// `value` (below 1e15 in magnitude) rounded to a whole number with thousands separators:
// "-37,050".
std::string grouped(double value) {
  const auto whole = static_cast<std::uint64_t>(std::llround(std::fabs(value)));
  return value < 0 ? fmt::format("-{}", format_count(whole)) : format_count(whole);
}

std::string with_unit(const std::string& number, std::string_view unit) {
  return unit.empty() ? number : fmt::format("{} {}", number, unit);
}

}  // namespace

std::string format_metric_value(double value, std::string_view unit) {
  if (!std::isfinite(value)) return "n/a";
  if (unit == "ns") return format_duration(value);
  if (unit == "bytes" || unit == "B") return format_bytes(static_cast<std::int64_t>(std::llround(value)));
  const double magnitude = std::fabs(value);
  std::string text;
  if ((value == std::floor(value) || magnitude >= 1000.0) && magnitude < 1e15) {
    // Four significant digits would write 37,050.3 as 3.705e+04: from 1,000 up the whole
    // number is both exact enough and readable.
    text = grouped(value);
  } else if (magnitude >= 1e-3 && magnitude < 1000.0) {
    text = fmt::format("{:.4g}", value);
  } else {
    text = fmt::format("{:.3e}", value);
  }
  return with_unit(text, unit);
}

std::string format_axis_value(double value, std::string_view unit) {
  if (!std::isfinite(value)) return "n/a";
  if (unit == "ns") return format_duration(value);
  if (unit == "bytes" || unit == "B") return format_bytes(static_cast<std::int64_t>(std::llround(value)));
  const double magnitude = std::fabs(value);
  if (magnitude < 999.5) return with_unit(fmt::format("{:.3g}", value), unit);
  if (magnitude < 999'999.5) return with_unit(grouped(value), unit);
  static constexpr std::string_view kPrefixes[] = {"M", "G", "T", "P", "E"};
  double scaled = value / 1e6;
  std::size_t prefix = 0;
  while (std::fabs(scaled) >= 999.5 && prefix + 1 < std::size(kPrefixes)) {
    scaled /= 1000.0;
    ++prefix;
  }
  if (std::fabs(scaled) >= 999.5) return with_unit(fmt::format("{:.3g}", value), unit);
  return with_unit(fmt::format("{:.3g}{}", scaled, kPrefixes[prefix]), unit);
}


std::string metrics_completeness_note(const Profile& profile) {
  std::uint64_t dropped = 0, metrics = 0;
  for (const MetricSeries& m : profile.metrics) {
    dropped += m.summary.points_dropped;
    metrics += m.summary.points_dropped > 0;
  }
  if (dropped == 0) return {};
  return fmt::format(
      "{} observations of {} metric(s) were not kept as points (buffer cap or statistics-only session): count, "
      "last, mean, std dev, min and max are exact; percentiles cover the points kept.",
      format_count(dropped), metrics);
}

}  // namespace nnprof::report
