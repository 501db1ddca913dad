// The registry of the built-in exporters: the CLI, the library and the tests reach every
// format of a profile through it, by the names and extensions of the format table.
#pragma once

#include <string_view>
#include <vector>

#include "io/exporter.hpp"
#include "nnprof/report.hpp"

namespace nnprof::io {

/// The built-in exporter of `format`, or nullptr (Auto, or a format without one).
[[nodiscard]] const Exporter* find_exporter(ReportFormat format);

/// The built-in exporter of the format named `name` or one of its aliases (ASCII
/// case-insensitive), or nullptr.
[[nodiscard]] const Exporter* find_exporter(std::string_view name);

/// The exporter of the format whose extension ends `path` (find_format_for_path: ASCII
/// case-insensitive, the longest extension wins, so ".trace.json" is told apart from
/// ".json"), or nullptr.
[[nodiscard]] const Exporter* find_exporter_for_path(std::string_view path);

/// Every built-in exporter, in the order of the format table.
[[nodiscard]] std::vector<const Exporter*> all_exporters();

}  // namespace nnprof::io
