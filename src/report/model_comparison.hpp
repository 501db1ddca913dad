// The model comparison (nnprof::ModelComparison) as a document: rendered as text, Markdown or
// HTML by src/render like every document; its JSON is io::write_model_comparison_json.
#pragma once

#include "nnprof/model_compare.hpp"
#include "report/document.hpp"

namespace nnprof::report {

/// Model specifications, performance per model with the ratios to the smallest, scaling
/// efficiency with its verdict and reason, the forward-pass breakdown, and the notes. Names are
/// cut at report::kNameDisplayLimit and sentences at report::kTextDisplayLimit (issue 16: one 10 MB name
/// made a report of gigabytes); the JSON keeps them whole.
[[nodiscard]] Document model_comparison_document(const ModelComparison& comparison);

}  // namespace nnprof::report
