// Trends and anomalies of a continuous run: what the windows were, each event (level shift,
// outlier, growth) with the window where it began and its numbers, the slope of every series,
// and the latest windows. From ReportData::continuous.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "report/cells.hpp"
#include "report/format.hpp"
#include "report/metric_values.hpp"
#include "report/sections.hpp"

namespace nnprof::report::sections {
namespace {

constexpr std::size_t kLatestWindows = 10;

// A series value in its unit: durations, byte sizes, shares as percentages, the rest as given.
std::string value_text(double value, const std::string& unit) {
  if (!std::isfinite(value)) return "n/a";
  if (unit == "ns") return format_duration(value);
  if (unit == "B") return format_bytes(static_cast<std::int64_t>(std::llround(value)));
  if (unit == "fraction") return format_percent(value);
  if (unit == "percent") return fmt::format("{:.1f}%", value);
  if (unit == "J") return format_si(value, "J");
  return format_metric_value(value, unit);
}
Cell value_cell(double value, const std::string& unit) {
  if (!std::isfinite(value)) return not_known();
  return Cell::number(value_text(value, unit), value);
}

// A slope per hour in the series' unit.
std::string slope_text(double per_hour, const std::string& unit) {
  const std::string magnitude = value_text(std::fabs(per_hour), unit);
  return fmt::format("{}{} per hour", per_hour < 0.0 ? "-" : "+", magnitude);
}

std::string signed_percent(double fraction) {
  return fmt::format("{}{}", fraction < 0.0 ? "-" : "+", format_percent(std::fabs(fraction)));
}

// An event's strength in its kind's terms.
std::string change_text(const Anomaly& a) {
  switch (a.kind) {
    case AnomalyKind::LevelShift: return signed_percent(a.magnitude);
    case AnomalyKind::Outlier: return fmt::format("modified z {:+.1f}", a.magnitude);
    case AnomalyKind::Growth: return signed_percent(a.magnitude) + " per hour";
  }
  return {};
}

Table anomalies_table(const ContinuousProfile& c, const PerformanceTrends& t) {
  Table table;
  table.id = "trends-anomalies";
  table.columns = {right("Window", "window"), right("Start (since session start)", "start"), left("Metric", "metric"),
                   left("Kind", "kind"),      right("Before", "before"),  right("After", "after"),
                   right("Change", "change"), right("Score", "score"),   left("What happened", "description")};
  for (const Anomaly& a : t.anomalies) {
    const bool known = a.window < c.windows.size();
    table.row({count_cell(a.window), known ? duration_cell(c.windows[a.window].start_ns) : duration_cell(a.window_start_ns),
               Cell::named(a.metric), Cell::words(to_string(a.kind)), value_cell(a.before, a.unit),
               value_cell(a.after, a.unit), Cell::number(change_text(a), a.magnitude),
               Cell::number(fmt::format("{:.1f}", a.score), a.score), Cell::words(a.description)});
  }
  return table;
}

Table trends_table(const PerformanceTrends& t) {
  Table table;
  table.id = "trends-slopes";
  table.columns = {left("Metric", "metric"),         right("Slope", "slope"),       right("Relative", "relative"),
                   right("95% interval", "interval"), left("Significant", "significant"), right("Windows", "windows")};
  for (const Trend& tr : t.trends) {
    table.row({Cell::named(tr.metric), Cell::number(slope_text(tr.slope_per_hour, tr.unit), tr.slope_per_hour),
               Cell::number(signed_percent(tr.relative_slope_per_hour) + " per hour", tr.relative_slope_per_hour),
               Cell::words(fmt::format("{} .. {}", slope_text(tr.low, tr.unit), slope_text(tr.high, tr.unit))),
               Cell::words(tr.significant ? "yes" : "no"), count_cell(tr.windows)});
  }
  return table;
}

Table latest_table(const ContinuousProfile& c) {
  Table table;
  table.id = "trends-windows";
  table.columns = {right("Window", "window"), right("Start", "start"),     right("Length", "length"),
                   right("Steps", "steps"),   right("Step time", "step"),  right("RSS", "rss"),
                   right("Heap", "heap"),     right("Energy", "energy"),   left("Top function", "function")};
  const std::size_t first = c.windows.size() > kLatestWindows ? c.windows.size() - kLatestWindows : 0;
  for (std::size_t i = first; i < c.windows.size(); ++i) {
    const ProfileWindow& w = c.windows[i];
    std::string top = "-";
    for (const WindowFunction& f : w.functions)
      if (f.name != "[other]" && w.cpu_samples > 0) {
        top = fmt::format("{} ({})", capped_name(f.name),
                          format_percent(static_cast<double>(f.samples) / static_cast<double>(w.cpu_samples)));
        break;
      }
    table.row({count_cell(i), duration_cell(w.start_ns), duration_cell(w.end_ns - w.start_ns), count_cell(w.steps),
               w.steps > 0 ? duration_cell(static_cast<double>(w.step_ns) / static_cast<double>(w.steps)) : not_known(),
               w.rss_bytes > 0 ? bytes_cell(w.rss_bytes) : not_known(),
               w.heap_live_bytes > 0 || w.heap_alloc_bytes > 0 ? bytes_cell(w.heap_live_bytes) : not_known(),
               std::isnan(w.energy_joules) ? not_known() : Cell::number(format_si(w.energy_joules, "J"), w.energy_joules),
               Cell::words(top)});
  }
  return table;
}

Facts window_facts(const ContinuousProfile& c) {
  Facts facts;
  std::uint64_t raw = 0, aligned = 0, rolled = 0;
  for (const ProfileWindow& w : c.windows) {
    raw += w.raw_windows;
    aligned += w.step_aligned ? 1 : 0;
    rolled += w.raw_windows > 1 ? 1 : 0;
  }
  facts.items.push_back({"Interval", Sentence().duration(c.interval_ns)});
  Sentence windows;
  windows.count(c.windows.size(), "window", "windows").words(" holding ").count(raw, "raw window", "raw windows");
  if (rolled > 0) windows.words(" (").count(rolled).words(" rolled up into coarser ones)");
  facts.items.push_back({"Windows", std::move(windows)});
  if (!c.windows.empty())
    facts.items.push_back({"Covered", Sentence().duration(c.windows.back().end_ns - c.windows.front().start_ns)});
  Sentence step;
  if (c.step_scope.empty())
    step.words("none marked: windows close at the interval");
  else
    step.name(c.step_scope).words(": ").count(aligned).words(" windows closed at a step end");
  facts.items.push_back({"Step scope", std::move(step)});
  return facts;
}

}  // namespace

void trends(const ReportData& data, std::vector<Section>& out) {
  if (!data.continuous) return;
  const ContinuousProfile& c = data.profile->continuous;
  const PerformanceTrends& t = *data.continuous;
  Section section;
  section.id = "trends";
  section.title = "Trends and anomalies";
  section.add(window_facts(c));
  if (!c.finished)
    section.say(Sentence().words("The run did not finish (the file was left by a crash or is still being written): "
                                 "the events below are computed from the ")
                    .count(c.windows.size(), "window", "windows")
                    .words(" the file holds."));
  section.subheading("Anomalies");
  if (t.anomalies.empty()) {
    section.say(Sentence()
                    .words("No level shift, outlier or growth in ")
                    .count(t.series.size(), "series", "series")
                    .words(" over ")
                    .count(c.windows.size(), "window", "windows")
                    .words("."));
  } else {
    section.say(Sentence().count(t.anomalies.size(), "event", "events").words(
        ", each at the window where it began (level shifts by CUSUM, outliers by the modified z-score, growth by "
        "Mann-Kendall and Theil-Sen; docs/TRENDS.md)."));
    section.add(anomalies_table(c, t));
  }
  if (!t.trends.empty()) {
    section.subheading("Trends");
    section.add(trends_table(t));
    section.say(Sentence().words("Theil-Sen slopes over every window; significant when the 95% interval excludes 0."),
                true);
  }
  if (!c.windows.empty()) {
    section.subheading("Latest windows");
    section.add(latest_table(c));
  }
  out.push_back(std::move(section));
}

}  // namespace nnprof::report::sections
