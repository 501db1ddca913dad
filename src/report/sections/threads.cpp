// Which threads did the work: the first thing to check in a multi-threaded program.
#include <string>

#include "report/cells.hpp"
#include "report/sections.hpp"

namespace nnprof::report::sections {

void threads(const ReportData& data, std::vector<Section>& out) {
  const Profile& profile = *data.profile;
  // Nothing recorded at all: the overview's hint says what to do.
  if (profile.scopes.empty() && profile.threads.empty()) return;
  Section section{"threads", "Threads", {}};
  section.say(Sentence().words("Which threads did the work: time in each thread's top-level scopes."));
  if (profile.threads.empty()) {
    section.say(Sentence().words("No threads recorded a scope."));
    out.push_back(std::move(section));
    return;
  }
  Table table;
  table.id = "threads-table";
  table.style = Table::Style::Sortable;
  table.filter_label = "Filter threads by name";
  table.columns = {{"Thread", Align::Left, "thread"},
                   {"TID", Align::Right, "tid"},
                   {"Scopes", Align::Right, "scopes"},
                   {"Top-level time", Align::Right, "time"},
                   {"% of instrumented time", Align::Right, "pct"},
                   {"State", Align::Left, "state"}};
  for (const ThreadInfo& t : profile.threads) {
    table.row({Cell::named(t.name.empty() ? std::string("[unnamed]") : report::capped_name(t.name)),
               Cell::number(std::to_string(t.os_tid), static_cast<double>(t.os_tid)), count_cell(t.scopes_recorded),
               duration_cell(t.top_level_ns), share_cell(t.top_level_ns, data.instrumented_ns),
               Cell::words(t.exited ? "exited" : "running")});
  }
  section.add(std::move(table));
  out.push_back(std::move(section));
}

}  // namespace nnprof::report::sections
