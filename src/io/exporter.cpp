#include "io/exporter.hpp"

#include <algorithm>
#include <vector>
#include <cctype>

#include "io/chrome_trace.hpp"
#include "io/collapsed_stacks.hpp"
#include "io/csv_export.hpp"
#include "io/flamegraph_svg.hpp"
#include "io/html_report.hpp"
#include "io/json_report.hpp"
#include "io/markdown_report.hpp"
#include "io/pprof_export.hpp"
#include "io/text_report.hpp"

namespace nnprof::io {
namespace {

// The registry: a fixed list of the built-in exporters, constructed on first use. Listing
// them here (rather than self-registering from each file) keeps the set explicit and
// immune to static-initialisation order and to the linker dropping unreferenced objects.
const std::vector<const Exporter*>& registry() {
  static const TextExporter text;
  static const ChromeTraceExporter chrome;
  static const MarkdownExporter markdown;
  static const JsonExporter json;
  static const CsvExporter csv;
  static const HtmlExporter html;
  static const CollapsedExporter collapsed;
  static const PprofExporter pprof;
  static const FlameGraphExporter flamegraph;
  static const std::vector<const Exporter*> exporters{&text, &chrome,     &markdown, &json,      &csv,
                                                      &html, &collapsed, &pprof,    &flamegraph};
  return exporters;
}

// Other extensions a format is known by, besides Exporter::extension().
struct ExtensionAlias {
  std::string_view extension;
  std::string_view format;
};
constexpr ExtensionAlias kExtensionAliases[] = {{".collapsed", "collapsed"}};

char lower(char c) {
  return static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
}

bool iequals(std::string_view a, std::string_view b) {
  return std::ranges::equal(a, b, [](char x, char y) { return lower(x) == lower(y); });
}

bool iends_with(std::string_view text, std::string_view suffix) {
  return text.size() >= suffix.size() && iequals(text.substr(text.size() - suffix.size()), suffix);
}

}  // namespace

const Exporter* find_exporter(std::string_view name) {
  for (const Exporter* exporter : registry()) {
    if (iequals(exporter->name(), name)) return exporter;
  }
  return nullptr;
}

const Exporter* find_exporter_for_path(std::string_view path) {
  const Exporter* best = nullptr;
  for (const Exporter* exporter : registry()) {
    const std::string_view extension = exporter->extension();
    if (extension.empty() || !iends_with(path, extension)) continue;
    if (best == nullptr || extension.size() > best->extension().size()) best = exporter;
  }
  if (best == nullptr) {
    for (const ExtensionAlias& alias : kExtensionAliases)
      if (iends_with(path, alias.extension)) return find_exporter(alias.format);
  }
  return best;
}

std::vector<const Exporter*> all_exporters() {
  const auto& exporters = registry();
  return {exporters.begin(), exporters.end()};
}

}  // namespace nnprof::io
