// Trends and anomalies of per-window series (include/nnprof/trends.hpp; methods and their
// sources in docs/TRENDS.md).
//
// Order of work for one series: windows without a value are dropped (positions below index
// the remaining points); Growth is looked for first, because a leak seen by a CUSUM is a
// staircase of level shifts: where a growth is found its Theil-Sen line is subtracted before
// the CUSUM runs, so that the CUSUM sees only steps. Outliers are judged on the raw values
// against centred neighbourhoods, which a step or a slow drift does not disturb.
#include "nnprof/trends.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>
#include <numbers>
#include <numeric>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "analysis/statistics/normal.hpp"

namespace nnprof {

const char* to_string(AnomalyKind kind) noexcept {
  switch (kind) {
    case AnomalyKind::LevelShift: return "level-shift";
    case AnomalyKind::Outlier: return "outlier";
    case AnomalyKind::Growth: return "growth";
  }
  return "unknown";
}

namespace {

using analysis::statistics::normal_upper_tail;

constexpr double kNanosecondsPerHour = 3.6e12;
// MAD of a normal sample is 0.6745 sigma; 1.4826 = 1 / 0.6745.
constexpr double kMadToSigma = 1.4826;
constexpr double kModifiedZFactor = 0.6745;

/// The windows that have a value.
struct Points {
  std::vector<std::size_t> window;  ///< index in the series
  std::vector<double> hours;        ///< window start, hours since the first window's start
  std::vector<double> value;
  [[nodiscard]] std::size_t size() const noexcept { return value.size(); }
};

Points valid_points(const WindowSeries& series) {
  if (series.window_start_ns.size() != series.values.size()) {
    throw std::invalid_argument("nnprof::WindowSeries '" + series.metric + "': " +
                                std::to_string(series.window_start_ns.size()) + " window starts for " +
                                std::to_string(series.values.size()) + " values");
  }
  Points points;
  const std::uint64_t origin = series.window_start_ns.empty() ? 0 : series.window_start_ns.front();
  for (std::size_t i = 0; i < series.values.size(); ++i) {
    const double v = series.values[i];
    if (!std::isfinite(v)) continue;
    points.window.push_back(i);
    // Signed difference: a clock that is not monotone must not wrap to 5e5 hours.
    const double ns = static_cast<double>(series.window_start_ns[i]) - static_cast<double>(origin);
    points.hours.push_back(ns / kNanosecondsPerHour);
    points.value.push_back(v);
  }
  return points;
}

/// Median of `v`, reordering it. NaN for an empty vector.
double median_in_place(std::vector<double>& v) {
  if (v.empty()) return std::numeric_limits<double>::quiet_NaN();
  const std::size_t mid = v.size() / 2;
  std::nth_element(v.begin(), v.begin() + static_cast<std::ptrdiff_t>(mid), v.end());
  const double upper = v[mid];
  if (v.size() % 2 == 1) return upper;
  const double lower = *std::max_element(v.begin(), v.begin() + static_cast<std::ptrdiff_t>(mid));
  return 0.5 * (lower + upper);
}

double median_of(const double* first, const double* last) {
  std::vector<double> copy(first, last);
  return median_in_place(copy);
}

/// Median absolute deviation from `center`, reordering nothing of the caller's.
double mad_of(const std::vector<double>& v, double center) {
  std::vector<double> deviations(v.size());
  std::transform(v.begin(), v.end(), deviations.begin(), [center](double x) { return std::fabs(x - center); });
  return median_in_place(deviations);
}

/// The smallest noise scale (sigma units) the detectors use: without it a constant series
/// (MAD 0) makes any change infinitely many sigmas.
double scale_floor(double level, const TrendOptions& options) {
  return std::max(options.scale_floor_relative * std::fabs(level), options.scale_floor_absolute);
}

/// Robust sigma of the noise from consecutive differences: 1.4826 * median|x[i] - x[i-1]| / sqrt 2.
/// A level shift changes one difference and a slow drift shifts them all by a little, so
/// neither inflates it the way they inflate the MAD of the values; it uses every window, so
/// it is far steadier than the MAD of a short reference period (20-40% error at 8-60 values,
/// which a CUSUM turns into false alarms).
double noise_sigma(const std::vector<double>& values, const TrendOptions& options) {
  std::vector<double> differences;
  differences.reserve(values.size());
  for (std::size_t i = 1; i < values.size(); ++i) differences.push_back(std::fabs(values[i] - values[i - 1]));
  const double sigma = differences.empty() ? 0.0 : kMadToSigma * median_in_place(differences) / std::numbers::sqrt2;
  std::vector<double> copy = values;
  return std::max(sigma, scale_floor(median_in_place(copy), options));
}

/// Upper quantile of the standard normal: z with P(Z > z) = p, by bisection on erfc (exact
/// to double precision in the far tail, where the rational approximations lose digits).
double normal_upper_quantile(double p) {
  double low = -40.0, high = 40.0;
  for (int i = 0; i < 200 && high - low > 1e-12; ++i) {
    const double mid = 0.5 * (low + high);
    (normal_upper_tail(mid) > p ? low : high) = mid;
  }
  return 0.5 * (low + high);
}

// ---------------------------------------------------------------------------------------
// Theil-Sen and Mann-Kendall

struct XY {
  double x;
  double y;
};

/// The points [first, last) as at most `max_points` (x, y) pairs: consecutive bins of equal
/// count, each its median time and median value. On a straight line the median value of a
/// bin lies at its median time, so the Theil-Sen slope of the bins stays exact; with noise
/// the bins' medians are independent and less noisy, so the tests keep their meaning.
std::vector<XY> reduced(const Points& points, std::size_t first, std::size_t last, std::size_t max_points) {
  const std::size_t n = last - first;
  std::vector<XY> out;
  if (n <= max_points || max_points < 2) {
    out.reserve(n);
    for (std::size_t i = first; i < last; ++i) out.push_back({points.hours[i], points.value[i]});
    return out;
  }
  out.reserve(max_points);
  for (std::size_t b = 0; b < max_points; ++b) {
    const std::size_t begin = first + b * n / max_points;
    const std::size_t end = first + (b + 1) * n / max_points;
    out.push_back({median_of(points.hours.data() + begin, points.hours.data() + end),
                   median_of(points.value.data() + begin, points.value.data() + end)});
  }
  return out;
}

struct MannKendall {
  double s = 0.0;         ///< sum of sign(y_j - y_i) over i < j
  double variance = 0.0;  ///< of S under no trend, with the tie correction
  /// Standard normal statistic with continuity correction: (S - sign(S)) / sqrt(var).
  [[nodiscard]] double z() const {
    if (variance <= 0.0) return 0.0;
    const double corrected = s > 0 ? s - 1.0 : (s < 0 ? s + 1.0 : 0.0);
    return corrected / std::sqrt(variance);
  }
};

MannKendall mann_kendall(const std::vector<XY>& xy) {
  MannKendall mk;
  const std::size_t n = xy.size();
  for (std::size_t i = 0; i < n; ++i) {
    for (std::size_t j = i + 1; j < n; ++j) {
      const double d = xy[j].y - xy[i].y;
      mk.s += d > 0 ? 1.0 : (d < 0 ? -1.0 : 0.0);
    }
  }
  std::vector<double> ys(n);
  std::transform(xy.begin(), xy.end(), ys.begin(), [](const XY& p) { return p.y; });
  std::sort(ys.begin(), ys.end());
  const auto dn = static_cast<double>(n);
  double variance = dn * (dn - 1.0) * (2.0 * dn + 5.0);
  for (std::size_t i = 0; i < n;) {
    std::size_t j = i;
    while (j < n && ys[j] == ys[i]) ++j;
    const auto t = static_cast<double>(j - i);
    variance -= t * (t - 1.0) * (2.0 * t + 5.0);
    i = j;
  }
  mk.variance = variance / 18.0;
  return mk;
}

struct SenSlope {
  double slope = 0.0;
  double low = 0.0;
  double high = 0.0;
  double intercept = 0.0;  ///< median of y - slope * x
};

/// Theil-Sen slope (median of the pairwise slopes) with Sen's (1968) confidence interval:
/// with C = z_{1-a/2} sqrt(Var S) of the Mann-Kendall statistic, the bounds are the
/// M1 = (N - C) / 2-th and (M2 + 1) = ((N + C) / 2 + 1)-th ordered slopes of the N pairs
/// (Gilbert 1987, 16.5), rounded outward.
SenSlope sen_slope(const std::vector<XY>& xy, const MannKendall& mk, double confidence) {
  SenSlope sen;
  std::vector<double> slopes;
  slopes.reserve(xy.size() * (xy.size() - 1) / 2);
  for (std::size_t i = 0; i < xy.size(); ++i) {
    for (std::size_t j = i + 1; j < xy.size(); ++j) {
      const double dx = xy[j].x - xy[i].x;
      if (dx > 0) slopes.push_back((xy[j].y - xy[i].y) / dx);
    }
  }
  if (slopes.empty()) return sen;
  sen.slope = median_in_place(slopes);
  const auto count = static_cast<double>(slopes.size());
  const double c = normal_upper_quantile((1.0 - confidence) / 2.0) * std::sqrt(std::max(mk.variance, 0.0));
  const double m1 = std::clamp(std::floor((count - c) / 2.0), 1.0, count);
  const double m2_plus_1 = std::clamp(std::ceil((count + c) / 2.0) + 1.0, 1.0, count);
  const auto order_statistic = [&slopes](double one_based) {
    const auto k = static_cast<std::ptrdiff_t>(one_based) - 1;
    std::nth_element(slopes.begin(), slopes.begin() + k, slopes.end());
    return slopes[static_cast<std::size_t>(k)];
  };
  sen.low = order_statistic(m1);
  sen.high = order_statistic(m2_plus_1);
  std::vector<double> residuals(xy.size());
  std::transform(xy.begin(), xy.end(), residuals.begin(), [&sen](const XY& p) { return p.y - sen.slope * p.x; });
  sen.intercept = median_in_place(residuals);
  return sen;
}

// ---------------------------------------------------------------------------------------
// Formatting of the descriptions

std::string format_number(double value, const char* suffix) {
  char buffer[64];
  std::snprintf(buffer, sizeof buffer, "%.3g%s", value, suffix);
  return buffer;
}

/// A value in its unit: "ns" as a duration, "B" as a byte size (binary prefixes), any other
/// unit after the number.
std::string format_value(double value, const std::string& unit) {
  const double magnitude = std::fabs(value);
  if (unit == "ns") {
    if (magnitude >= 3.6e12) return format_number(value / 3.6e12, " h");
    if (magnitude >= 6e10) return format_number(value / 6e10, " min");
    if (magnitude >= 1e9) return format_number(value / 1e9, " s");
    if (magnitude >= 1e6) return format_number(value / 1e6, " ms");
    if (magnitude >= 1e3) return format_number(value / 1e3, " µs");
    return format_number(value, " ns");
  }
  if (unit == "B") {
    static constexpr const char* kPrefixes[] = {" B", " KiB", " MiB", " GiB", " TiB", " PiB"};
    std::size_t prefix = 0;
    double scaled = value;
    while (std::fabs(scaled) >= 1024.0 && prefix + 1 < std::size(kPrefixes)) {
      scaled /= 1024.0;
      ++prefix;
    }
    return format_number(scaled, kPrefixes[prefix]);
  }
  return unit.empty() ? format_number(value, "") : format_number(value, (" " + unit).c_str());
}

std::string format_percent(double fraction) {
  char buffer[64];
  std::snprintf(buffer, sizeof buffer, "%+.1f%%", 100.0 * fraction);
  return buffer;
}

/// Relative change, with a denominator that is never 0.
double relative_change(double before, double after, double floor) {
  return (after - before) / std::max(std::fabs(before), floor);
}

Anomaly make_anomaly(AnomalyKind kind, const WindowSeries& series, const Points& points, std::size_t position) {
  Anomaly a;
  a.kind = kind;
  a.metric = series.metric;
  a.unit = series.unit;
  a.window = points.window[position];
  a.window_start_ns = series.window_start_ns[a.window];
  return a;
}

// ---------------------------------------------------------------------------------------
// Growth

struct GrowthFit {
  bool found = false;
  std::size_t start = 0;  ///< position where growth began
  double slope = 0.0;     ///< Theil-Sen, value units per hour (in the series' own direction)
  double level_at_start = 0.0;
  double z = 0.0;
};

/// The start of a growth: the hinge point g of the least-squares fit y = a + b (t - t_g)+,
/// i.e. the change point of the slope from 0 to b, over every g that leaves at least
/// `min_growth_windows` points after it. O(n) with suffix sums. The fit must explain more
/// than the best single step up does, else the rise is a level shift, not a growth.
/// `direction` is +1 to look for a rise, -1 for a decline.
GrowthFit find_growth(const Points& points, double direction, const TrendOptions& options) {
  GrowthFit fit;
  const std::size_t n = points.size();
  const std::size_t min_tail = std::max<std::size_t>(options.min_growth_windows, 3);
  if (n < std::max(options.min_windows, min_tail + 1)) return fit;

  // Centred values in the searched direction: sums of them are then small and exact enough.
  std::vector<double> y(n);
  for (std::size_t i = 0; i < n; ++i) y[i] = direction * points.value[i];
  const double mean = std::accumulate(y.begin(), y.end(), 0.0) / static_cast<double>(n);
  for (double& v : y) v -= mean;
  const std::vector<double>& t = points.hours;

  // Best step up: reduction of the residual sum of squares P^2 n / (n1 n2), P = sum of the
  // first n1 centred values (negative when the later part is higher).
  double best_step = 0.0;
  double prefix = 0.0;
  for (std::size_t split = 1; split < n; ++split) {
    prefix += y[split - 1];
    if (prefix >= 0.0) continue;
    const auto n1 = static_cast<double>(split);
    const auto n2 = static_cast<double>(n - split);
    best_step = std::max(best_step, prefix * prefix * static_cast<double>(n) / (n1 * n2));
  }

  // Hinge: with u_j = (t_j - t_g) for j >= g, 0 before, the reduction is Suy^2 / Suu.
  double best_hinge = 0.0;
  std::size_t best_start = n;
  double sum_t = 0.0, sum_t2 = 0.0, sum_ty = 0.0, sum_y = 0.0;
  const auto dn = static_cast<double>(n);
  for (std::size_t g = n; g-- > 0;) {
    sum_t += t[g];
    sum_t2 += t[g] * t[g];
    sum_ty += t[g] * y[g];
    sum_y += y[g];
    if (n - g < min_tail) continue;
    const auto count = static_cast<double>(n - g);
    const double sum_u = sum_t - t[g] * count;
    const double sum_u2 = sum_t2 - 2.0 * t[g] * sum_t + t[g] * t[g] * count;
    const double suu = sum_u2 - sum_u * sum_u / dn;
    const double suy = sum_ty - t[g] * sum_y;  // y is centred: the sum_u * sum(y) / n term is 0
    if (suu <= 0.0 || suy <= 0.0) continue;
    const double reduction = suy * suy / suu;
    if (reduction > best_hinge) {
      best_hinge = reduction;
      best_start = g;
    }
  }
  if (best_start == n || best_hinge <= best_step) return fit;

  // The stretch from the hinge on must rise monotonically (Mann-Kendall, one-sided) and by
  // enough (Theil-Sen).
  Points directed;
  directed.hours = points.hours;
  directed.value.resize(n);
  for (std::size_t i = 0; i < n; ++i) directed.value[i] = direction * points.value[i];
  const std::vector<XY> tail = reduced(directed, best_start, n, options.max_trend_points);
  const MannKendall mk = mann_kendall(tail);
  if (normal_upper_tail(mk.z()) >= options.growth_alpha) return fit;
  const SenSlope sen = sen_slope(tail, mk, 0.95);
  if (sen.slope <= 0.0) return fit;
  const double level = sen.intercept + sen.slope * t[best_start];
  const double rise = sen.slope * (t[n - 1] - t[best_start]);
  if (rise < options.min_relative_growth * std::max(std::fabs(level), scale_floor(level, options))) return fit;

  fit.found = true;
  fit.start = best_start;
  fit.slope = direction * sen.slope;
  fit.level_at_start = direction * level;
  fit.z = mk.z();
  return fit;
}

Anomaly growth_anomaly(const WindowSeries& series, const Points& points, const GrowthFit& fit,
                       const TrendOptions& options) {
  Anomaly a = make_anomaly(AnomalyKind::Growth, series, points, fit.start);
  const std::size_t last = points.size() - 1;
  a.before = fit.level_at_start;
  a.after = fit.level_at_start + fit.slope * (points.hours[last] - points.hours[fit.start]);
  a.magnitude = fit.slope / std::max(std::fabs(fit.level_at_start), scale_floor(fit.level_at_start, options));
  a.score = fit.z;
  a.worse = true;  // only the worse direction is looked for
  const bool rising = fit.slope > 0;
  a.description = series.metric + (rising ? " grew steadily from " : " declined steadily from ") +
                  format_value(a.before, series.unit) + " at window " + std::to_string(a.window) + " to " +
                  format_value(a.after, series.unit) + " at window " + std::to_string(points.window[last]) +
                  ": " + (rising ? "+" : "") + format_value(fit.slope, series.unit) + " per hour (" +
                  format_percent(a.magnitude) + " per hour; Mann-Kendall z = " + format_number(fit.z, "") + ").";
  return a;
}

// ---------------------------------------------------------------------------------------
// Level shifts

/// Two-sided CUSUM (Page 1954) on values standardized by the median of up to
/// `reference_windows` preceding values since the last change and by the series' robust
/// sigma, clipped to +-cusum_clip. At an alarm, the change point is the generalized
/// likelihood ratio estimate of a step of unknown size from the reference level: the split
/// tau maximizing (sum_{j >= tau} z_j)^2 / (count), over the stretch since the statistic last
/// left zero (reaching back up to `reference_windows` more, since a chance positive run can
/// start the statistic early) and up to `min_windows` windows past the alarm (the series is
/// analysed whole, so the windows after the alarm can vouch for where the new level began).
/// For a step of 4 sigma or more this locates the window itself; the classic "last zero of
/// the CUSUM" is early whenever noise lifted the statistic just before the change. Then the
/// reference restarts at the change point, so that one step gives one alarm.
std::vector<std::size_t> cusum_change_points(const std::vector<double>& values, double sigma,
                                             const TrendOptions& options) {
  std::vector<std::size_t> changes;
  const std::size_t n = values.size();
  const std::size_t warmup = std::max<std::size_t>(options.min_windows, 2);
  const std::size_t reference = std::max(options.reference_windows, warmup);
  const double k = options.cusum_drift;
  const double h = options.cusum_threshold;
  const double clip = options.cusum_clip;

  std::size_t restart = 0;
  std::size_t i = warmup;
  double up = 0.0, down = 0.0;
  std::size_t last_zero_up = i - 1, last_zero_down = i - 1;
  while (i < n) {
    const std::size_t ref_begin = std::max(restart, i > reference ? i - reference : 0);
    const double ref = median_of(values.data() + ref_begin, values.data() + i);
    const double z = (values[i] - ref) / sigma;
    const double clipped = std::clamp(z, -clip, clip);
    up = std::max(0.0, up + clipped - k);
    down = std::max(0.0, down - clipped - k);
    if (up == 0.0) last_zero_up = i;
    if (down == 0.0) last_zero_down = i;
    if (up <= h && down <= h) {
      ++i;
      continue;
    }
    const double direction = up > h ? 1.0 : -1.0;
    const std::size_t left_zero = (up > h ? last_zero_up : last_zero_down) + 1;
    const std::size_t search_begin = std::max(restart + 1, left_zero > reference ? left_zero - reference : 0);
    const std::size_t search_end = std::min(n, i + 1 + warmup);
    // Suffix sums of the standardized values, clipped at twice the shift's size (the median
    // from the alarm on, where the new level surely holds; the statistic may have left zero
    // well before the change): large enough not to blunt the step itself (clipped at
    // cusum_clip, an 8-sigma step cannot be told from the 2-sigma noise just before it), small
    // enough that one outlier after the change cannot pull the estimate onto itself.
    std::vector<double> shifted;
    for (std::size_t j = i; j < search_end; ++j) shifted.push_back(direction * (values[j] - ref) / sigma);
    const double glr_clip = std::max(clip, 2.0 * median_in_place(shifted));
    std::vector<double> suffix(search_end - search_begin + 1, 0.0);
    for (std::size_t j = search_end; j-- > search_begin;) {
      const double zj = std::clamp(direction * (values[j] - ref) / sigma, -glr_clip, glr_clip);
      suffix[j - search_begin] = suffix[j - search_begin + 1] + zj;
    }
    double best = -1.0;
    std::size_t change = left_zero;
    for (std::size_t j = search_begin; j <= i; ++j) {
      const double sum = suffix[j - search_begin];
      if (sum <= 0.0) continue;
      const double statistic = sum * sum / static_cast<double>(search_end - j);
      if (statistic > best) {
        best = statistic;
        change = j;
      }
    }
    changes.push_back(change);
    restart = change;
    i = restart + warmup;
    up = down = 0.0;
    last_zero_up = last_zero_down = i - 1;
  }
  return changes;
}

// ---------------------------------------------------------------------------------------
// Outliers

/// Modified z-scores (Iglewicz & Hoaglin 1993) of the values less any fitted growth (at the
/// ends of a growing series the neighbourhood is one-sided, and its median would trail the
/// line) against the centred neighbourhood of
/// `outlier_neighbours` points on each side, the point itself left out, with the MAD no
/// smaller than the series' robust sigma (`sigma`, as a MAD: sigma / 1.4826); runs of more than
/// `outlier_max_run` consecutive outliers in one direction are a level change and dropped.
void find_outliers(const WindowSeries& series, const Points& points, const std::vector<double>& steady,
                   const std::vector<double>& growth_part, double sigma, const TrendOptions& options,
                   std::vector<Anomaly>& out) {
  const std::size_t n = points.size();
  const double family_threshold = normal_upper_quantile(options.outlier_family_alpha / (2.0 * static_cast<double>(n)));
  const double threshold = std::max(options.outlier_z, family_threshold);
  const std::size_t w = std::max<std::size_t>(options.outlier_neighbours, 1);

  struct Flag {
    std::size_t position;
    double z;
    double median;
  };
  std::vector<Flag> flags;
  std::vector<double> neighbours;
  for (std::size_t p = 0; p < n; ++p) {
    const std::size_t begin = p > w ? p - w : 0;
    const std::size_t end = std::min(n, p + w + 1);
    neighbours.assign(steady.begin() + static_cast<std::ptrdiff_t>(begin), steady.begin() + static_cast<std::ptrdiff_t>(p));
    neighbours.insert(neighbours.end(), steady.begin() + static_cast<std::ptrdiff_t>(p + 1),
                      steady.begin() + static_cast<std::ptrdiff_t>(end));
    std::vector<double> copy = neighbours;
    const double median = median_in_place(copy);
    const double mad = std::max({mad_of(neighbours, median), sigma / kMadToSigma, scale_floor(median, options) / kMadToSigma});
    const double z = kModifiedZFactor * (steady[p] - median) / mad;
    if (std::fabs(z) > threshold) flags.push_back({p, z, median + growth_part[p]});
  }

  for (std::size_t first = 0; first < flags.size();) {
    std::size_t last = first;
    while (last + 1 < flags.size() && flags[last + 1].position == flags[last].position + 1 &&
           (flags[last + 1].z > 0) == (flags[first].z > 0)) {
      ++last;
    }
    if (last - first + 1 <= options.outlier_max_run) {
      for (std::size_t f = first; f <= last; ++f) {
        Anomaly a = make_anomaly(AnomalyKind::Outlier, series, points, flags[f].position);
        a.before = flags[f].median;
        a.after = points.value[flags[f].position];
        a.magnitude = flags[f].z;
        a.score = std::fabs(flags[f].z);
        a.worse = (flags[f].z > 0) == series.higher_is_worse;
        const double change = relative_change(a.before, a.after, scale_floor(a.before, options));
        a.description = series.metric + " was " + format_value(a.after, series.unit) + " at window " +
                        std::to_string(a.window) + ", " + format_percent(change) + " from its neighbours' median of " +
                        format_value(a.before, series.unit) + " (an outlier, modified z-score " +
                        format_number(a.magnitude, "") + ").";
        out.push_back(std::move(a));
      }
    }
    first = last + 1;
  }
}

}  // namespace

std::vector<Anomaly> detect_anomalies(const WindowSeries& series, const TrendOptions& options) {
  const Points points = valid_points(series);
  std::vector<Anomaly> out;
  const std::size_t n = points.size();
  if (n < std::max<std::size_t>(options.min_windows, 3)) return out;

  const GrowthFit growth = find_growth(points, series.higher_is_worse ? 1.0 : -1.0, options);
  if (growth.found) out.push_back(growth_anomaly(series, points, growth, options));

  // What the fitted growth line adds at each point: removed for the CUSUM, added back to the
  // levels it reports, so that a step during a growth is still seen and read in real values.
  std::vector<double> growth_part(n, 0.0);
  if (growth.found) {
    for (std::size_t p = growth.start; p < n; ++p) {
      growth_part[p] = growth.slope * (points.hours[p] - points.hours[growth.start]);
    }
  }
  std::vector<double> steady(n);
  for (std::size_t p = 0; p < n; ++p) steady[p] = points.value[p] - growth_part[p];
  const double sigma = noise_sigma(steady, options);
  const std::vector<std::size_t> changes = cusum_change_points(steady, sigma, options);
  const std::size_t reference = std::max(options.reference_windows, options.min_windows);
  for (std::size_t c = 0; c < changes.size(); ++c) {
    const std::size_t change = changes[c];
    const std::size_t previous = c == 0 ? 0 : changes[c - 1];
    const std::size_t next = c + 1 < changes.size() ? changes[c + 1] : n;
    const std::size_t before_begin = std::max(previous, change > reference ? change - reference : 0);
    const std::size_t after_end = std::min(next, change + reference);
    const double before = median_of(steady.data() + before_begin, steady.data() + change) + growth_part[change];
    const double after = median_of(steady.data() + change, steady.data() + after_end) + growth_part[change];
    const double change_ratio = relative_change(before, after, scale_floor(before, options));
    if (std::fabs(change_ratio) < options.min_relative_shift) continue;
    Anomaly a = make_anomaly(AnomalyKind::LevelShift, series, points, change);
    a.before = before;
    a.after = after;
    a.magnitude = change_ratio;
    a.score = std::fabs(after - before) / sigma;
    a.worse = (after > before) == series.higher_is_worse;
    a.description = series.metric + (after > before ? " rose " : " fell ") + format_percent(std::fabs(change_ratio)).substr(1) +
                    " from " + format_value(before, series.unit) + " to " + format_value(after, series.unit) +
                    " at window " + std::to_string(a.window) + " and stayed there (a level shift of " +
                    format_number(a.score, "") + " times its noise).";
    out.push_back(std::move(a));
  }

  find_outliers(series, points, steady, growth_part, sigma, options, out);
  std::stable_sort(out.begin(), out.end(), [](const Anomaly& l, const Anomaly& r) { return l.window < r.window; });
  return out;
}

std::vector<Anomaly> detect_anomalies(const std::vector<WindowSeries>& series, const TrendOptions& options) {
  std::vector<Anomaly> out;
  for (const WindowSeries& s : series) {
    std::vector<Anomaly> own = detect_anomalies(s, options);
    out.insert(out.end(), std::make_move_iterator(own.begin()), std::make_move_iterator(own.end()));
  }
  std::stable_sort(out.begin(), out.end(), [](const Anomaly& l, const Anomaly& r) {
    return l.window != r.window ? l.window < r.window : l.score > r.score;
  });
  return out;
}

Trend trend(const WindowSeries& series, const TrendOptions& options) {
  const Points points = valid_points(series);
  Trend t;
  t.metric = series.metric;
  t.unit = series.unit;
  t.windows = points.size();
  if (points.size() < 2) return t;
  const std::vector<XY> xy = reduced(points, 0, points.size(), options.max_trend_points);
  const MannKendall mk = mann_kendall(xy);
  const SenSlope sen = sen_slope(xy, mk, 0.95);
  t.slope_per_hour = sen.slope;
  t.low = std::min(sen.low, sen.slope);
  t.high = std::max(sen.high, sen.slope);
  std::vector<double> values = points.value;
  const double median = median_in_place(values);
  t.relative_slope_per_hour = median == 0.0 ? 0.0 : sen.slope / std::fabs(median);
  // Fewer windows than detection needs: the interval is reported but not called significant.
  t.significant = points.size() >= options.min_windows && (t.low > 0.0 || t.high < 0.0);
  return t;
}

}  // namespace nnprof
