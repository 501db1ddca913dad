// The JSON of a model comparison (nnprof::ModelComparison) for scripts (docs/JSON_SCHEMA.md).
// Its text, Markdown and HTML are report::model_comparison_document rendered by src/render.
#pragma once

#include <iosfwd>
#include <string_view>

#include "nnprof/model_compare.hpp"

namespace nnprof::io {

/// The value of the model comparison document's "schema" field.
inline constexpr std::string_view kModelComparisonSchemaName = "nnprof-model-comparison";
/// Its "schema_version": raised when a field changes meaning or is removed.
inline constexpr int kModelComparisonSchemaVersion = 1;

/// Every field of the comparison; times in nanoseconds, absent figures as null.
void write_model_comparison_json(const ModelComparison& comparison, std::ostream& out);

}  // namespace nnprof::io
