// Writers of a run comparison (nnprof::Comparison): text for the terminal, Markdown for a
// pull request, a self-contained HTML page, and JSON for CI scripts (docs/JSON_SCHEMA.md).
#pragma once

#include <iosfwd>
#include <string_view>

#include "nnprof/compare.hpp"

namespace nnprof::io {

/// The value of the comparison document's "schema" field.
inline constexpr std::string_view kComparisonSchemaName = "nnprof-comparison";
/// Its "schema_version": raised when a field changes meaning or is removed.
inline constexpr int kComparisonSchemaVersion = 1;

/// Summary (runtime, calls, allocations with deltas; speedup; geometric mean; verdict), the
/// top 10 regressions and improvements, every matched scope (the 30 largest changes of total
/// time in the text form), scopes only in A or only in B, and the notes.
void write_comparison_text(const Comparison& comparison, std::ostream& out);
void write_comparison_markdown(const Comparison& comparison, std::ostream& out);
void write_comparison_html(const Comparison& comparison, std::ostream& out);
/// Every field of the comparison; times in integer nanoseconds, ratios as numbers.
void write_comparison_json(const Comparison& comparison, std::ostream& out);

}  // namespace nnprof::io
