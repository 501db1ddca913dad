// The scopes judged regressed that added the most time, at most kComparisonTop.
#include <fmt/format.h>

#include "report/comparison_sections.hpp"

namespace nnprof::report::sections {

void compare_regressions(const Comparison& c, std::vector<Section>& out) {
  Section section{"regressions", fmt::format("Top {} regressions", kComparisonTop), {}};
  const auto rows = c.top_regressions(kComparisonTop);
  if (rows.empty()) {
    section.say(Sentence().words("No scope regressed."));
  } else {
    section.say(c.regressed > rows.size() ? Sentence()
                                                .count(rows.size())
                                                .words(" of ")
                                                .count(c.regressed)
                                                .words(" regressed scopes, by the time they added.")
                                          : Sentence().words("By the time they added."));
    section.add(compare_cells::change_table("regressions-table", rows));
  }
  out.push_back(std::move(section));
}

}  // namespace nnprof::report::sections
