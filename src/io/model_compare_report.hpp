// Writers of a model comparison (nnprof::ModelComparison): text for the terminal, Markdown
// for a pull request or a wiki, and JSON for scripts (docs/JSON_SCHEMA.md).
#pragma once

#include <iosfwd>
#include <string_view>

#include "nnprof/model_compare.hpp"

namespace nnprof::io {

/// The value of the model comparison document's "schema" field.
inline constexpr std::string_view kModelComparisonSchemaName = "nnprof-model-comparison";
/// Its "schema_version": raised when a field changes meaning or is removed.
inline constexpr int kModelComparisonSchemaVersion = 1;

/// Model specifications, performance per model with the ratios to the smallest, scaling
/// efficiency with its verdict and reason, the forward-pass breakdown, and the notes.
void write_model_comparison_text(const ModelComparison& comparison, std::ostream& out);
void write_model_comparison_markdown(const ModelComparison& comparison, std::ostream& out);
/// Every field of the comparison; times in nanoseconds, absent figures as null.
void write_model_comparison_json(const ModelComparison& comparison, std::ostream& out);

}  // namespace nnprof::io
