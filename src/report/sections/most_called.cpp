// The scopes called most often: where a per-call cost adds up.
#include "report/cells.hpp"
#include "report/sections.hpp"

namespace nnprof::report::sections {

void most_called(const ReportData& data, std::vector<Section>& out) {
  const Profile& profile = *data.profile;
  if (profile.scopes.empty()) return;
  Section section{"most-called", "Most called", {}};
  if (const Sentence cut = top_of(data.most_called.size(), profile.scopes.size(), "scopes"); !cut.empty()) {
    section.say(cut);
  }
  using enum ScopeColumn;
  section.add(scope_table(data, "most-called-table", data.most_called, {Rank, Name, Calls, Total, Avg, Self}));
  out.push_back(std::move(section));
}

}  // namespace nnprof::report::sections
