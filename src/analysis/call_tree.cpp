#include "analysis/call_tree.hpp"

#include <algorithm>

namespace nnprof::analysis {

std::vector<std::uint32_t> sorted_children(const Profile& profile, std::uint32_t node) {
  std::vector<std::uint32_t> children;
  if (node >= profile.call_tree.size()) return children;
  for (const std::uint32_t child : profile.call_tree[node].children) {
    if (child < profile.call_tree.size() && child != 0) children.push_back(child);
  }
  std::sort(children.begin(), children.end(), [&](std::uint32_t a, std::uint32_t b) {
    const CallTreeNode& na = profile.call_tree[a];
    const CallTreeNode& nb = profile.call_tree[b];
    if (na.time.sum_ns != nb.time.sum_ns) return na.time.sum_ns > nb.time.sum_ns;
    return profile.str(na.name) < profile.str(nb.name);
  });
  return children;
}

TreeWalk walk_call_tree(const Profile& profile, TreeLimits limits) {
  TreeWalk walk;
  walk.limits = limits;
  if (profile.call_tree.empty()) return walk;
  // An explicit stack: trees can be 255 levels deep. `visited` stops a cycle.
  std::vector<bool> visited(profile.call_tree.size(), false);
  std::vector<TreeRow> stack;
  const auto push_children = [&](std::uint32_t node, std::uint32_t depth) {
    const std::vector<std::uint32_t> children = sorted_children(profile, node);
    // Pushed in reverse so that the longest child is popped, and shown, first.
    for (auto it = children.rbegin(); it != children.rend(); ++it) stack.push_back({*it, depth + 1});
  };
  visited[0] = true;
  push_children(0, 0);
  while (!stack.empty()) {
    const TreeRow next = stack.back();
    stack.pop_back();
    if (visited[next.node]) continue;
    visited[next.node] = true;
    if (next.depth > limits.max_depth) {
      ++walk.too_deep;
    } else if (walk.rows.size() >= limits.max_rows) {
      ++walk.over_row_cap;
    } else {
      walk.rows.push_back(next);
    }
    push_children(next.node, next.depth);
  }
  return walk;
}

Sentence omitted_nodes(const TreeWalk& walk) {
  Sentence s;
  if (walk.omitted() == 0) return s;
  s.count(walk.omitted(), "node", "nodes").words(" not shown: ");
  if (walk.too_deep > 0) {
    s.count(walk.too_deep).words(" deeper than ").count(walk.limits.max_depth).words(" levels");
  }
  if (walk.over_row_cap > 0) {
    if (walk.too_deep > 0) s.words(", ");
    s.count(walk.over_row_cap).words(" beyond the first ").count(walk.limits.max_rows).words(" lines");
  }
  return s.words(".");
}

}  // namespace nnprof::analysis
