// How complete the profile is and what recording cost.
#include <string>

#include "analysis/facts.hpp"
#include "report/sections.hpp"

namespace nnprof::report::sections {

void completeness(const ReportData& data, std::vector<Section>& out) {
  // An empty profile's zeros would only be noise; its diagnostics may say why it is empty.
  if (data.profile->empty()) return;
  Section section{"completeness", "Completeness and cost", {}};
  Facts facts;
  for (analysis::Fact& fact : analysis::completeness_facts(*data.profile)) {
    facts.items.push_back(Fact{std::string(fact.label), std::move(fact.value)});
  }
  section.add(std::move(facts));
  section.say(Sentence().words(analysis::kStatisticsAreComplete));
  out.push_back(std::move(section));
}

}  // namespace nnprof::report::sections
