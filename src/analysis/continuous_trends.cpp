#include "analysis/continuous_trends.hpp"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <map>
#include <string>
#include <string_view>
#include <utility>

namespace nnprof::analysis {
namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

WindowSeries make(const ContinuousProfile& c, std::string metric, std::string unit, bool higher_is_worse) {
  WindowSeries s;
  s.metric = std::move(metric);
  s.unit = std::move(unit);
  s.higher_is_worse = higher_is_worse;
  s.window_start_ns.reserve(c.windows.size());
  for (const ProfileWindow& w : c.windows) s.window_start_ns.push_back(w.start_ns);
  s.values.reserve(c.windows.size());
  return s;
}

bool any_value(const WindowSeries& s) {
  return std::any_of(s.values.begin(), s.values.end(), [](double v) { return !std::isnan(v); });
}

double seconds_of(const ProfileWindow& w) { return static_cast<double>(w.end_ns - w.start_ns) / 1e9; }

// The resolution class of a window: 0 for a raw window, else 1 + log2 of its length in
// intervals, rounded (10-minute buckets of 60 s windows: 4; hourly: 7; merged pairs above).
int tier_of(const ProfileWindow& w, double interval_ns) {
  if (w.raw_windows <= 1) return 0;
  const double intervals = std::max(1.0, static_cast<double>(w.end_ns - w.start_ns) / interval_ns);
  return 1 + static_cast<int>(std::lround(std::log2(intervals)));
}

// Maximal runs of windows of one resolution, as [begin, end) indices. The detectors assume one
// noise level per series (docs/TRENDS.md, "Limits"); a rolled-up window averages many raw ones
// and is several times less noisy, so a raw window next to them would be judged against too
// small a scale (an outlier where there is none). Each run is analysed on its own.
std::vector<std::pair<std::size_t, std::size_t>> tiers(const ContinuousProfile& c) {
  double interval = static_cast<double>(c.interval_ns);
  if (interval <= 0.0) {
    interval = std::numeric_limits<double>::max();
    for (const ProfileWindow& w : c.windows)
      if (w.end_ns > w.start_ns) interval = std::min(interval, static_cast<double>(w.end_ns - w.start_ns));
    if (interval == std::numeric_limits<double>::max()) interval = 1.0;
  }
  std::vector<std::pair<std::size_t, std::size_t>> runs;
  for (std::size_t i = 0; i < c.windows.size(); ++i) {
    const int tier = tier_of(c.windows[i], interval);
    if (runs.empty() || tier != tier_of(c.windows[runs.back().first], interval))
      runs.emplace_back(i, i + 1);
    else
      runs.back().second = i + 1;
  }
  return runs;
}

// `text` with every "at window N" moved on by `offset`: the detectors number the windows of the
// run they were given.
std::string shift_window_numbers(const std::string& text, std::size_t offset) {
  static constexpr std::string_view kAt = "at window ";
  std::string out;
  std::size_t from = 0;
  for (std::size_t at = text.find(kAt); at != std::string::npos; at = text.find(kAt, from)) {
    std::size_t digits = at + kAt.size();
    std::size_t end = digits;
    while (end < text.size() && text[end] >= '0' && text[end] <= '9') ++end;
    out.append(text, from, digits - from);
    if (end > digits)
      out += std::to_string(std::stoull(text.substr(digits, end - digits)) + offset);
    from = end;
  }
  out.append(text, from, std::string::npos);
  return out;
}

}  // namespace

