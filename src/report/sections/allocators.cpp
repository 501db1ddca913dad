// The scopes that allocated the most bytes (named memory counters) while innermost.
#include "analysis/rankings.hpp"
#include "report/cells.hpp"
#include "report/sections.hpp"

namespace nnprof::report::sections {

void allocators(const ReportData& data, std::vector<Section>& out) {
  if (data.allocators.empty()) return;
  const analysis::AllocationTotal total = analysis::allocation_total(*data.profile);
  Section section{"allocators", "Top allocators", {}};
  if (const Sentence cut = top_of(data.allocators.size(), data.allocating_scopes, "allocating scopes"); !cut.empty()) {
    section.say(cut);
  }
  section.say(Sentence()
                  .words("Bytes allocated while the scope was the innermost open one. Percentages are of ")
                  .bytes(total.bytes)
                  .words(total.from_counters ? " allocated in all (every memory counter, inside scopes or not)."
                                             : " allocated inside scopes."));
  using enum ScopeColumn;
  section.add(scope_table(data, "allocators-table", data.allocators, {Rank, Name, Allocated, AllocShare, Allocs, AllocPerCall}));
  out.push_back(std::move(section));
}

}  // namespace nnprof::report::sections
