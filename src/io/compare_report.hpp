// The JSON of a run comparison (nnprof::Comparison) for CI scripts (docs/JSON_SCHEMA.md). Its
// text, Markdown and HTML are report::comparison_document rendered by src/render.
#pragma once

#include <iosfwd>
#include <string_view>

#include "nnprof/compare.hpp"

namespace nnprof::io {

/// The value of the comparison document's "schema" field.
inline constexpr std::string_view kComparisonSchemaName = "nnprof-comparison";
/// Its "schema_version": raised when a field changes meaning or is removed.
inline constexpr int kComparisonSchemaVersion = 2;  // 2: summary.verdict is the run's, not "any scope"

/// Every field of the comparison; times in integer nanoseconds, ratios as numbers.
void write_comparison_json(const Comparison& comparison, std::ostream& out);

}  // namespace nnprof::io
