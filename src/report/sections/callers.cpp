// Who calls each scope, and how often ("matmul: called by mlp 16 times, by attention 16 times"):
// the callers of the hottest scopes, from the merged call tree, where a node's parent is the
// scope that was open around it. The call tree shows the same calls from the top down; this
// section gathers every path into one scope, so that a scope reached from many places reads as
// one list of its entry points.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <string>
#include <unordered_map>
#include <vector>

#include "report/cells.hpp"
#include "report/sections.hpp"

namespace nnprof::report::sections {
namespace {

// The calls of one scope made while `caller` was open around it (kNone: at the top level).
struct Caller {
  StringId caller = kNone;
  std::uint64_t calls = 0;
  std::uint64_t ns = 0;  ///< the time of those calls (node sums: recursive calls counted again)
};

// Every scope name's callers, summed over the call-tree nodes of that name: one pass over the
// tree. The root (node 0) has no name, so its children are called from the top level.
std::unordered_map<StringId, std::vector<Caller>> callers_by_scope(const Profile& profile) {
  std::unordered_map<StringId, std::vector<Caller>> result;
  for (std::size_t i = 1; i < profile.call_tree.size(); ++i) {
    const CallTreeNode& node = profile.call_tree[i];
    StringId caller = kNone;
    if (node.parent != kNone && node.parent != 0 && node.parent < profile.call_tree.size()) {
      caller = profile.call_tree[node.parent].name;
    }
    std::vector<Caller>& callers = result[node.name];
    auto found = std::find_if(callers.begin(), callers.end(), [&](const Caller& c) { return c.caller == caller; });
    if (found == callers.end()) found = callers.insert(callers.end(), Caller{caller, 0, 0});
    found->calls += node.time.count;
    found->ns += node.time.sum_ns;
  }
  // Most calls first; equal counts by time, then by name id so that the order is stable.
  for (auto& [name, callers] : result) {
    std::sort(callers.begin(), callers.end(), [](const Caller& a, const Caller& b) {
      if (a.calls != b.calls) return a.calls > b.calls;
      if (a.ns != b.ns) return a.ns > b.ns;
      return a.caller < b.caller;
    });
  }
  return result;
}

Cell caller_cell(const Profile& profile, StringId caller) {
  if (caller == kNone) return Cell::words("(top level)");
  return scope_cell(profile, caller);
}

}  // namespace

void callers(const ReportData& data, std::vector<Section>& out) {
  const Profile& profile = *data.profile;
  if (profile.scopes.empty() || profile.call_tree.size() <= 1) return;
  const auto by_scope = callers_by_scope(profile);
  const std::size_t shown_scopes = std::min(data.by_total.size(), data.limits.callers_scopes);

  Section section{"callers", "Callers", {}};
  section.say(Sentence().words(
      "Who calls each scope: under each scope (hottest by total time first), the scopes that were open around "
      "its calls, most calls first. Calls and time are of the calls from that caller; % is of the scope's "
      "calls."));
  say_top_of(section, shown_scopes, profile.scopes.size(), "scopes");

  Table table;
  table.id = "callers-table";
  table.style = Table::Style::Tree;
  table.columns = {left("Scope, then its callers", "scope"), right("Calls", "calls"), right("Time", "total"),
                   right("% of the scope's calls", "calls-pct")};
  for (std::size_t i = 0; i < shown_scopes; ++i) {
    const ScopeStats& scope = *data.by_total[i];
    const auto found = by_scope.find(scope.name);
    if (found == by_scope.end()) continue;  // a scope the tree does not hold (a profile without a tree)
    const std::vector<Caller>& callers = found->second;
    std::uint64_t calls = 0;
    std::uint64_t ns = 0;
    for (const Caller& c : callers) {
      calls += c.calls;
      ns += c.ns;
    }
    table.row({scope_cell(profile, scope.name), count_cell(calls), duration_cell(ns), share_cell(calls, calls)});
    table.depths.push_back(1);
    const std::size_t listed = std::min(callers.size(), data.limits.callers_per_scope);
    for (std::size_t k = 0; k < listed; ++k) {
      table.row({caller_cell(profile, callers[k].caller), count_cell(callers[k].calls), duration_cell(callers[k].ns),
                 share_cell(callers[k].calls, calls)});
      table.depths.push_back(2);
    }
    // The callers past the limit as one row, so that the shares still add up.
    if (listed < callers.size()) {
      std::uint64_t rest_calls = 0;
      std::uint64_t rest_ns = 0;
      for (std::size_t k = listed; k < callers.size(); ++k) {
        rest_calls += callers[k].calls;
        rest_ns += callers[k].ns;
      }
      const std::size_t rest = callers.size() - listed;
      table.row({Cell::words(std::to_string(rest) + (rest == 1 ? " other caller" : " other callers")),
                 count_cell(rest_calls), duration_cell(rest_ns), share_cell(rest_calls, calls)});
      table.depths.push_back(2);
    }
  }
  if (table.empty()) return;
  section.add(std::move(table));
  out.push_back(std::move(section));
}

}  // namespace nnprof::report::sections
