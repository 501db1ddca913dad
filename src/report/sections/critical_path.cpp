// Critical path: the chain of work, across threads, that set the run's length: its summary,
// the time on it by scope, and its longest steps in time order. From ReportData::critical_path.
#include <algorithm>
#include <numeric>
#include <vector>

#include "analysis/critical_path.hpp"
#include "analysis/memory_findings.hpp"
#include "report/cells.hpp"
#include "report/sections.hpp"

namespace nnprof::report::sections {
namespace {


Table scopes_table(const Profile& profile, const CriticalPath& path, std::size_t max_rows) {
  Table table;
  table.id = "critical-path-scopes";
  table.columns = {right("#", "rank"),         left("Scope", "scope"),   right("Time on the path", "ns"),
                   right("% of the path", "pct"), right("Steps", "steps"), right("Threads", "threads")};
  for (std::size_t i = 0; i < path.by_scope.size() && i < max_rows; ++i) {
    const CriticalPathScope& e = path.by_scope[i];
    table.row({rank_cell(i), name_cell(analysis::critical_step_label(profile, e.kind, e.name)),
               duration_cell(e.duration_ns), fraction_cell(e.share), count_cell(e.steps), count_cell(e.threads)});
  }
  return table;
}

// The longest `max_rows` steps, in time order: a path of thousands of steps is read by its
// longest ones.
std::vector<std::size_t> shown_steps(const CriticalPath& path, std::size_t max_rows) {
  std::vector<std::size_t> shown(path.steps.size());
  std::iota(shown.begin(), shown.end(), std::size_t{0});
  if (shown.size() > max_rows) {
    std::stable_sort(shown.begin(), shown.end(), [&](std::size_t a, std::size_t b) {
      return path.steps[a].duration_ns() > path.steps[b].duration_ns();
    });
    shown.resize(max_rows);
    std::sort(shown.begin(), shown.end());
  }
  return shown;
}

Table steps_table(const Profile& profile, const CriticalPath& path, const std::vector<std::size_t>& shown) {
  Table table;
  table.id = "critical-path-steps";
  table.columns = {right("#", "rank"),      right("Start (since session start)", "start"), left("Step", "step"),
                   left("Thread", "thread"), right("Duration", "ns"),                     right("% of the path", "pct")};
  for (const std::size_t i : shown) {
    const CriticalPathStep& s = path.steps[i];
    table.row({rank_cell(i), duration_cell(s.start_ns), name_cell(analysis::critical_step_label(profile, s.kind, s.name)),
               Cell::words(analysis::thread_label(profile, s.thread)), duration_cell(s.duration_ns()),
               fraction_cell(s.share)});
  }
  return table;
}

}  // namespace

void critical_path(const ReportData& data, std::vector<Section>& out) {
  if (!data.critical_path) return;
  const Profile& profile = *data.profile;
  const CriticalPath& path = *data.critical_path;
  Section section{"critical-path", "Critical path", {}};
  section.say(analysis::critical_path_summary(profile, path));
  if (!path.empty()) {
    section.subheading("Time on the path by scope");
    say_top_of(section, std::min(path.by_scope.size(), data.limits.critical_path_scopes), path.by_scope.size(),
               "scopes");
    section.say(Sentence().words("Waits on another thread count as that thread's work."));
    section.add(scopes_table(profile, path, data.limits.critical_path_scopes));
    section.subheading("Steps");
    const std::vector<std::size_t> shown = shown_steps(path, data.limits.critical_path_steps);
    if (shown.size() < path.steps.size()) {
      section.say(Sentence()
                      .words("The ")
                      .count(shown.size())
                      .words(" longest of ")
                      .count(path.steps.size())
                      .words(" steps, in time order."));
    } else {
      section.say(Sentence().words("Steps in time order."));
    }
    section.add(steps_table(profile, path, shown));
  }
  out.push_back(std::move(section));
}

}  // namespace nnprof::report::sections
