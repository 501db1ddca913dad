#include "io/metrics_csv.hpp"

#include <ostream>
#include <string>

#include <fmt/format.h>

#include "io/csv_export.hpp"
#include "model/metric_builder.hpp"

namespace nnprof::io {
namespace {

constexpr std::string_view kRecordEnd = "\r\n";  // RFC 4180, as the scope CSV

// The three fields that name a metric in both forms.
std::string metric_fields(const Profile& profile, const MetricSeries& metric) {
  return csv_field(profile.str(metric.name)) + ',' + model::metric_kind_name(metric.kind) + ',' +
         csv_field(metric.unit);
}

}  // namespace

void write_metric_points_csv(const Profile& profile, std::ostream& out) {
  out << kMetricPointsCsvHeader << kRecordEnd;
  for (const MetricSeries& metric : profile.metrics) {
    const std::string name = metric_fields(profile, metric);
    // "{}" prints a double in its shortest round-trip form, without a locale's separators.
    for (const MetricPoint& p : metric.points)
      out << name << fmt::format(",{},{},{}", p.time_ns, p.value, p.thread) << kRecordEnd;
  }
}

void write_metric_summary_csv(const Profile& profile, std::ostream& out) {
  out << kMetricSummaryCsvHeader << kRecordEnd;
  for (const MetricSeries& metric : profile.metrics) {
    const MetricSummary& s = metric.summary;
    out << metric_fields(profile, metric)
        << fmt::format(",{},{},{},{},{},{}", s.count, s.sum, s.min, s.max, s.mean, s.stddev);
    if (s.percentile_points > 0)
      out << fmt::format(",{},{},{},{}", s.p50, s.p90, s.p95, s.p99);
    else
      out << ",,,,";
    out << fmt::format(",{},{},{}", s.percentile_points, s.last, s.points_dropped) << kRecordEnd;
  }
}

}  // namespace nnprof::io
