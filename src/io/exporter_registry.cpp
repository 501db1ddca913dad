#include "io/exporter_registry.hpp"

#include <vector>

#include "io/chrome_trace.hpp"
#include "io/collapsed_stacks.hpp"
#include "io/csv_export.hpp"
#include "io/flamegraph_svg.hpp"
#include "io/profile_reports.hpp"
#include "io/json_report.hpp"
#include "io/pprof_export.hpp"

namespace nnprof::io {
namespace {

// The registry: a fixed list of the built-in exporters, constructed on first use, in the
// order of the format table. Listing them here (rather than self-registering from each file)
// keeps the set explicit and immune to static-initialisation order and to the linker dropping
// unreferenced objects.
const std::vector<const Exporter*>& registry() {
  static const TextExporter text;
  static const MarkdownExporter markdown;
  static const JsonExporter json;
  static const HtmlExporter html;
  static const CsvExporter csv;
  static const ChromeTraceExporter chrome;
  static const CollapsedExporter collapsed;
  static const PprofExporter pprof;
  static const FlameGraphExporter flamegraph;
  static const std::vector<const Exporter*> exporters{&text, &markdown, &json,      &html,      &csv,
                                                      &chrome, &collapsed, &pprof, &flamegraph};
  return exporters;
}

}  // namespace

const Exporter* find_exporter(ReportFormat format) {
  for (const Exporter* exporter : registry())
    if (exporter->format() == format) return exporter;
  return nullptr;
}

const Exporter* find_exporter(std::string_view name) {
  const FormatInfo* info = find_format(name);
  return info == nullptr ? nullptr : find_exporter(info->format);
}

const Exporter* find_exporter_for_path(std::string_view path) {
  const FormatInfo* info = find_format_for_path(path, Document::Profile);
  return info == nullptr ? nullptr : find_exporter(info->format);
}

std::vector<const Exporter*> all_exporters() { return registry(); }

}  // namespace nnprof::io
