// The metrics of a profile: counters, gauges and histograms recorded by name (nnprof/metrics.hpp),
// each a time series with summary statistics.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace nnprof {

enum class MetricKind : std::uint8_t {
  Counter,    ///< increment(name, delta): a running total
  Gauge,      ///< set(name, value): the latest value wins
  Histogram,  ///< record(name, value), measure_time(name): a distribution of observations
};

/// One observation of a metric. For a counter, `value` is the running total after the
/// increment (over all threads); for a gauge the value set; for a histogram the value recorded.
struct MetricPoint {
  std::uint64_t time_ns = 0;  ///< since the session's start
  double value = 0.0;
  std::uint32_t thread = 0;   ///< index in Profile::threads of the thread that recorded it

  bool operator==(const MetricPoint&) const = default;
};

/// Statistics of a metric's observations: the increments of a counter, the values set on a
/// gauge, the values recorded in a histogram. count, sum, min, max, mean and stddev cover every
/// observation of the session, whatever the buffer cap kept; the percentiles are computed
/// exactly (linear interpolation between the two nearest ranks, as numpy's default) over the
/// `percentile_points` observations kept as points, which is all of them when it equals `count`.
struct MetricSummary {
  std::uint64_t count = 0;
  double sum = 0.0;     ///< for a counter: its total
  double min = 0.0;
  double max = 0.0;
  double mean = 0.0;
  double stddev = 0.0;  ///< sample standard deviation (n - 1); 0 below two observations
  double p50 = 0.0;
  double p90 = 0.0;
  double p95 = 0.0;
  double p99 = 0.0;
  std::uint64_t percentile_points = 0;  ///< observations the percentiles are computed over; 0: none
  double last = 0.0;  ///< counter: total; gauge: the value set last; histogram: the last observation
  std::uint64_t points_dropped = 0;  ///< observations not kept as points (buffer cap, statistics-only session)

  bool operator==(const MetricSummary&) const = default;
};

/// A metric over the whole session.
struct MetricSeries {
  std::uint32_t name = 0;  ///< index into Profile::strings
  MetricKind kind = MetricKind::Counter;
  std::string unit;        ///< as given when the metric was declared ("ns" for measure_time); may be empty
  MetricSummary summary;
  std::vector<MetricPoint> points;  ///< sorted by time

  bool operator==(const MetricSeries&) const = default;
};

}  // namespace nnprof
