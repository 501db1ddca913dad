#include "model/metric_builder.hpp"

#include <algorithm>
#include <bit>
#include <cmath>

#include <fmt/format.h>

namespace nnprof::model {

const char* metric_kind_name(MetricKind kind) noexcept {
  switch (kind) {
    case MetricKind::Counter: return "counter";
    case MetricKind::Gauge: return "gauge";
    case MetricKind::Histogram: return "histogram";
  }
  return "unknown";
}

namespace {

const char* kind_noun(MetricKind k) {
  switch (k) {
    case MetricKind::Counter: return "counter";
    case MetricKind::Gauge: return "gauge";
    case MetricKind::Histogram: return "histogram";
  }
  return "metric";
}

/// Count, sum, min, max, mean, stddev and last over every thread's cell (Chan et al.'s
/// pairwise combination of means and second moments).
void merge_cells(const detail::RawMetric& m, MetricSummary& s) {
  double mean = 0.0, m2 = 0.0, last = 0.0;
  std::uint64_t n = 0, last_ticks = 0;
  for (const detail::RawMetricCell& c : m.cells) {
    if (c.count == 0) continue;
    const double cn = static_cast<double>(c.count);
    const double cmean = c.shift + c.sum_dev / cn;
    const double cm2 = std::max(0.0, c.sum_dev_sq - c.sum_dev * c.sum_dev / cn);
    if (n == 0) {
      mean = cmean;
      m2 = cm2;
      s.min = c.min;
      s.max = c.max;
      last = c.last;
      last_ticks = c.last_ticks;
    } else {
      const double prev = static_cast<double>(n);
      const double total = prev + cn;
      const double delta = cmean - mean;
      mean += delta * cn / total;
      m2 += cm2 + delta * delta * prev * cn / total;
      s.min = std::min(s.min, c.min);
      s.max = std::max(s.max, c.max);
      if (c.last_ticks >= last_ticks) {
        last = c.last;
        last_ticks = c.last_ticks;
      }
    }
    n += c.count;
    s.sum += c.sum;
  }
  s.count = n;
  s.mean = n > 0 ? mean : 0.0;
  s.stddev = n > 1 ? std::sqrt(m2 / static_cast<double>(n - 1)) : 0.0;
  s.last = m.kind == MetricKind::Counter ? s.sum : last;
}

}  // namespace

double percentile(const std::vector<double>& sorted, double p) {
  if (sorted.empty()) return 0.0;
  const double rank = std::clamp(p, 0.0, 1.0) * static_cast<double>(sorted.size() - 1);
  const auto lo = static_cast<std::size_t>(rank);
  const std::size_t hi = std::min(lo + 1, sorted.size() - 1);
  const double frac = rank - static_cast<double>(lo);
  return sorted[lo] + (sorted[hi] - sorted[lo]) * frac;
}

void build_metrics(const detail::RawSnapshot& raw, const ClockCalibration& cal,
                   const std::function<StringId(std::string_view)>& intern, Profile& profile) {
  const auto& metrics = raw.metrics.metrics;
  std::vector<std::vector<MetricPoint>> points(metrics.size());
  for (const detail::RawThread& t : raw.threads)
    for (const detail::Record& r : t.records)
      if (r.kind == detail::RecordKind::Metric && r.ref < metrics.size())
        points[r.ref].push_back(MetricPoint{cal.since_origin_ns(r.t0), std::bit_cast<double>(r.t1), t.index});

  const double cap_mib = static_cast<double>(raw.memory_cap_bytes) / (1024.0 * 1024.0);
  std::uint64_t without_points = 0;
  std::vector<MetricSeries> out;
  out.reserve(metrics.size());
  for (std::size_t i = 0; i < metrics.size(); ++i) {
    const detail::RawMetric& m = metrics[i];
    MetricSeries series;
    series.name = intern(m.name);
    series.kind = m.kind;
    series.unit = m.unit;
    MetricSummary& s = series.summary;
    merge_cells(m, s);

    std::vector<MetricPoint>& pts = points[i];
    std::stable_sort(pts.begin(), pts.end(),
                     [](const MetricPoint& a, const MetricPoint& b) { return a.time_ns < b.time_ns; });
    if (!pts.empty()) {
      std::vector<double> values(pts.size());
      std::transform(pts.begin(), pts.end(), values.begin(), [](const MetricPoint& p) { return p.value; });
      std::sort(values.begin(), values.end());
      s.p50 = percentile(values, 0.50);
      s.p90 = percentile(values, 0.90);
      s.p95 = percentile(values, 0.95);
      s.p99 = percentile(values, 0.99);
      s.percentile_points = values.size();
    }
    if (m.kind == MetricKind::Counter) {
      double total = 0.0;
      for (MetricPoint& p : pts) p.value = total += p.value;
    }
    // The statistics were read after the records, so they count every point kept.
    s.points_dropped = s.count > pts.size() ? s.count - pts.size() : 0;
    series.points = std::move(pts);

    auto diagnose = [&](Severity sev, std::uint64_t count, std::string message) {
      profile.diagnostics.push_back(
          Diagnostic{DiagnosticKind::MetricsIncomplete, sev, kNone, series.name, count, std::move(message)});
    };
    if (!raw.keep_spans) {
      without_points += s.count;
    } else if (s.points_dropped > 0) {
      diagnose(Severity::Warning, s.points_dropped,
               fmt::format("{} of the {} observations of {} \"{}\" were not kept as points: the buffers reached their "
                           "memory cap of {:.0f} MiB{}. Its count, sum, min, max, mean and stddev are exact; its "
                           "series and percentiles cover the {} points kept. Raise the cap "
                           "(ProfilerOptions::memory_cap_bytes, NNPROF_MEMORY_CAP_MB).",
                           s.points_dropped, s.count, kind_noun(m.kind), m.name, cap_mib,
                           raw.flight_recorder ? " and the flight recorder overwrote the oldest" : "",
                           series.points.size()));
    }
    if (m.misuses > 0)
      diagnose(Severity::Warning, m.misuses,
               fmt::format("{} call(s) on {} \"{}\" were ignored: they used it as another kind of metric (one name "
                           "is a counter, a gauge or a histogram, fixed by its first use) or gave a value that is not "
                           "finite (NaN, infinity). Give each kind of metric its own name.",
                           m.misuses, kind_noun(m.kind), m.name));
    out.push_back(std::move(series));
  }
  if (without_points > 0)
    profile.diagnostics.push_back(Diagnostic{
        DiagnosticKind::MetricsIncomplete, Severity::Info, kNone, kNone, without_points,
        "This session kept no timeline (ProfilerOptions::record_spans = false): its metrics have exact "
        "statistics (count, sum, min, max, mean, stddev) but no series and no percentiles."});
  if (raw.metrics.refused > 0)
    profile.diagnostics.push_back(Diagnostic{
        DiagnosticKind::MetricsIncomplete, Severity::Warning, kNone, kNone, raw.metrics.refused,
        fmt::format("{} metric call(s) were ignored: a session holds at most {} metric names. Names built at run "
                    "time (with ids or sizes in them) multiply metrics; use fewer names.",
                    raw.metrics.refused, detail::kMaxMetrics)});

  std::sort(out.begin(), out.end(), [&](const MetricSeries& a, const MetricSeries& b) {
    return profile.strings[a.name] < profile.strings[b.name];
  });
  profile.metrics = std::move(out);
}

}  // namespace nnprof::model
