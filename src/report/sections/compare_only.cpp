// Scopes that only one run has: removed (only in A) and added (only in B), longest first.
#include "report/comparison_sections.hpp"

namespace nnprof::report::sections {
namespace {

Section only_section(std::string id, std::string title, const std::vector<ScopeOnly>& rows) {
  Section section{id, std::move(title), {}};
  if (rows.empty()) section.say(Sentence().words("None."));
  else section.add(compare_cells::only_table(id + "-table", rows));
  return section;
}

}  // namespace

void compare_only(const Comparison& c, std::vector<Section>& out) {
  out.push_back(only_section("removed", "Only in A (removed)", c.removed));
  out.push_back(only_section("added", "Only in B (added)", c.added));
}

}  // namespace nnprof::report::sections
