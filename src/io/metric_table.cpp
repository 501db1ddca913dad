#include "io/metric_table.hpp"

#include <cmath>
#include <cstdint>

#include <fmt/format.h>

#include "io/metrics_json.hpp"

namespace nnprof::io {

std::string format_metric_value(double value, std::string_view unit) {
  if (!std::isfinite(value)) return "n/a";
  if (unit == "ns") return format_duration(value);
  if (unit == "bytes" || unit == "B") return format_bytes(static_cast<std::int64_t>(std::llround(value)));
  std::string text;
  if (value == std::floor(value) && std::fabs(value) < 1e15) {
    const auto whole = static_cast<std::int64_t>(value);
    text = whole < 0 ? fmt::format("-{}", format_count(static_cast<std::uint64_t>(-whole)))
                     : format_count(static_cast<std::uint64_t>(whole));
  } else if (std::fabs(value) >= 1e-3 && std::fabs(value) < 1e6) {
    text = fmt::format("{:.4g}", value);
  } else {
    text = fmt::format("{:.3e}", value);
  }
  return unit.empty() ? text : fmt::format("{} {}", text, unit);
}

TextTable metrics_table(const Profile& profile) {
  TextTable table({{"Metric", Align::Left},
                   {"Kind", Align::Left},
                   {"Count", Align::Right},
                   {"Last / total", Align::Right},
                   {"Mean", Align::Right},
                   {"Std dev", Align::Right},
                   {"Min", Align::Right},
                   {"p50", Align::Right},
                   {"p90", Align::Right},
                   {"p95", Align::Right},
                   {"p99", Align::Right},
                   {"Max", Align::Right}});
  for (const MetricSeries& m : profile.metrics) {
    const MetricSummary& s = m.summary;
    const auto v = [&](double x) { return format_metric_value(x, m.unit); };
    const bool pct = s.percentile_points > 0;
    table.add_row({profile.str(m.name), metric_kind_name(m.kind), format_count(s.count), v(s.last), v(s.mean),
                   v(s.stddev), v(s.min), pct ? v(s.p50) : "n/a", pct ? v(s.p90) : "n/a", pct ? v(s.p95) : "n/a",
                   pct ? v(s.p99) : "n/a", v(s.max)});
  }
  return table;
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

}  // namespace nnprof::io
