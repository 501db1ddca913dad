// Trends and anomalies of a long run, from per-window series: one value per window (step
// time, throughput, RSS, heap, GPU memory, energy per step, a function's share, ...).
//
//   nnprof::WindowSeries s{"step_time", "ns", starts, values};
//   for (const nnprof::Anomaly& a : nnprof::detect_anomalies(s)) std::cout << a.description << '\n';
//   nnprof::Trend t = nnprof::trend(s);
//
// Pure analysis: it does not care how the windows were recorded or rolled up. Three kinds of
// event, each with the window where it began and the numbers:
//   - LevelShift: a lasting step up or down, from a two-sided CUSUM (Page 1954);
//   - Outlier: an isolated window far from its neighbours, by the modified z-score
//     (Iglewicz & Hoaglin 1993);
//   - Growth: a sustained monotone rise (a leak) or, for a metric where higher is better, a
//     sustained decline: Mann-Kendall test (Mann 1945, Kendall 1975) with Theil-Sen slope
//     (Sen 1968).
// The defaults are chosen so that a stationary series of 10,000 windows with normal noise
// yields no event (docs/TRENDS.md gives the reasoning and the sources).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "nnprof/config.hpp"

namespace nnprof {

/// One metric, one value per window.
struct WindowSeries {
  std::string metric;  ///< "step_time", "rss", "share:forward", ...
  std::string unit;    ///< "ns" and "B" are printed as durations and byte sizes; any other as given
  /// Start of each window, nanoseconds on any monotone clock; the same length as `values`,
  /// increasing. Slopes are per hour of this clock.
  std::vector<std::uint64_t> window_start_ns;
  /// The value of each window; NaN where the window has no value (no step finished in it):
  /// such windows are skipped, never read as zero.
  std::vector<double> values;
  /// Step time, memory and energy: true. Throughput: false. Decides which direction of a
  /// sustained drift is a Growth event and how descriptions word a change.
  bool higher_is_worse = true;
};

enum class AnomalyKind : std::uint8_t {
  LevelShift,  ///< the level changed at `window` and stayed changed
  Outlier,     ///< `window` alone (or a run of at most TrendOptions::outlier_max_run) is far off
  Growth,      ///< a sustained drift in the worse direction began at `window`
};

/// "level-shift", "outlier", "growth".
NNPROF_API const char* to_string(AnomalyKind kind) noexcept;

struct Anomaly {
  AnomalyKind kind = AnomalyKind::LevelShift;
  std::string metric;
  std::string unit;
  std::size_t window = 0;             ///< index into the series of the window where it began
  std::uint64_t window_start_ns = 0;  ///< that window's start
  /// LevelShift: median level before and after the change. Outlier: the neighbourhood's
  /// median and the window's value. Growth: the fitted level where growth began and at the
  /// last window.
  double before = 0.0;
  double after = 0.0;
  /// LevelShift: relative change (after - before) / |before|. Outlier: the modified z-score
  /// (signed). Growth: the fitted slope per hour relative to the level where growth began.
  double magnitude = 0.0;
  /// How strong the evidence is, comparable within a kind: LevelShift: |after - before| in
  /// robust standard deviations of the series' noise; Outlier: |modified z|; Growth: the
  /// Mann-Kendall standard normal statistic.
  double score = 0.0;
  bool worse = true;        ///< the change goes in the metric's bad direction
  std::string description;  ///< one sentence with the numbers

  bool operator==(const Anomaly&) const = default;
};

/// A linear trend over the whole series.
struct Trend {
  std::string metric;
  std::string unit;
  double slope_per_hour = 0.0;           ///< Theil-Sen slope, value units per hour
  double relative_slope_per_hour = 0.0;  ///< slope / |median value| (0 when the median is 0)
  double low = 0.0, high = 0.0;          ///< 95% confidence interval of the slope (Sen 1968)
  bool significant = false;              ///< the interval excludes 0
  std::size_t windows = 0;               ///< windows with a value

  bool operator==(const Trend&) const = default;
};

/// Thresholds of the detectors. Scales are "robust sigma": the series' noise estimated from
/// the median absolute difference between consecutive windows (1.4826 * median|dx| / sqrt 2),
/// which neither a level shift nor an outlier nor a slow drift moves.
struct TrendOptions {
  /// Windows with a value a series needs before anything is reported; shorter series (and
  /// the first windows after a level shift, for the CUSUM) give no event.
  std::size_t min_windows = 8;

