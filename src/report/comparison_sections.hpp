// The sections of the comparison document (one file each under report/sections/compare_*.cpp,
// in the order of report/comparison.cpp) and the cells they build alike.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "nnprof/compare.hpp"
#include "report/comparison.hpp"
#include "report/document.hpp"

namespace nnprof::report {

/// Appends a comparison document's section(s).
using ComparisonSection = void (*)(const Comparison& comparison, std::vector<Section>& out);

namespace compare_cells {
/// "+1.20 ms", "-3.00 us", "0 ns".
std::string signed_duration(std::int64_t ns);
std::string signed_bytes(std::int64_t bytes);
std::string signed_count(std::int64_t n);
/// The relative change from a to b ("+12.5%"), its raw value the fraction; "n/a" from nothing.
Cell change(double a, double b);
/// One row per scope: calls, mean time per call, ratio and change, total delta, test, p, verdict.
Table change_table(std::string id, const std::vector<const ScopeChange*>& rows);
/// The section of the scopes judged `verdict` ("regressed", "improved") that `effect` ("added",
/// "saved") the most time: at most kComparisonTop of the `total` so judged, or that none was.
Section top_changes(std::string id, std::string_view title_noun, std::string_view verdict, std::string_view effect,
                    const std::vector<const ScopeChange*>& rows, std::size_t total);
/// One row per scope found in one run only: calls and total time.
Table only_table(std::string id, const std::vector<ScopeOnly>& rows);
}  // namespace compare_cells

namespace sections {
/// Runtime, calls and allocations of both runs with their deltas; the verdict, the speedup and
/// the geometric mean of the per-call ratios.
void compare_summary(const Comparison& comparison, std::vector<Section>& out);
void compare_regressions(const Comparison& comparison, std::vector<Section>& out);
void compare_improvements(const Comparison& comparison, std::vector<Section>& out);
/// Every scope in both runs, largest change of total time first.
void compare_scopes(const Comparison& comparison, std::vector<Section>& out);
/// Scopes only in A (removed) and only in B (added): two sections.
void compare_only(const Comparison& comparison, std::vector<Section>& out);
/// The test, its thresholds, the comparison's notes and every scope's note.
void compare_method(const Comparison& comparison, std::vector<Section>& out);
}  // namespace sections

}  // namespace nnprof::report
