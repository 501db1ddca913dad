// The comparison of two runs (nnprof::Comparison) as a document: rendered as text, Markdown or
// HTML by src/render like every document; its JSON is io::write_comparison_json.
#pragma once

#include <cstddef>
#include <cstdint>

#include "nnprof/compare.hpp"
#include "report/document.hpp"

namespace nnprof::report {

/// How many regressions and improvements the comparison ranks (the document's top tables and
/// the JSON's top_regressions and top_improvements).
inline constexpr std::size_t kComparisonTop = 10;

/// b - a, signed: how much a figure of run B exceeds run A's.
std::int64_t signed_delta(std::uint64_t a, std::uint64_t b);

/// Summary (runtime, calls, allocations with deltas; verdict; speedup; geometric mean), the top
/// 10 regressions and improvements, every matched scope, scopes only in A or only in B, and the
/// method and notes (the comparison's, and each scope's).
[[nodiscard]] Document comparison_document(const Comparison& comparison);

}  // namespace nnprof::report
