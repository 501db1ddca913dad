// The scopes judged regressed that added the most time, at most kComparisonTop.
#include "report/comparison_sections.hpp"

namespace nnprof::report::sections {

void compare_regressions(const Comparison& c, std::vector<Section>& out) {
  out.push_back(compare_cells::top_changes("regressions", "regressions", "regressed", "added",
                                           c.top_regressions(kComparisonTop), c.regressed));
}

}  // namespace nnprof::report::sections
