// What reports say about the operator table (nnprof::operator_table).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "analysis/sentence.hpp"
#include "nnprof/operators.hpp"

namespace nnprof::analysis {

/// A call with a torch sequence number ("seq"): a forward (function) call or a backward one.
struct NumberedCall {
  std::uint32_t span = 0;  ///< index into Profile::spans
  std::int64_t seq = 0;
  bool backward = false;
};

/// For each backward call of `calls`, the index in `calls` of the forward call whose autograd
/// node it ran: the latest forward call with its number that started before it, widened to the
/// outermost call with the number that encloses that one on its thread (operators nested in a
/// forward call share its number; torch numbers per forward thread). kNone for forward calls
/// and for backward calls with no such forward call.
std::vector<std::uint32_t> forward_of_backward(const Profile& profile, const std::vector<NumberedCall>& calls);

/// A forward call and the backward call that ran its autograd node (indices into Profile::spans).
struct ForwardBackward {
  std::uint32_t forward_span = 0;
  std::uint32_t backward_span = 0;
};
/// Every such pair of the profile's operator calls (span arguments "op_scope" and "seq").
std::vector<ForwardBackward> forward_backward_links(const Profile& profile);

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
