#include "analysis/continuous_trends.hpp"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <map>
#include <string>
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
  result.anomalies = detect_anomalies(result.series, options);
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
