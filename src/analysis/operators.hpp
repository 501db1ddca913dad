// What reports say about the operator table (nnprof::operator_table).
#pragma once

#include <string>
#include <string_view>

#include "analysis/sentence.hpp"
#include "nnprof/operators.hpp"

namespace nnprof::analysis {

/// Input shapes as a reader wants them: torch writes [] for every input that is not a tensor
/// (a scalar alpha, a bool), so the trailing ones are dropped: "[[128], [32, 64], [64, 128], [], []]"
/// reads "[[128], [32, 64], [64, 128]]". Empty shapes (not recorded) stay empty.
std::string readable_shapes(std::string_view shapes);

/// What dominates: "aten::addmm with [[128], [32, 64], [64, 128]] takes 41% of operator self
/// time (12.3 ms over 300 calls)." Empty for an empty table.
Sentence operators_lead(const OperatorTable& table);

/// The totals: calls, groups, and the share of the run spent inside operators.
Sentence operators_summary(const OperatorTable& table);

}  // namespace nnprof::analysis
