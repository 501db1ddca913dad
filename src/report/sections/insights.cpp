// Short findings about where the time and memory go, each a sentence with its numbers.
#include "analysis/insights.hpp"
#include "report/sections.hpp"

namespace nnprof::report::sections {

void insights(const ReportData& data, std::vector<Section>& out) {
  // Without scopes there is nothing to conclude; the overview's hint says what to do.
  if (data.profile->scopes.empty()) return;
  Section section{"insights", "Insights", {}};
  Bullets bullets;
  for (const analysis::Insight& insight : data.insights) bullets.items.push_back(insight.sentence);
  section.add(std::move(bullets));
  out.push_back(std::move(section));
}

}  // namespace nnprof::report::sections