  /// CUSUM reference: the level a window is compared with is the median of up to this many
  /// preceding windows since the last level shift.
  std::size_t reference_windows = 60;
  /// CUSUM drift k, in robust sigma: deviations smaller than k are not accumulated, and the
  /// CUSUM is tuned for shifts of about 2k. 0.75: shifts from 1.5 sigma (a 20% step on 2-5%
  /// noise is 4 to 10 sigma). The usual k = 0.5 accumulated chance excursions of stationary
  /// noise (17 windows averaging -1.1 sigma, in 3 of 200 simulated series of 1,000 windows)
  /// into false alarms even with h = 16.
  double cusum_drift = 0.75;
  /// CUSUM decision threshold h, in robust sigma. The textbook h = 4..5 has an in-control
  /// average run length of a few hundred windows, i.e. dozens of false alarms in a week of
  /// 60 s windows. With k = 0.75, h = 14 puts it beyond 1e9 windows (Siegmund's
  /// approximation), leaving a wide margin for the error of the estimated reference; a step of
  /// 5 sigma or more alarms within 4 windows, 4 sigma within 5, 2 sigma within about 12. The
  /// reported window does not depend on that delay (see detect_anomalies).
  double cusum_threshold = 14.0;
  /// Standardized values are clipped to +-this before they enter the CUSUM (a Huber-type
  /// robust CUSUM, Lucas & Crosier 1982), so that an isolated outlier cannot raise an alarm
  /// alone: it takes ceil(h / (clip - k)) = 4 consecutive far-off windows, one more than
  /// outlier_max_run.
  double cusum_clip = 5.0;
  /// A level shift is reported only when |after - before| / |before| reaches this (a shift of
  /// 1% can be statistically clear over a week and still not worth a reader's time).
  double min_relative_shift = 0.05;

  /// Modified z-score threshold of Iglewicz & Hoaglin (0.6745 (x - median) / MAD > 3.5).
  double outlier_z = 3.5;
  /// The threshold is raised to the normal quantile 1 - alpha / (2n) when that is larger
  /// (Bonferroni over the n windows tested): 3.5 suits one batch of tens of values, but a
  /// normal series of 10,000 windows crosses it about 5 times. 0.001: 4.9 at 1,000 windows,
  /// 5.3 at 10,000; a real stall (a checkpoint, a recompilation) is tens of sigmas.
  double outlier_family_alpha = 0.001;
  /// Neighbours on each side whose median and MAD a window is judged against (centred, so
  /// that the windows around a level shift are judged against both levels, not flagged).
  /// The scale is the larger of 1.4826 MAD of the neighbours and the series' robust sigma:
  /// the MAD of 100 values is 10-20% low often enough to turn normal 4-sigma draws into
  /// outliers.
  std::size_t outlier_neighbours = 50;
  /// Consecutive outliers in one direction beyond this many are not outliers but a level
  /// change (the CUSUM's business): one step must not read as a run of outliers.
  std::size_t outlier_max_run = 3;

  /// Growth: one-sided Mann-Kendall significance level.
  double growth_alpha = 0.01;
  /// Growth: the Theil-Sen rise over the growing stretch must reach this fraction of the
  /// level where it began.
  double min_relative_growth = 0.10;
  /// Growth: the growing stretch must span at least this many windows with a value.
  std::size_t min_growth_windows = 30;

  /// Floor of the noise scale, relative to |median|: a constant series (MAD = 0) would
  /// otherwise divide by zero and make any change infinitely significant.
  double scale_floor_relative = 1e-3;
  /// Absolute floor of the noise scale, for series whose median is 0.
  double scale_floor_absolute = 1e-12;

  /// Theil-Sen and Mann-Kendall are O(n^2) in the points they see: longer series are reduced
  /// to this many consecutive-window bins (each its median value at its mean time) first.
  std::size_t max_trend_points = 600;
};

/// Events of one series, by window. Throws std::invalid_argument when `window_start_ns` and
/// `values` differ in length.
NNPROF_API std::vector<Anomaly> detect_anomalies(const WindowSeries& series,
                                                 const TrendOptions& options = {});

/// Events of several series, sorted by window, then by score (strongest first).
NNPROF_API std::vector<Anomaly> detect_anomalies(const std::vector<WindowSeries>& series,
                                                 const TrendOptions& options = {});

/// The Theil-Sen slope of the whole series with its 95% confidence interval.
NNPROF_API Trend trend(const WindowSeries& series, const TrendOptions& options = {});

}  // namespace nnprof
