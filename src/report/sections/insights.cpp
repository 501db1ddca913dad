// Short findings about where the time and memory go, each a sentence with its numbers.
#include "analysis/insights.hpp"
#include "report/sections.hpp"

namespace nnprof::report::sections {

void insights(const ReportData& data, std::vector<Section>& out) {
  Section section{"insights", "Insights", {}};
  if (data.profile->scopes.empty()) {
    section.say(Sentence().words("No scopes, no insights."));
    out.push_back(std::move(section));
    return;
  }
  Bullets bullets;
  for (const analysis::Insight& insight : data.insights) bullets.items.push_back(insight.sentence);
  section.add(std::move(bullets));
  out.push_back(std::move(section));
}

}  // namespace nnprof::report::sections
