// The call tree as reports show it: children by time, depth first, within a depth and a
// row budget, with what was left out counted.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "analysis/sentence.hpp"
#include "nnprof/profile.hpp"

namespace nnprof::analysis {

/// Children of call-tree node `node` that exist, longest total time first, equal times by
/// name. Empty for a node that does not exist.
std::vector<std::uint32_t> sorted_children(const Profile& profile, std::uint32_t node);

/// How much of the tree a report shows.
struct TreeLimits {
  std::uint32_t max_depth = 12;  ///< deepest level shown; the root's children are level 1
  std::size_t max_rows = 200;    ///< nodes shown at most
};

/// A node to show and its level (1 for the root's children).
struct TreeRow {
  std::uint32_t node = 0;
  std::uint32_t depth = 1;
};

/// The nodes a report shows, and how many it leaves out and why.
struct TreeWalk {
  TreeLimits limits;
  std::vector<TreeRow> rows;      ///< pre-order: each node right before its children
  std::size_t too_deep = 0;       ///< nodes below limits.max_depth
  std::size_t over_row_cap = 0;   ///< nodes within the depth but past limits.max_rows

  [[nodiscard]] std::size_t omitted() const noexcept { return too_deep + over_row_cap; }
};

/// Every node under the root, depth first with children by sorted_children, cut at `limits`:
/// each non-root node is either a row or counted in one omission bucket. A malformed tree
/// (from a file) whose child links form a cycle or point nowhere is walked once, safely.
TreeWalk walk_call_tree(const Profile& profile, TreeLimits limits);

/// "3 nodes not shown: 3 deeper than 12 levels." Empty when nothing was left out.
Sentence omitted_nodes(const TreeWalk& walk);

}  // namespace nnprof::analysis
