// What went wrong while recording: scopes left open, spans dropped, counters misused.
#include <string>

#include <fmt/format.h>

#include "report/format.hpp"
#include "report/cells.hpp"
#include "report/sections.hpp"

namespace nnprof::report::sections {
namespace {

Cell thread_cell(const Profile& profile, std::uint32_t thread) {
  if (thread == kNone) return Cell::words("n/a");
  if (thread >= profile.threads.size()) return Cell::words(fmt::format("#{}", thread));
  const ThreadInfo& t = profile.threads[thread];
  return Cell::words(fmt::format("{} (TID {})", t.name.empty() ? std::string("[unnamed]") : report::capped_name(t.name),
                                 t.os_tid));
}

}  // namespace

void diagnostics(const ReportData& data, std::vector<Section>& out) {
  const Profile& profile = *data.profile;
  if (profile.empty() && profile.diagnostics.empty()) return;
  Section section{"diagnostics", "Diagnostics", {}};
  if (profile.diagnostics.empty()) {
    section.say(Sentence().words("None: every scope opened and closed as expected."));
    out.push_back(std::move(section));
    return;
  }
  Table table;
  table.id = "diagnostics-table";
  table.columns = {{"Severity", Align::Left, "severity"}, {"Kind", Align::Left, "kind"},
                   {"Thread", Align::Left, "thread"},     {"Scope or counter", Align::Left, "scope"},
                   {"Count", Align::Right, "count"},      {"Message", Align::Left, "message"}};
  for (const Diagnostic& d : profile.diagnostics) {
    table.row({Cell::words(to_string(d.severity)), Cell::words(to_string(d.kind)), thread_cell(profile, d.thread),
               d.name == kNone ? Cell::words("n/a") : scope_cell(profile, d.name), count_cell(d.count),
               Cell::words(report::capped_name(d.message, report::kTextDisplayLimit))});
  }
  section.add(std::move(table));
  out.push_back(std::move(section));
}

}  // namespace nnprof::report::sections
