// The HTML report: one self-contained page (inline CSS, SVG and a little JavaScript; nothing
// fetched from the network) with the summary, tables, call tree, timeline and memory chart.
#pragma once

#include <iosfwd>
#include <string_view>

#include "io/exporter.hpp"
#include "nnprof/profile.hpp"

namespace nnprof::io {

/// Writes `profile` as one HTML page: summary cards, a sortable and filterable table of
/// every scope, the collapsible call tree, a timeline of the spans per thread (spans merged
/// when there are too many to draw one by one), memory over time, threads, memory counters,
/// insights, completeness and diagnostics. Every name from the profile is HTML-escaped.
void write_html_report(const Profile& profile, std::ostream& out);

/// The "html" format (".html"): `write_html_report`.
class HtmlExporter final : public Exporter {
 public:
  HtmlExporter() noexcept : Exporter(ReportFormat::Html) {}
  void write(const Profile& profile, std::ostream& out) const override;
};

}  // namespace nnprof::io