std::vector<WindowSeries> continuous_series(const ContinuousProfile& c) {
  std::vector<WindowSeries> out;
  const auto push = [&](WindowSeries s) {
    if (any_value(s)) out.push_back(std::move(s));
  };
  const bool any_items = std::any_of(c.windows.begin(), c.windows.end(), [](const ProfileWindow& w) { return w.items > 0; });

  WindowSeries step = make(c, "step_time", "ns", true);
  WindowSeries throughput = make(c, "throughput", any_items ? "items/s" : "steps/s", false);
  WindowSeries rss = make(c, "rss", "B", true);
  WindowSeries heap = make(c, "heap", "B", true);
  WindowSeries gpu = make(c, "gpu_memory", "B", true);
  WindowSeries energy = make(c, "energy_per_step", "J", true);
  WindowSeries cpu = make(c, "cpu", "percent", true);
  const bool heap_tracked = std::any_of(c.windows.begin(), c.windows.end(), [](const ProfileWindow& w) {
    return w.heap_live_bytes > 0 || w.heap_alloc_bytes > 0;
  });
  for (const ProfileWindow& w : c.windows) {
    const double steps = static_cast<double>(w.steps);
    step.values.push_back(w.steps > 0 ? static_cast<double>(w.step_ns) / steps : kNaN);
    const double seconds = seconds_of(w);
    const double done = any_items ? static_cast<double>(w.items) : steps;
    throughput.values.push_back(w.steps > 0 && seconds > 0.0 ? done / seconds : kNaN);
    rss.values.push_back(w.rss_bytes > 0 ? static_cast<double>(w.rss_bytes) : kNaN);
    heap.values.push_back(heap_tracked ? static_cast<double>(w.heap_live_bytes) : kNaN);
    gpu.values.push_back(w.gpu_memory_bytes);
    energy.values.push_back(w.steps > 0 && !std::isnan(w.energy_joules) ? w.energy_joules / steps : kNaN);
    cpu.values.push_back(w.cpu_percent);
  }
  push(std::move(step));
  push(std::move(throughput));
  push(std::move(rss));
  push(std::move(heap));
  push(std::move(gpu));
  push(std::move(energy));
  push(std::move(cpu));

  // The run's top functions by samples, each its share of the window's samples. A function
  // missing from a window that cut its list ("[other]") has an unknown share there, not 0.
  std::map<std::string, std::uint64_t> samples;
  for (const ProfileWindow& w : c.windows)
    for (const WindowFunction& f : w.functions)
      if (f.name != "[other]") samples[f.name] += f.samples;
  std::vector<std::pair<std::string, std::uint64_t>> top(samples.begin(), samples.end());
  std::stable_sort(top.begin(), top.end(), [](const auto& a, const auto& b) { return a.second > b.second; });
  if (top.size() > kShareSeries) top.resize(kShareSeries);
  for (const auto& [name, count] : top) {
    WindowSeries share = make(c, "share:" + name, "fraction", true);
    for (const ProfileWindow& w : c.windows) {
      double value = kNaN;
      if (w.cpu_samples > 0) {
        bool cut = false;
        for (const WindowFunction& f : w.functions) {
          if (f.name == name) value = static_cast<double>(f.samples) / static_cast<double>(w.cpu_samples);
          cut = cut || f.name == "[other]";
        }
        if (std::isnan(value) && !cut) value = 0.0;
      }
      share.values.push_back(value);
    }
    push(std::move(share));
  }
  return out;
}

PerformanceTrends continuous_trends(const ContinuousProfile& c, const TrendOptions& options) {
  PerformanceTrends result;
  result.series = continuous_series(c);
  const auto runs = tiers(c);
  for (const WindowSeries& s : result.series) {
    for (const auto& [begin, end] : runs) {
      WindowSeries part;
      part.metric = s.metric;
      part.unit = s.unit;
      part.higher_is_worse = s.higher_is_worse;
      part.window_start_ns.assign(s.window_start_ns.begin() + static_cast<std::ptrdiff_t>(begin),
                                  s.window_start_ns.begin() + static_cast<std::ptrdiff_t>(end));
      part.values.assign(s.values.begin() + static_cast<std::ptrdiff_t>(begin),
                         s.values.begin() + static_cast<std::ptrdiff_t>(end));
      for (Anomaly& a : detect_anomalies(part, options)) {
        a.window += begin;
        if (begin > 0) a.description = shift_window_numbers(a.description, begin);
        result.anomalies.push_back(std::move(a));
      }
    }
  }
  // As detect_anomalies orders several series: by window, then strongest first.
  std::stable_sort(result.anomalies.begin(), result.anomalies.end(), [](const Anomaly& a, const Anomaly& b) {
    if (a.window != b.window) return a.window < b.window;
    return a.score > b.score;
  });
  for (const WindowSeries& s : result.series) {
    const auto values = static_cast<std::size_t>(
        std::count_if(s.values.begin(), s.values.end(), [](double v) { return !std::isnan(v); }));
    if (values >= options.min_windows) result.trends.push_back(trend(s, options));
  }
  return result;
}

PerformanceTrends trends_of(const ContinuousProfile& c) {
  if (!c.finished) return continuous_trends(c);
  PerformanceTrends result;
  result.series = continuous_series(c);
  result.anomalies = c.anomalies;
  result.trends = c.trends;
  return result;
}

}  // namespace nnprof::analysis
