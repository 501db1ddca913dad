// Continuous profiling of a long run: the run is cut into windows of a fixed interval (closed
// at the first step end after the interval when the program marks steps), each window keeps
// what happened in it (scope statistics as deltas, CPU samples by function, heap, RSS, GPU
// memory, energy), older windows are rolled up into coarser ones so that the profiler's state
// stays bounded whatever the run's length, and each finished window is appended to the .nnprof
// file as it goes, so that a crash loses at most the window in progress.
//
//   auto profiler = nnprof::ContinuousProfilerBuilder()
//                       .sampling_interval(std::chrono::seconds(60))
//                       .metrics({"cpu", "memory", "gpu"})
//                       .output("train.nnprof")
//                       .build();
//   profiler.start();
//   train_model();                        // NNPROF_SCOPE("step") + nnprof::add_items("step", batch)
//   nnprof::Profile data = profiler.stop();
//   nnprof::PerformanceTrends trends = nnprof::analyze_performance_trends(data);
//   for (const nnprof::Anomaly& a : trends.anomalies) std::cout << a.description << '\n';
//
// docs/CONTINUOUS.md describes the windows, their alignment, rollups, the memory bound and the
// file tables; docs/TRENDS.md the detectors.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "nnprof/config.hpp"
#include "nnprof/continuous_profile.hpp"
#include "nnprof/profile.hpp"
#include "nnprof/trends.hpp"

namespace nnprof {

class Profiler;

/// How windows are rolled up as they age: raw for `raw_for`, then buckets of `medium` until
/// `medium_for`, then buckets of `coarse`. A rolled-up window's counts and times are the exact
/// sums of the windows it replaces. Past `max_windows` the oldest coarse windows are merged in
/// pairs, so the number of windows (and the memory they take) has a bound whatever the length.
struct RollupPolicy {
  std::chrono::nanoseconds raw_for = std::chrono::hours(24);
  std::chrono::nanoseconds medium = std::chrono::minutes(10);
  std::chrono::nanoseconds medium_for = std::chrono::hours(24 * 7);
  std::chrono::nanoseconds coarse = std::chrono::hours(1);
  std::size_t max_windows = 4096;
  std::size_t top_functions = 10;  ///< functions kept per window; the rest is one "[other]" entry
  std::size_t top_scopes = 16;     ///< scopes kept per window; the rest is one "[other]" entry
};

/// A monotone clock in nanoseconds, for tests that drive a simulated run (no sleeping).
using ContinuousClock = std::function<std::uint64_t()>;

struct ContinuousOptions {
  /// The raw windows' length.
  std::chrono::nanoseconds interval = std::chrono::seconds(60);
  /// What to collect besides scope statistics: "cpu" (CPU sampling at `sample_hz`), "memory"
  /// (heap tracking and RSS), "gpu" (GPU memory, through the system monitor's NVML tracks),
  /// "system" (the system monitor: CPU use, energy). "gpu" implies the system monitor.
  std::vector<std::string> metrics = {"cpu", "memory"};
  /// The scope whose ends mark steps (a window closes at the first one after the interval).
  /// Empty: the first scope, by total time, that reported work items (nnprof::add_items);
  /// none: windows close at the interval.
  std::string step_scope;
  /// How long past the interval a window waits for a step end, as a fraction of the interval;
  /// a step longer than that closes the window unaligned.
  double max_step_wait = 0.5;
  /// Written as the run goes: each finished window is appended in its own transaction, and
  /// stop() writes the whole profile. Empty: nothing is written.
  std::string output_path;
  RollupPolicy rollup;
  double sample_hz = 19.0;  ///< CPU samples per second per thread for "cpu"
  std::uint32_t system_interval_ms = 1000;  ///< system monitor period for "system"/"gpu"
  /// Where time comes from: empty: the steady clock. A test gives a fake clock and calls
  /// ContinuousProfiler::poll() itself (`background = false`).
  ContinuousClock clock;
  /// A thread of the profiler watches the clock and the step scope and closes windows. False:
  /// the program (or a test) calls poll().
  bool background = true;
  /// Anomalies and trends are recomputed every this many windows while the run goes (for the
  /// live view); stop() always computes them. 0: only at stop().
  std::size_t analyze_every = 10;
};

/// The trends and anomalies of a continuous run (analyze_performance_trends).
struct PerformanceTrends {
  std::vector<WindowSeries> series;  ///< the per-window series analysed
  std::vector<Anomaly> anomalies;    ///< by window, strongest first
  std::vector<Trend> trends;         ///< one per series with enough windows
};

/// Runs a continuous profile over a Profiler (the process-wide one unless one is given). The
/// profiler's own span buffers stay within its memory cap; give it a small one (or
/// record_spans = false) for a long run: `nnprof record --continuous` uses an 8 MiB flight
/// recorder.
class NNPROF_API ContinuousProfiler {
 public:
  explicit ContinuousProfiler(const ContinuousOptions& options = {});
  ContinuousProfiler(Profiler& profiler, const ContinuousOptions& options);
  ~ContinuousProfiler();
  ContinuousProfiler(const ContinuousProfiler&) = delete;
  ContinuousProfiler& operator=(const ContinuousProfiler&) = delete;
  ContinuousProfiler(ContinuousProfiler&&) noexcept;
  ContinuousProfiler& operator=(ContinuousProfiler&&) noexcept;

