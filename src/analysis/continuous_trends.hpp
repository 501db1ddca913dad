// The per-window series of a continuous run and the trends and anomalies found in them: what
// Profile::continuous stores at stop(), what reports compute for a file a crash left behind.
#pragma once

#include <vector>

#include "nnprof/continuous.hpp"
#include "nnprof/continuous_profile.hpp"
#include "nnprof/trends.hpp"

namespace nnprof::analysis {

/// How many of the run's top functions get a share series of their own.
inline constexpr std::size_t kShareSeries = 5;

/// step_time (ns per step), throughput (items or steps per second), rss, heap, gpu_memory (B),
/// energy_per_step (J), cpu (percent of one core) and share:<function> for the run's top
/// functions by samples. A series no window has a value for is left out.
[[nodiscard]] std::vector<WindowSeries> continuous_series(const ContinuousProfile& continuous);

/// The series, their events (by window, strongest first) and their trends (series with at
/// least options.min_windows values).
[[nodiscard]] PerformanceTrends continuous_trends(const ContinuousProfile& continuous, const TrendOptions& options = {});

/// `continuous` with its anomalies and trends: the stored ones when the run finished, else
/// computed from the windows the file holds.
[[nodiscard]] PerformanceTrends trends_of(const ContinuousProfile& continuous);

}  // namespace nnprof::analysis
