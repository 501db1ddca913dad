// What to change first, the largest expected gain first.
#include "analysis/advisor.hpp"
#include "report/sections.hpp"

namespace nnprof::report::sections {

void recommendations(const ReportData& data, std::vector<Section>& out) {
  // As the bottlenecks section: shown without scopes too when there is something to recommend.
  if (data.profile->scopes.empty() && data.advice.empty()) return;
  Section section{"recommendations", "Recommendations", {}};
  section.say(Sentence().words(
      "What to change first: expected speedups of the whole run follow Amdahl's law from each part's share of "
      "the time."));
  Recommendations list;
  list.none = analysis::no_advice();
  for (const analysis::Advice& advice : data.advice) {
    list.items.push_back(Recommendation{advice.title, analysis::speedup_summary(advice), advice.evidence, advice.steps});
  }
  section.add(std::move(list));
  out.push_back(std::move(section));
}

}  // namespace nnprof::report::sections
