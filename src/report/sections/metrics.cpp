// Metrics: counters, gauges and histograms recorded by name (nnprof/metrics.hpp): one row each,
// what was not kept as points, and a chart per metric.
#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "report/charts/html_charts.hpp"
#include "report/html_escape.hpp"
#include "report/metric_values.hpp"
#include "model/metric_builder.hpp"
#include "report/cells.hpp"
#include "report/sections.hpp"

namespace nnprof::report::sections {
namespace {


// A metric value in its unit, its raw value kept; "n/a" where there is none.
Cell metric_cell(double value, const std::string& unit) {
  if (!std::isfinite(value)) return not_known();
  return Cell::number(report::format_metric_value(value, unit), value);
}

Table metrics_table(const Profile& profile) {
  Table table;
  table.id = "metrics-table";
  table.style = Table::Style::Sortable;
  table.filter_label = "Filter metrics by name";
  table.columns = {left("Metric", "metric"), left("Kind", "kind"),   right("Count", "count"),
                   right("Last / total", "last"), right("Mean", "mean"), right("Std dev", "stddev"),
                   right("Min", "min"),       right("p50", "p50"),   right("p90", "p90"),
                   right("p95", "p95"),       right("p99", "p99"),   right("Max", "max")};
  for (const MetricSeries& m : profile.metrics) {
    const MetricSummary& s = m.summary;
    const auto v = [&](double x) { return metric_cell(x, m.unit); };
    // Percentiles come from the points kept: none kept, none known.
    const auto p = [&](double x) { return s.percentile_points > 0 ? v(x) : not_known(); };
    table.row({scope_cell(profile, m.name), Cell::words(model::metric_kind_name(m.kind)), count_cell(s.count),
               v(s.last), v(s.mean), v(s.stddev), v(s.min), p(s.p50), p(s.p90), p(s.p95), p(s.p99), v(s.max)});
  }
  return table;
}

// One metric's chart with its name, kind and unit above it.
Picture metric_chart(const Profile& profile, const MetricSeries& m, bool first) {
  Picture picture;
  picture.style = report::html::kMemoryChartStyle;  // the metric charts draw as the memory chart does
  picture.draw = [&profile, &m, first](std::string& html) {
    // Said with the charts: the table's "last / total" is a counter's total, its chart the running total.
    if (first) html += "<p class=\"muted\">A counter's chart shows its running total.</p>";
    report::html::append(html, "<h3>{} <span class=\"muted\">({}{})</span></h3><div class=\"scroll\">",
                     report::html::escape(profile.str(m.name)), model::metric_kind_name(m.kind),
                     m.unit.empty() ? std::string() : ", " + report::html::escape(m.unit));
    report::html::write_metric_chart(profile, m, html);
    html += "</div>";
  };
  return picture;
}

}  // namespace

void metrics(const ReportData& data, std::vector<Section>& out) {
  const Profile& profile = *data.profile;
  if (profile.metrics.empty()) return;
  Section section{"metrics", "Metrics", {}};
  section.say(Sentence().words(
      "Counters, gauges and histograms recorded by name. Count, last, mean, std dev, min and max cover every "
      "observation; percentiles are exact over the points kept."));
  section.add(metrics_table(profile));
  if (const std::string note = report::metrics_completeness_note(profile); !note.empty()) section.say(Sentence().words(note));

  const std::size_t charts = std::min(profile.metrics.size(), report::html::kMetricChartLimit);
  for (std::size_t i = 0; i < charts; ++i) {
    section.add(metric_chart(profile, profile.metrics[i], i == 0));
  }
  if (charts < profile.metrics.size()) {
    // Said inside a picture: only formats that draw the charts have some left undrawn.
    std::string note;
    report::html::append(note, "<p class=\"note\">{} more metrics are in the table but not drawn (a page draws at most {} charts).</p>",
                     profile.metrics.size() - charts, report::html::kMetricChartLimit);
    section.add(Picture::of(std::move(note)));
  }
  out.push_back(std::move(section));
}

}  // namespace nnprof::report::sections
