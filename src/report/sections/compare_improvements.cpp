// The scopes judged improved that saved the most time, at most kComparisonTop.
#include <fmt/format.h>

#include "report/comparison_sections.hpp"

namespace nnprof::report::sections {

void compare_improvements(const Comparison& c, std::vector<Section>& out) {
  Section section{"improvements", fmt::format("Top {} improvements", kComparisonTop), {}};
  const auto rows = c.top_improvements(kComparisonTop);
  if (rows.empty()) {
    section.say(Sentence().words("No scope improved."));
  } else {
    section.say(c.improved > rows.size() ? Sentence()
                                               .count(rows.size())
                                               .words(" of ")
                                               .count(c.improved)
                                               .words(" improved scopes, by the time they saved.")
                                         : Sentence().words("By the time they saved."));
    section.add(compare_cells::change_table("improvements-table", rows));
  }
  out.push_back(std::move(section));
}

}  // namespace nnprof::report::sections
