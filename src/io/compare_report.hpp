// The JSON of a run comparison (nnprof::Comparison) for CI scripts (docs/JSON_SCHEMA.md). Its
// text, Markdown and HTML are report::comparison_document rendered by src/render.
#pragma once

#include <cstddef>
#include <cstdint>
#include <iosfwd>
#include <string_view>

#include "nnprof/compare.hpp"

namespace nnprof::io {

/// The value of the comparison document's "schema" field.
inline constexpr std::string_view kComparisonSchemaName = "nnprof-comparison";
/// Its "schema_version": raised when a field changes meaning or is removed.
inline constexpr int kComparisonSchemaVersion = 1;
/// How many regressions and improvements the comparison ranks (the document's top tables and
/// the JSON's top_regressions and top_improvements).
inline constexpr std::size_t kComparisonTop = 10;

/// b - a, signed: how much a figure of run B exceeds run A's.
std::int64_t signed_delta(std::uint64_t a, std::uint64_t b);

/// Every field of the comparison; times in integer nanoseconds, ratios as numbers.
void write_comparison_json(const Comparison& comparison, std::ostream& out);

}  // namespace nnprof::io
