// Metrics by name: counters, gauges and histograms, kept as time series in the profile.
//
//   nnprof::increment("batches");                 // counter: a running total
//   nnprof::set("learning_rate", 3e-4);           // gauge: the latest value
//   nnprof::record("loss", loss);                 // histogram: a distribution
//   { auto t = nnprof::measure_time("data_loading"); load(); }  // duration in ns, a histogram,
//                                                                // and a scope of that name
//   nnprof::save_metrics("metrics.json");         // series and summaries
//   nnprof::save_metrics("metrics.csv");          // one row per point, for pandas
//   nnprof::save_metrics_summary("summary.csv");  // one row per metric
//   nnprof::plot_metrics("metrics.png");          // one line chart per metric
//
// The free functions use the global profiler; profiler.metrics() gives the same calls on any
// profiler. A name's kind is fixed by its first use. In a hot loop, take a handle once
// (profiler.metrics().counter("tokens")) instead of passing the name on every call.
//
// Recording takes no lock and allocates nothing in steady state: each thread updates its own
// statistics of the metric and appends a point to its own buffer, under the profiler's memory
// cap. Statistics (count, sum, min, max, mean, stddev) are always complete; points beyond the
// cap are dropped, counted and reported in the profile's diagnostics.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "nnprof/config.hpp"
#include "nnprof/detail/clock_read.hpp"
#include "nnprof/metric_series.hpp"
#include "nnprof/profile.hpp"
#include "nnprof/profiler.hpp"
#include "nnprof/source_location.hpp"

namespace nnprof {

namespace detail {
struct MetricEntry;
/// One observation of `entry` on the calling thread (the handles' out-of-line part).
NNPROF_API void record_metric_entry(SessionCore& core, MetricEntry* entry, double value) noexcept;
/// Records the time since `start_ticks` in nanoseconds; returns it.
NNPROF_API std::uint64_t record_elapsed(SessionCore& core, MetricEntry* entry, std::uint64_t start_ticks) noexcept;
}  // namespace detail

class Metrics;

/// A counter of one profiler, found once by name. Valid while that profiler lives; a
/// default-constructed handle records nothing.
class Counter {
 public:
  Counter() = default;
  /// Adds `delta` (1 by default) to the running total.
  void increment(double delta = 1.0) const noexcept {
    if (core_ != nullptr && core_->enabled.load(std::memory_order_relaxed))
      detail::record_metric_entry(*core_, entry_, delta);
  }

 private:
  friend class Metrics;
  Counter(detail::SessionCore* core, detail::MetricEntry* entry) noexcept : core_(core), entry_(entry) {}
  detail::SessionCore* core_ = nullptr;
  detail::MetricEntry* entry_ = nullptr;
};

/// A gauge: a value that is set, such as a learning rate or the memory in use.
class Gauge {
 public:
  Gauge() = default;
  void set(double value) const noexcept {
    if (core_ != nullptr && core_->enabled.load(std::memory_order_relaxed))
      detail::record_metric_entry(*core_, entry_, value);
  }

 private:
  friend class Metrics;
  Gauge(detail::SessionCore* core, detail::MetricEntry* entry) noexcept : core_(core), entry_(entry) {}
  detail::SessionCore* core_ = nullptr;
  detail::MetricEntry* entry_ = nullptr;
};

/// Records the time from its construction to its destruction (or stop()) in nanoseconds into
/// a histogram, and times a scope of the metric's name over the same interval: every report,
/// analyze_bottlenecks() included, sees a measured phase as it sees NNPROF_SCOPE's.
class MetricTimer {
 public:
  ~MetricTimer() { stop(); }
  MetricTimer(const MetricTimer&) = delete;
  MetricTimer& operator=(const MetricTimer&) = delete;
  /// Records the duration now, closes the scope and returns the duration in nanoseconds (0
  /// when nothing is recorded); later calls and the destructor record nothing.
  std::uint64_t stop() noexcept {
    if (core_ == nullptr) return 0;
    detail::SessionCore* core = core_;
    core_ = nullptr;
    const std::uint64_t ns = detail::record_elapsed(*core, entry_, start_);
    if (frame_ != nullptr) detail::scope_exit(state_, frame_, start_);
    return ns;
  }

 private:
  friend class Metrics;
  friend class Histogram;
  // `site`: the scope of the metric's name (nullptr: no scope, the metric alone).
  MetricTimer(detail::SessionCore* core, detail::MetricEntry* entry, const SourceLocation* site) noexcept
      : core_(core != nullptr && entry != nullptr && core->enabled.load(std::memory_order_relaxed) ? core : nullptr),
        entry_(entry) {
    if (core_ != nullptr && site != nullptr) {
      state_ = detail::thread_state(*core_);
      if (state_ != nullptr) frame_ = detail::scope_enter(state_, site);
    }
    // The metric and the scope start at the same tick, so that they measure the same interval.
    start_ = frame_ != nullptr ? frame_->start : detail::read_ticks();
  }
  detail::SessionCore* core_ = nullptr;
  detail::MetricEntry* entry_ = nullptr;
  detail::ThreadState* state_ = nullptr;
  detail::Frame* frame_ = nullptr;
  std::uint64_t start_ = 0;
};

/// A histogram: a distribution of observations (a loss, a batch size, a latency).
class Histogram {
 public:
  Histogram() = default;
  void record(double value) const noexcept {
    if (core_ != nullptr && core_->enabled.load(std::memory_order_relaxed))
      detail::record_metric_entry(*core_, entry_, value);
  }
  /// A guard recording the time until its end, in nanoseconds (declare the histogram with unit
  /// "ns"), and timing a scope of the histogram's name meanwhile (see MetricTimer).
  [[nodiscard]] MetricTimer measure_time() const noexcept { return MetricTimer(core_, entry_, site_); }