  /// Starts the collectors the metrics ask for, writes the first file (when an output path is
  /// given) and opens the first window. Throws nnprof::Error when the file cannot be written.
  void start();
  /// Closes the window in progress, stops the collectors and returns the profile: the
  /// profiler's statistics snapshot with Profile::continuous holding every window, the
  /// anomalies and the trends; writes it to the output path when one is given.
  Profile stop();
  /// Closes the window in progress when it is due (the interval elapsed and a step ended, or the
  /// wait for one ran out); returns whether one closed. The background thread calls it; a test
  /// with a fake clock calls it itself.
  bool poll();

  /// The windows, anomalies and trends so far (a copy; for a live view).
  [[nodiscard]] ContinuousProfile current() const;
  /// Bytes of state the windows take now (the window store, its names and lists): what the
  /// memory bound is checked against.
  [[nodiscard]] std::size_t state_bytes() const;
  [[nodiscard]] const ContinuousOptions& options() const noexcept;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

/// The seed's builder: ContinuousProfilerBuilder().sampling_interval(60s).metrics({...}).build().
class NNPROF_API ContinuousProfilerBuilder {
 public:
  ContinuousProfilerBuilder& sampling_interval(std::chrono::nanoseconds interval);
  ContinuousProfilerBuilder& metrics(std::vector<std::string> names);
  ContinuousProfilerBuilder& step_scope(std::string name);
  ContinuousProfilerBuilder& output(std::string path);
  ContinuousProfilerBuilder& rollup(const RollupPolicy& policy);
  ContinuousProfilerBuilder& clock(ContinuousClock clock);
  /// Throws std::invalid_argument for an interval of 0 or an unknown metric name.
  [[nodiscard]] ContinuousProfiler build() const;
  [[nodiscard]] const ContinuousOptions& options() const noexcept { return options_; }

 private:
  ContinuousOptions options_;
};

/// The per-window series of a continuous profile: step time, throughput, RSS, heap, GPU memory,
/// energy per step, CPU use and each top function's share of the samples.
NNPROF_API std::vector<WindowSeries> window_series(const ContinuousProfile& continuous);

/// The trends and anomalies of `profile`'s windows, computed afresh (Profile::continuous holds
/// those of a finished run already). Empty for a profile that is not a continuous run.
NNPROF_API PerformanceTrends analyze_performance_trends(const Profile& profile, const TrendOptions& options = {});

}  // namespace nnprof
