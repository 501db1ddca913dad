// The comparison of two runs (nnprof::Comparison) as a document: rendered as text, Markdown or
// HTML by src/render like every document; its JSON is io::write_comparison_json.
#pragma once

#include "nnprof/compare.hpp"
#include "report/document.hpp"

namespace nnprof::report {

/// Summary (runtime, calls, allocations with deltas; verdict; speedup; geometric mean), the top
/// 10 regressions and improvements, every matched scope, scopes only in A or only in B, and the
/// method and notes (the comparison's, and each scope's).
[[nodiscard]] Document comparison_document(const Comparison& comparison);

}  // namespace nnprof::report
