// Where the time goes: every scope by inclusive time and by self time, within the hot-path limit.
#include "report/cells.hpp"
#include "report/sections.hpp"

namespace nnprof::report::sections {

void hot_paths(const ReportData& data, std::vector<Section>& out) {
  const Profile& profile = *data.profile;
  if (profile.scopes.empty()) return;
  const std::size_t all = profile.scopes.size();
  Section section{"hot-paths", "Hot paths", {}};
  using enum ScopeColumn;

  section.subheading("By total time");
  section.say(Sentence().words(
      "Every scope name, longest total first. Total is inclusive (nested calls of the same name counted once); "
      "self excludes child scopes; % is of instrumented time; items/s is the work items the program reported for "
      "the scope per second of its total time."));
  if (const Sentence cut = top_of(data.by_total.size(), all, "scopes"); !cut.empty()) section.say(cut);
  Table by_total = scope_table(data, "hot-total", data.by_total,
                               {Rank, Name, Calls, Total, TotalShare, Self, Avg, P50, P95, P99, Min, Max, Items,
                                Throughput, Allocated});
  by_total.style = Table::Style::Sortable;
  by_total.filter_label = "Filter scopes by name";
  section.add(std::move(by_total));

  section.subheading("By self time");
  section.say(Sentence().words("Self time is time in the scope itself, not in the scopes it opened."));
  if (const Sentence cut = top_of(data.by_self.size(), all, "scopes"); !cut.empty()) section.say(cut);
  Table by_self = scope_table(data, "hot-self", data.by_self, {Rank, Name, Self, SelfShare, Calls, AvgSelf, Total});
  by_self.style = Table::Style::Sortable;
  by_self.filter_label = "Filter scopes by name";
  section.add(std::move(by_self));
  out.push_back(std::move(section));
}

}  // namespace nnprof::report::sections