 private:
  friend class Metrics;
  Histogram(detail::SessionCore* core, detail::MetricEntry* entry, const SourceLocation* site) noexcept
      : core_(core), entry_(entry), site_(site) {}
  detail::SessionCore* core_ = nullptr;
  detail::MetricEntry* entry_ = nullptr;
  const SourceLocation* site_ = nullptr;  ///< the scope measure_time() opens, found once with the handle
};

/// The metrics of one profiler (Profiler::metrics()); a light view, cheap to copy.
class NNPROF_API Metrics {
 public:
  explicit Metrics(Profiler& profiler) noexcept : profiler_(&profiler) {}

  /// Handles, created on first use of the name with `unit` (any text: "tokens", "ms", "bytes").
  /// Throw nnprof::Error when the name is already another kind of metric, or when the session
  /// already holds the most names it can (4096).
  [[nodiscard]] Counter counter(std::string_view name, std::string_view unit = {}) const;
  [[nodiscard]] Gauge gauge(std::string_view name, std::string_view unit = {}) const;
  [[nodiscard]] Histogram histogram(std::string_view name, std::string_view unit = {}) const;

  /// By name (a lookup in the calling thread's cache per call). A call that uses a name as
  /// another kind than its first use, or a value that is not finite, is ignored and counted
  /// in the profile's diagnostics.
  void increment(std::string_view name, double delta = 1.0) const noexcept;
  void set(std::string_view name, double value) const noexcept;
  void record(std::string_view name, double value) const noexcept;
  /// Records the time until the guard ends into histogram `name`, in nanoseconds (unit "ns"),
  /// and times a scope `name` over the same interval, so that the phase appears in the timing
  /// tables, the timeline and Profiler::analyze_bottlenecks() like any scope:
  ///   { auto t = metrics.measure_time("data_loading"); load(); }  // metric and scope
  /// Inside a scope of the same name the two count once in its inclusive time, as nested calls do.
  [[nodiscard]] MetricTimer measure_time(std::string_view name) const noexcept;

  /// Statistics of `name` so far, or nothing when it was never recorded.
  [[nodiscard]] std::optional<MetricSummary> summary(std::string_view name) const;
  /// Writes every metric's series and summary as JSON, or its points as CSV for a path ending
  /// in ".csv" (see save_metrics(Profile, path)).
  void save_metrics(const std::string& path) const;
  /// Writes one CSV row per metric with its statistics (see save_metrics_summary(Profile, path)).
  void save_metrics_summary(const std::string& path) const;
  /// Draws every metric as a PNG (see plot_metrics(Profile, path)).
  void plot_metrics(const std::string& path) const;

 private:
  Profiler* profiler_;
};

/// The metric named `name` in `profile`, or nullptr.
[[nodiscard]] NNPROF_API const MetricSeries* find_metric(const Profile& profile, std::string_view name);
/// Writes the metrics of `profile` to `path`, in the format its extension names:
///  - ".csv" (any case): tidy points for pandas and spreadsheets, one row per observation:
///    metric,kind,unit,time_ns,value,thread (a counter's value is its running total). Only the
///    points kept under the memory cap; save_metrics_summary gives the complete statistics.
///  - anything else: JSON, {"metrics": [{"name", "kind", "unit", "summary": {...}, "points":
///    [[time_ns, value], ...]}]} (docs/JSON_SCHEMA.md).
/// The file appears complete or not at all; throws nnprof::Error when it cannot be written.
NNPROF_API void save_metrics(const Profile& profile, const std::string& path);
/// Writes one CSV row per metric of `profile` to `path`: metric,kind,unit,count,sum,min,max,
/// mean,stddev,p50,p90,p95,p99,percentile_points,last,points_dropped (MetricSummary; the
/// percentiles empty where no point was kept). Written whatever the extension; atomically.
NNPROF_API void save_metrics_summary(const Profile& profile, const std::string& path);
/// Draws the metrics of `profile` into a PNG at `path`: one panel per metric, a line over
/// time for counters and gauges, a distribution for histograms, each titled with its summary.
/// Throws nnprof::Error when the profile has no metric or the file cannot be written.
NNPROF_API void plot_metrics(const Profile& profile, const std::string& path);

/// The by-name calls and files of Metrics, on the global profiler.
NNPROF_API void increment(std::string_view name, double delta = 1.0) noexcept;
NNPROF_API void set(std::string_view name, double value) noexcept;
NNPROF_API void record(std::string_view name, double value) noexcept;
[[nodiscard]] NNPROF_API MetricTimer measure_time(std::string_view name) noexcept;
NNPROF_API void save_metrics(const std::string& path);
NNPROF_API void save_metrics_summary(const std::string& path);
NNPROF_API void plot_metrics(const std::string& path);

}  // namespace nnprof
