// Throughput: the work items a program reported for its scopes (NNPROF_SCOPE_ITEMS,
// Scope::add_items) per second of each scope's total time, for every scope that reported some,
// longest first. The hot-path table shows the same rate for its rows; this lists them all.
#include <algorithm>
#include <vector>

#include "report/cells.hpp"
#include "report/sections.hpp"

namespace nnprof::report::sections {

void throughput(const ReportData& data, std::vector<Section>& out) {
  std::vector<const ScopeStats*> scopes;
  for (const ScopeStats& scope : data.profile->scopes) {
    if (scope.items > 0) scopes.push_back(&scope);
  }
  if (scopes.empty()) return;
  std::ranges::stable_sort(scopes, [](const ScopeStats* a, const ScopeStats* b) { return a->total_ns > b->total_ns; });
  Section& section = out.emplace_back(Section{"throughput", "Throughput", {}});
  section.say(Sentence().words("Work items the program reported for a scope, per second of its total time."));
  using enum ScopeColumn;
  section.add(scope_table(data, "throughput-table", scopes, {Name, Items, Total, Throughput}));
}

}  // namespace nnprof::report::sections
