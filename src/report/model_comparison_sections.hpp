// The sections of the model comparison document (one file each under
// report/sections/model_compare_*.cpp, in the order of report/model_comparison.cpp) and the
// cells they build alike. Sections receive the comparison with its names already cut for display.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "nnprof/model_compare.hpp"
#include "report/document.hpp"

namespace nnprof::report {

/// Appends a model comparison document's section(s).
using ModelComparisonSection = void (*)(const ModelComparison& comparison, std::vector<Section>& out);

namespace model_cells {
/// A ratio to the baseline ("7×"), or "n/a".
Cell ratio(const std::optional<double>& ratio);
/// "medium/small": the column of one model's ratios to the baseline.
std::string ratio_header(const ModelRatio& ratio);
/// The verdict as a reader says it: "Linear or better", "Not judged".
const char* verdict_label(ScalingVerdict verdict);
}  // namespace model_cells

namespace sections {
void model_compare_specifications(const ModelComparison& comparison, std::vector<Section>& out);
/// Speed, work and memory per model, with each model's ratios to the baseline.
void model_compare_performance(const ModelComparison& comparison, std::vector<Section>& out);
/// Efficiency and verdict per model against the baseline; absent with one model.
void model_compare_scaling(const ModelComparison& comparison, std::vector<Section>& out);
/// Components and operations of the forward pass; absent when no model ran one.
void model_compare_forward(const ModelComparison& comparison, std::vector<Section>& out);
/// Each model's notes (prefixed with its name) and the comparison's.
void model_compare_notes(const ModelComparison& comparison, std::vector<Section>& out);
}  // namespace sections

}  // namespace nnprof::report
