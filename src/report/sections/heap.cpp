// Heap: what automatic heap tracking saw: the heap over time, its facts and leak verdict, who
// allocated, what was still allocated at the end, and what to fix.
#include <algorithm>
#include <string>
#include <vector>

#include "analysis/memory_findings.hpp"
#include "analysis/rankings.hpp"
#include "report/charts/html_charts.hpp"
#include "report/cells.hpp"
#include "report/sections.hpp"

namespace nnprof::report::sections {
namespace {


// The sampled stack of a leak site, one frame per line: the title of its "allocated at" cell.
std::string stack_text(const Profile& profile, const LeakSite& site) {
  if (site.stack >= profile.stacks.size()) return "no stack sampled for this site";
  std::string text = "sampled stack, innermost first:";
  for (const std::uint32_t frame : profile.stacks[site.stack].frames) {
    text += "\n";
    text += analysis::frame_label(profile, frame);
  }
  return text;
}

void add_allocators(const ReportData& data, Section& section) {
  const Profile& profile = *data.profile;
  const std::vector<analysis::HeapAllocator>& allocators = data.heap.allocators;
  const std::size_t shown = std::min(allocators.size(), data.limits.allocators);
  if (shown == 0) return;
  section.subheading("Top allocators");
  say_top_of(section, shown, data.heap.allocating_scopes, "scopes");
  section.say(Sentence()
                  .words("Heap bytes allocated while the scope was the innermost open one; % is of the ")
                  .bytes(profile.heap.alloc_bytes)
                  .words(" allocated in all; retained is what was allocated there and still live at the end."));
  Table table;
  table.id = "heap-allocators-table";
  table.style = Table::Style::Sortable;
  table.filter_label = "Filter scopes by name";
  table.columns = {right("#", "rank"),          left("Scope", "scope"),
                   right("Allocated", "alloc"), right("% of heap allocated", "pct"),
                   right("Allocations", "allocs"), right("Avg per call", "per-call"),
                   right("Retained at end", "retained"), right("Retained blocks", "blocks"),
                   right("Peak live", "peak")};
  for (std::size_t i = 0; i < shown; ++i) {
    const ScopeStats& s = *allocators[i].scope;
    const HeapAttribution& h = s.heap;
    const auto per_call = analysis::heap_bytes_per_call(s);
    table.row({rank_cell(i), scope_cell(profile, s.name), bytes_cell(h.alloc_bytes),
               share_cell(h.alloc_bytes, profile.heap.alloc_bytes), count_cell(h.alloc_count),
               per_call ? bytes_cell(*per_call) : not_known(),
               bytes_cell(h.retained_bytes), count_cell(h.retained_blocks), bytes_cell(h.peak_live_bytes)});
  }
  section.add(std::move(table));
}

void add_leak_sites(const ReportData& data, Section& section) {
  const Profile& profile = *data.profile;
  if (profile.leaks.empty()) return;
  section.subheading("Blocks still allocated at the end");
  const std::size_t rows = std::min(profile.leaks.size(), data.limits.leak_sites);
  say_top_of(section, rows, profile.leaks.size(), "allocation sites");
  section.say(Sentence().words(
      "By allocation site, largest first: the innermost scope and the function that called the allocator (its "
      "title holds the sampled stack). Leaked blocks are unreachable; reachable ones are still referenced from "
      "globals or thread stacks."));
  Table table;
  table.id = "leaks-table";
  table.style = Table::Style::Sortable;
  table.filter_label = "Filter allocation sites";
  table.columns = {right("#", "rank"),    left("Scope", "scope"),   left("Allocated at (calling function)", "caller"),
                   right("Blocks", "blocks"), right("Bytes", "bytes"), left("State", "state")};
  const char* unreachable = profile.heap.reachability_checked ? "leaked" : "not checked";
  for (std::size_t i = 0; i < rows; ++i) {
    const LeakSite& site = profile.leaks[i];
    Cell caller = name_cell(analysis::frame_label(profile, site.caller));
    caller.title = report::capped_name(stack_text(profile, site), report::kTextDisplayLimit);
    table.row({rank_cell(i), name_cell(analysis::scope_path_label(profile, site.node)), std::move(caller),
               count_cell(site.blocks), bytes_cell(site.bytes),
               Cell::words(site.reachable ? "reachable" : unreachable)});
  }
  section.add(std::move(table));
}

}  // namespace

void heap(const ReportData& data, std::vector<Section>& out) {
  const Profile& profile = *data.profile;
  if (!profile.heap.tracked) return;
  Section section{"heap", "Heap memory", {}};
  Picture chart;
  chart.caption.words(
      "Heap in use (every malloc and new, tracked automatically), the process's resident set size (RSS) and its "
      "peak (VmHWM) over time; times are since the session start.");
  chart.style = report::html::kHeapChartStyle;
  chart.draw = [&profile](std::string& html) { report::html::write_heap_chart(profile, html); };
  section.add(std::move(chart));

  Facts facts;
  for (const analysis::Fact& fact : analysis::heap_facts(profile)) facts.items.push_back({std::string(fact.label), fact.value});
  facts.items.push_back({"Leak verdict", data.heap.verdict.explanation});
  section.add(std::move(facts));

  add_allocators(data, section);
  add_leak_sites(data, section);
  section.subheading("Memory findings");
  section.add(findings_of(data.memory_findings, analysis::no_memory_bottlenecks()));
  out.push_back(std::move(section));
}

}  // namespace nnprof::report::sections
