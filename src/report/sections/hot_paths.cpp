// Where the time goes: every scope by inclusive time and by self time, within the hot-path limit.
#include <cstddef>

#include "report/cells.hpp"
#include "report/sections.hpp"

namespace nnprof::report::sections {
namespace {

// With heap tracking, each scope's heap bytes next to its time (the "Alloc" of a hot path):
// which hot scope also allocates. Named "Heap allocated" because "Allocated" beside it is the
// memory counters' bytes, which a heap-tracked run may not use at all.
void add_heap_allocated(const ReportData& data, Table& table) {
  // GpuTime, when scope_table appended it, stays the last column.
  const bool gpu_last = !table.columns.empty() && table.columns.back().key == "gpu";
  const auto at = static_cast<std::ptrdiff_t>(table.columns.size() - (gpu_last ? 1 : 0));
  table.columns.insert(table.columns.begin() + at, right("Heap allocated", "heap-alloc"));
  for (std::size_t i = 0; i < table.rows.size(); ++i) {
    table.rows[i].insert(table.rows[i].begin() + at, bytes_cell(data.by_total[i]->heap.alloc_bytes));
  }
}

}  // namespace

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
  if (profile.heap.tracked) {
    section.say(Sentence().words(
        "Heap allocated is the heap bytes allocated while the scope was the innermost open one (heap tracking)."));
  }
  if (const Sentence cut = top_of(data.by_total.size(), all, "scopes"); !cut.empty()) section.say(cut);
  Table by_total = scope_table(data, "hot-total", data.by_total,
                               {Rank, Name, Calls, Total, TotalShare, Self, Avg, P50, P95, P99, Min, Max, Items,
                                Throughput, Allocated});
  if (profile.heap.tracked) add_heap_allocated(data, by_total);
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
