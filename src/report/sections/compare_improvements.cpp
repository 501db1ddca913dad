// The scopes judged improved that saved the most time, at most kComparisonTop.
#include "report/comparison_sections.hpp"

namespace nnprof::report::sections {

void compare_improvements(const Comparison& c, std::vector<Section>& out) {
  out.push_back(compare_cells::top_changes("improvements", "improvements", "improved", "saved",
                                           c.top_improvements(kComparisonTop), c.improved));
}

}  // namespace nnprof::report::sections
