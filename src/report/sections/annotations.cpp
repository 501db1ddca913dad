// What the program said about the run (Profiler::annotate: model sizes, batch size, a git
// revision), each under its own key, in key order.
#include <vector>

#include "report/cells.hpp"
#include "report/format.hpp"
#include "report/sections.hpp"

namespace nnprof::report::sections {

void annotations(const ReportData& data, std::vector<Section>& out) {
  const Profile& profile = *data.profile;
  if (profile.annotations.empty()) return;
  Section& section = out.emplace_back(Section{"annotations", "Annotations", {}});
  section.say(Sentence().words("What the program recorded about the run with ").code("Profiler::annotate").words("."));
  Table table;
  table.id = "annotations-table";
  table.style = Table::Style::Sortable;
  table.filter_label = "Filter annotations by key";
  table.columns = {{"Key", Align::Left, "key"}, {"Value", Align::Left, "value"}};
  for (const auto& [key, value] : profile.annotations)
    table.row({Cell::named(capped_name(key)), Cell::words(capped_name(value, kTextDisplayLimit))});
  section.add(std::move(table));
}

}  // namespace nnprof::report::sections
