// Every finding that passed a threshold, most severe first, with its numbers and what to do.
#include "analysis/bottlenecks.hpp"
#include "report/cells.hpp"
#include "report/sections.hpp"

namespace nnprof::report::sections {

void bottlenecks(const ReportData& data, std::vector<Section>& out) {
  // Without scopes and findings the overview's hint says what to do. Findings without scopes
  // (from memory counters, heap tracking, CPU samples, the GPU) are still shown.
  if (data.profile->scopes.empty() && data.bottlenecks.empty()) return;
  Section section{"bottlenecks", "Bottlenecks", {}};
  section.say(Sentence().words("What passed a threshold, with the numbers, most severe first."));
  section.add(findings_of(data.bottlenecks, analysis::no_bottlenecks(*data.profile)));
  out.push_back(std::move(section));
}

}  // namespace nnprof::report::sections
