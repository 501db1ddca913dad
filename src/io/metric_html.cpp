#include "io/metric_html.hpp"

#include <algorithm>

#include "report/charts/html_charts.hpp"
#include "io/html_escape.hpp"
#include "io/metric_table.hpp"
#include "io/metrics_json.hpp"

namespace nnprof::io::html {

void write_metrics_section(const Profile& profile, std::string& out) {
  if (profile.metrics.empty()) return;
  out += "<section id=\"metrics\"><h2>Metrics</h2><p class=\"lead\">Counters, gauges and histograms recorded by "
         "name. Count, last, mean, std dev, min and max cover every observation; percentiles are exact over the "
         "points kept. A counter's chart shows its running total.</p>";
  const TextTable table = metrics_table(profile);
  out += "<div class=\"scroll\"><table id=\"metrics-table\"><thead><tr>";
  for (const TableColumn& c : table.columns())
    append(out, "<th{}>{}</th>", c.align == Align::Right ? " class=\"num\"" : "", escape(c.header));
  out += "</tr></thead><tbody>";
  for (const auto& row : table.rows()) {
    out += "<tr>";
    for (std::size_t i = 0; i < row.size(); ++i)
      append(out, "<td{}>{}</td>", table.columns()[i].align == Align::Right ? " class=\"num\"" : "", escape(row[i]));
    out += "</tr>";
  }
  out += "</tbody></table></div>";
  if (const std::string note = metrics_completeness_note(profile); !note.empty())
    append(out, "<p class=\"note\">{}</p>", escape(note));
  const std::size_t charts = std::min(profile.metrics.size(), kMetricChartLimit);
  for (std::size_t i = 0; i < charts; ++i) {
    const MetricSeries& m = profile.metrics[i];
    append(out, "<h3>{} <span class=\"muted\">({}{})</span></h3><div class=\"scroll\">", escape(profile.str(m.name)),
           metric_kind_name(m.kind), m.unit.empty() ? std::string() : ", " + escape(m.unit));
    write_metric_chart(profile, m, out);
    out += "</div>";
  }
  if (charts < profile.metrics.size())
    append(out, "<p class=\"note\">{} more metrics are in the table but not drawn (a page draws at most {} charts).</p>",
           profile.metrics.size() - charts, kMetricChartLimit);
  out += "</section>\n";
}

}  // namespace nnprof::io::html
