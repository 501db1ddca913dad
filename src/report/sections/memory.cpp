// Memory: the named memory counters (record_alloc / record_free), over time and each in a row.
#include <string>
#include <vector>

#include "analysis/facts.hpp"
#include "report/charts/html_charts.hpp"
#include "report/cells.hpp"
#include "report/sections.hpp"

namespace nnprof::report::sections {


void memory(const ReportData& data, std::vector<Section>& out) {
  const Profile& profile = *data.profile;
  Section section{"memory", "Memory counters", {}};
  if (profile.memory_counters.empty()) {
    // With heap tracking the heap section says what memory did; without it, how to see it.
    if (profile.heap.tracked) return;
    section.say(Sentence()
                    .words("No memory counters were recorded: report allocations with ")
                    .code("record_alloc")
                    .words("/")
                    .code("record_free")
                    .words(" to see memory over time."));
    out.push_back(std::move(section));
    return;
  }
  Picture chart;
  chart.caption.words("Bytes in use over time: the sum of every named counter (record_alloc minus record_free).");
  chart.style = report::html::kMemoryChartStyle;
  chart.draw = [&profile](std::string& html) { report::html::write_memory_chart(profile, html); };
  section.add(std::move(chart));
  section.say(analysis::memory_totals(profile), true);

  Table table;
  table.id = "counters-table";
  table.style = Table::Style::Sortable;
  table.filter_label = "Filter counters by name";
  table.columns = {left("Counter", "counter"), right("Current", "current"), right("Peak", "peak"),
                   right("Allocated", "alloc"), right("Freed", "freed"), right("Allocations", "allocs"),
                   right("Frees", "frees")};
  for (const MemoryCounter& c : profile.memory_counters) {
    table.row({scope_cell(profile, c.name), signed_bytes_cell(c.current_bytes), bytes_cell(c.peak_bytes),
               bytes_cell(c.alloc_bytes), bytes_cell(c.freed_bytes), count_cell(c.alloc_count),
               count_cell(c.free_count)});
  }
  section.add(std::move(table));
  out.push_back(std::move(section));
}

}  // namespace nnprof::report::sections
