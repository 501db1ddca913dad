// Every scope found in both runs, largest change of total time first (the order of
// Comparison::scopes). Each scope's note is in the method section, where a sentence has room.
#include "report/comparison_sections.hpp"

namespace nnprof::report::sections {

void compare_scopes(const Comparison& c, std::vector<Section>& out) {
  Section section{"scopes", "All scopes in both runs", {}};
  if (c.scopes.empty()) {
    section.say(Sentence().words("The runs have no scope in common."));
  } else {
    section.say(Sentence().words(
        "Matched by name; largest change of total time first. Ratio and change are of the mean time per call."));
    std::vector<const ScopeChange*> rows;
    rows.reserve(c.scopes.size());
    for (const ScopeChange& s : c.scopes) rows.push_back(&s);
    section.add(compare_cells::change_table("scopes-table", rows));
  }
  out.push_back(std::move(section));
}

}  // namespace nnprof::report::sections
