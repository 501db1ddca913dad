#include "io/markdown_report.hpp"

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <optional>
#include <ostream>
#include <string>
#include <string_view>
#include <vector>

#include <fmt/format.h>

#include "analysis/advisor.hpp"
#include "analysis/bottlenecks.hpp"
#include "analysis/compute.hpp"
#include "analysis/call_tree.hpp"
#include "analysis/cpu_profile.hpp"
#include "analysis/facts.hpp"
#include "analysis/insights.hpp"
#include "analysis/memory_findings.hpp"
#include "analysis/rankings.hpp"
#include "io/critical_path_report.hpp"
#include "io/format.hpp"
#include "io/gpu_report_tables.hpp"
#include "io/metric_table.hpp"
#include "io/report_tables.hpp"
#include "io/sentence_markup.hpp"
#include "nnprof/error.hpp"

namespace nnprof::io {
namespace {

// Row limits follow the reports users know (top 30 hot paths, top 15 allocators and most
// called); a Markdown file is scrolled, not read on one terminal screen.
constexpr std::size_t kTopByTotal = 30;
constexpr std::size_t kTopBySelf = 30;
constexpr std::size_t kTopAllocators = 15;
constexpr std::size_t kTopCalled = 15;
constexpr std::size_t kLeakSites = 15;
// Same cut as the text report: deeper or longer trees are counted, not printed.
constexpr analysis::TreeLimits kTreeLimits{12, 200};

// A scope name as inline Markdown, bold so that it stands out in prose and list items
// (and so that a name starting with "-" or "#" cannot open a list or a heading).
std::string strong(std::string_view name) { return fmt::format("**{}**", markdown_escape(name)); }

// Backslash escapes do not apply inside a code span: the text goes in as it is (it is ours,
// never a user string).
std::string code_span(std::string_view code) { return fmt::format("`{}`", code); }

// Sentences in running text. Table cells take kPlainText instead: write_table escapes them.
const Markup kMarkdown{markdown_escape, strong, code_span, unmarked};

void write_heading(std::ostream& out, std::string_view title) {
  out << "\n## " << title << "\n\n";
}

// A line under a heading when a ranking shows only part of the scopes.
void write_ranking_note(std::ostream& out, std::size_t shown, std::size_t total) {
  if (shown < total) out << fmt::format("Top {} of {} scopes.\n\n", shown, total);
}

// A GitHub-flavoured table of `table`'s cells, escaped, padded so that the raw file reads
// as a table too. Right-aligned columns get a "--:" rule.
void write_table(const TextTable& table, std::ostream& out) {
  const std::vector<TableColumn>& columns = table.columns();
  std::vector<std::string> header;
  std::vector<std::vector<std::string>> rows;
  std::vector<std::size_t> widths;
  for (const TableColumn& column : columns) {
    header.push_back(markdown_escape(column.header));
    widths.push_back(std::max<std::size_t>(3, display_width(header.back())));
  }
  for (const auto& row : table.rows()) {
    std::vector<std::string> escaped;
    for (std::size_t i = 0; i < row.size(); ++i) {
      escaped.push_back(markdown_escape(row[i]));
      widths[i] = std::max(widths[i], display_width(escaped.back()));
    }
    rows.push_back(std::move(escaped));
  }
  const auto write_row = [&](const std::vector<std::string>& cells) {
    std::string line = "|";
    for (std::size_t i = 0; i < cells.size(); ++i) {
      const std::string padding(widths[i] - display_width(cells[i]), ' ');
      line += ' ';
      line += columns[i].align == Align::Right ? padding + cells[i] : cells[i] + padding;
      line += " |";
    }
    out << line << '\n';
  };
  write_row(header);
  std::string rule = "|";
  for (std::size_t i = 0; i < columns.size(); ++i) {
    rule += ' ';
    rule += columns[i].align == Align::Right ? std::string(widths[i] - 1, '-') + ":"
                                             : std::string(widths[i], '-');
    rule += " |";
  }
  out << rule << '\n';
  for (const auto& row : rows) write_row(row);
}

// ---- system information -------------------------------------------------------------

std::string or_unknown(const std::string& value) { return value.empty() ? "unknown" : value; }

void write_system_information(const Profile& profile, std::uint64_t instrumented_ns,
                              std::ostream& out) {
  const Metadata& meta = profile.meta;
  write_heading(out, "System information");
  TextTable table({{"Property", Align::Left}, {"Value", Align::Left}});
  table.add_row({"Host", or_unknown(meta.hostname)});
  table.add_row({"OS", or_unknown(meta.os)});
  table.add_row({"CPU", or_unknown(meta.cpu_model)});
  table.add_row({"Logical CPUs", meta.logical_cpus == 0 ? "unknown" : format_count(meta.logical_cpus)});
  table.add_row({"Compiler", or_unknown(meta.compiler)});
  table.add_row({"Command line", or_unknown(meta.command_line)});
  if (meta.pid != 0) table.add_row({"Process ID", std::to_string(meta.pid)});
  if (!meta.nnprof_version.empty()) table.add_row({"nnprof version", meta.nnprof_version});
  table.add_row({"Session duration", format_duration(meta.duration_ns)});
  table.add_row({"Clock source", fmt::format("{}, {:.4g} ns per tick", meta.clock.source,
                                             meta.clock.ns_per_tick)});
  table.add_row({"Threads", format_count(profile.threads.size())});
  table.add_row({"Instrumented time", format_duration(instrumented_ns)});
  write_table(table, out);
  out << "\nInstrumented time is the sum over threads of top-level scope time: the denominator "
         "of every \"% of instrumented time\" below.\n";
  if (profile.annotations.empty()) return;
  out << "\nAnnotations of the run (`Profiler::annotate`):\n\n";
  TextTable annotations({{"Key", Align::Left}, {"Value", Align::Left}});
  for (const auto& [key, value] : profile.annotations) annotations.add_row({key, value});
  write_table(annotations, out);
}

// ---- rankings -----------------------------------------------------------------------

void write_ranking(const Profile& profile, std::string_view title,
                   const std::vector<const ScopeStats*>& top, std::size_t of,
                   std::string_view lead, const std::vector<ScopeColumn>& columns,
                   std::ostream& out) {
  write_heading(out, title);
  write_ranking_note(out, top.size(), of);
  if (!lead.empty()) out << lead << "\n\n";
  write_table(scope_table(profile, top, columns, Headers::Document), out);
}

void write_hot_paths(const Profile& profile, std::ostream& out) {
  using enum ScopeColumn;
  write_ranking(profile, "Hot paths by time", analysis::top_by_total(profile, kTopByTotal),
                profile.scopes.size(), "",
                with_gpu_time(profile, {Rank, Name, Total, TotalShare, Calls, Avg, Min, Max, P95}),
                out);
  write_ranking(profile, "Hot paths by self time", analysis::top_by_self(profile, kTopBySelf),
                profile.scopes.size(),
                "Self time is time in the scope itself, not in the scopes it opened.",
                with_gpu_time(profile, {Rank, Name, Self, SelfShare, Calls, AvgSelf, Total}), out);
}

void write_top_allocators(const Profile& profile, std::ostream& out) {
  const auto top = analysis::top_by_alloc_bytes(profile, kTopAllocators);
  if (top.empty()) return;
  const analysis::AllocationTotal total = analysis::allocation_total(profile);
  using enum ScopeColumn;
  write_ranking(
      profile, "Top allocators", top, analysis::allocating_scope_count(profile),
      fmt::format("Bytes allocated while the scope was the innermost open one. Percentages are of "
                  "{} {}.",
                  format_bytes(total.bytes),
                  total.from_counters ? "allocated in all (every memory counter, inside scopes or not)"
                                      : "allocated inside scopes"),
      {Rank, Name, Allocated, AllocShare, Allocs, AllocPerCall}, out);
}

void write_throughput(const Profile& profile, std::ostream& out) {
  TextTable table({{"Scope", Align::Left},
                   {"Items", Align::Right},
                   {"Total", Align::Right},
                   {"Throughput", Align::Right}});
  for (const ScopeStats& scope : profile.scopes) {
    if (scope.items == 0) continue;
    table.add_row({profile.str(scope.name), format_count(scope.items),
                   format_duration(scope.total_ns),
                   format_rate(scope.items_per_second(), "items/s")});
  }
  if (table.empty()) return;
  write_heading(out, "Throughput");
  out << "Work items the program reported for a scope, per second of its total time.\n\n";
  write_table(table, out);
}

void write_most_called(const Profile& profile, std::ostream& out) {
  using enum ScopeColumn;
  write_ranking(profile, "Most called", analysis::most_called(profile, kTopCalled),
                profile.scopes.size(), "", with_gpu_time(profile, {Rank, Name, Calls, Total, Avg, Self}), out);
}

// ---- call hierarchy -----------------------------------------------------------------

void write_call_hierarchy(const Profile& profile, const PercentOf& percent, std::ostream& out) {
  write_heading(out, "Call hierarchy");
  if (profile.call_tree.empty()) {
    out << "No call tree was recorded.\n";
    return;
  }
  out << "Merged over all threads; children by total time; percentages of instrumented time.\n\n";
  const analysis::TreeWalk walk = analysis::walk_call_tree(profile, kTreeLimits);
  for (const analysis::TreeRow& row : walk.rows) {
    const CallTreeNode& node = profile.call_tree[row.node];
    // Two spaces per level: a nested "- " item must start within its parent's content column.
    out << fmt::format("{}- {}: {}, total {} ({}), self {}, avg {}\n",
                       std::string(2 * static_cast<std::size_t>(row.depth - 1), ' '),
                       strong(profile.str(node.name)),
                       format_count(node.time.count, "call", "calls"),
                       format_duration(node.time.sum_ns), percent(node.time.sum_ns),
                       format_duration(node.self_ns), format_duration(node.time.mean_ns));
  }
  if (walk.omitted() > 0) {
    out << '\n' << render(profile, analysis::omitted_nodes(walk), kMarkdown) << '\n';
  }
}

// ---- threads, memory ----------------------------------------------------------------

void write_threads(const Profile& profile, std::ostream& out) {
  write_heading(out, "Threads");
  write_table(threads_table(profile, Headers::Document), out);
}

void write_memory_counters(const Profile& profile, std::ostream& out) {
  write_heading(out, "Memory counters");
  write_table(memory_counters_table(profile, Headers::Document), out);
  out << '\n' << render(profile, analysis::memory_totals(profile), kMarkdown) << '\n';
}

// ---- heap ---------------------------------------------------------------------------

void write_heap_allocators(const Profile& profile, std::ostream& out) {
  const auto top = analysis::top_by_heap_bytes(profile, kTopAllocators);
  if (top.empty()) return;
  out << "\n### Top allocators\n\n";
  write_ranking_note(out, top.size(), analysis::heap_allocating_scope_count(profile));
  out << fmt::format("Heap bytes allocated while the scope was the innermost open one. Percentages are of the "
                     "{} allocated in all; retained is what was allocated there and still live at the end.\n\n",
                     format_bytes(profile.heap.alloc_bytes));
  using enum ScopeColumn;
  write_table(scope_table(profile, top,
                          {Rank, Name, HeapAllocated, HeapShare, HeapAllocs, HeapPerCall, HeapRetained, HeapPeakLive},
                          Headers::Document),
              out);
}

void write_leak_sites(const Profile& profile, std::ostream& out) {
  if (profile.leaks.empty()) return;
  out << "\n### Blocks still allocated at the end\n\n";
  if (profile.leaks.size() > kLeakSites) {
    out << fmt::format("Top {} of {} allocation sites.\n\n", kLeakSites, profile.leaks.size());
  }
  out << "Grouped by allocation site, largest first: the innermost scope and the function that called the "
         "allocator. Leaked blocks are unreachable; reachable ones are still referenced (globals, thread "
         "stacks).\n\n";
  write_table(leak_sites_table(profile, kLeakSites, Headers::Document), out);
}

// One item per bottleneck, or `none` when there is none: the same list wherever it appears.
void write_bottleneck_items(const Profile& profile, const std::vector<analysis::Bottleneck>& found,
                            const analysis::Sentence& none, std::ostream& out) {
  if (found.empty()) out << "- " << render(profile, none, kMarkdown) << '\n';
  for (const analysis::Bottleneck& b : found) {
    out << fmt::format("- **{}** ({} severity): {} {}\n", analysis::title(b.kind), analysis::to_string(b.severity),
                       render(profile, b.description, kMarkdown), render(profile, b.suggestion, kMarkdown));
  }
}

void write_memory_findings(const Profile& profile, std::ostream& out) {
  out << "\n### Memory findings\n\n";
  const std::vector<analysis::Bottleneck> found = analysis::memory_bottlenecks(profile);
  write_bottleneck_items(profile, found, analysis::no_memory_bottlenecks(), out);
}

// Heap tracking: the summary and verdict, who allocates, what is left, what to fix.
void write_heap(const Profile& profile, std::ostream& out) {
  write_heading(out, "Heap memory");
  TextTable table({{"Measure", Align::Left}, {"Value", Align::Left}});
  for (const analysis::Fact& fact : analysis::heap_facts(profile)) {
    table.add_row({std::string(fact.label), render(profile, fact.value)});
  }
  table.add_row({"Leak verdict", render(profile, analysis::leak_verdict(profile).explanation)});
  write_table(table, out);
  write_heap_allocators(profile, out);
  write_leak_sites(profile, out);
  write_memory_findings(profile, out);
}

// ---- CPU samples ----------------------------------------------------------------------

constexpr std::size_t kTopCpuFunctions = 20;
constexpr std::size_t kCpuCallerFunctions = 5;
constexpr std::size_t kCpuEdges = 5;
constexpr std::size_t kHotLines = 15;
constexpr std::size_t kCpuScopes = 20;
constexpr std::size_t kCpuScopeTop = 3;

// CPU sampling: how it ran, the hottest functions and who calls them, hot lines, each scope's
// samples, and what to fix. Percentages are of the samples, not of instrumented time.
void write_cpu(const Profile& profile, std::ostream& out) {
  write_heading(out, "CPU samples");
  TextTable facts({{"Measure", Align::Left}, {"Value", Align::Left}});
  for (const analysis::Fact& fact : analysis::cpu_facts(profile)) {
    facts.add_row({std::string(fact.label), render(profile, fact.value)});
  }
  write_table(facts, out);
  std::vector<analysis::CpuFunction> functions = analysis::cpu_functions(profile);
  if (functions.empty()) {
    out << "\nNo sample has a stack: there is nothing to attribute to functions.\n";
    return;
  }
  out << "\n### Top functions\n\n";
  if (functions.size() > kTopCpuFunctions) {
    out << fmt::format("Top {} of {} functions.\n\n", kTopCpuFunctions, functions.size());
    functions.resize(kTopCpuFunctions);
  }
  out << "Self: samples whose innermost frame is the function; total: samples with the function anywhere on the "
         "stack, counted once per sample. Percentages are of every sample.\n\n";
  write_table(cpu_functions_table(functions, Headers::Document), out);

  out << "\n### Who calls the hottest functions\n\n";
  for (std::size_t i = 0; i < functions.size() && i < kCpuCallerFunctions; ++i) {
    if (functions[i].self.samples == 0) break;
    const analysis::CpuCallers calls = analysis::cpu_callers(profile, functions[i].name);
    out << fmt::format("- **{}**: {}\n", markdown_escape(functions[i].name),
                       markdown_escape(cpu_callers_summary(calls, kCpuEdges)));
  }

  const std::vector<analysis::CpuLine> lines = analysis::cpu_hot_lines(profile, kHotLines);
  if (!lines.empty()) {
    out << "\n### Hot lines\n\nSamples whose innermost frame was on the line.\n\n";
    write_table(cpu_lines_table(lines, Headers::Document), out);
  }

  std::vector<analysis::CpuScope> scopes = analysis::cpu_scopes(profile, kCpuScopeTop);
  if (!scopes.empty()) {
    out << "\n### Samples per scope\n\n";
    if (scopes.size() > kCpuScopes) {
      out << fmt::format("Top {} of {} scopes.\n\n", kCpuScopes, scopes.size());
      scopes.resize(kCpuScopes);
    }
    out << "Each scope with everything below it; its hottest functions by self samples.\n\n";
    write_table(cpu_scopes_table(scopes, Headers::Document), out);
  }

  out << "\n### CPU findings\n\n";
  const std::vector<analysis::Bottleneck> found = analysis::cpu_bottlenecks(profile);
  write_bottleneck_items(profile, found, analysis::no_cpu_bottlenecks(profile), out);
}

// ---- GPU ----------------------------------------------------------------------------

constexpr std::size_t kTopKernels = 30;
constexpr std::size_t kGpuLeaks = 15;

// GPU tracing: how it ran and what it lost, copies, kernels, streams, devices, peer copies and
// device memory; then what each scope's CPU time paid for on the GPU.
void write_gpu(const Profile& profile, std::ostream& out) {
  const GpuReportData data = gpu_report_data(profile);
  write_heading(out, "GPU");
  TextTable facts({{"Measure", Align::Left}, {"Value", Align::Left}});
  for (const GpuFact& fact : gpu_facts(profile, data)) facts.add_row({fact.label, fact.value});
  write_table(facts, out);

  if (!data.transfers.empty()) {
    out << "\n### Copies and memsets\n\nAchieved bandwidth: bytes over the summed time of the copies. Copies from or "
           "to pageable host memory go through a staging buffer and cannot overlap with host work.\n\n";
    write_table(gpu_transfers_table(data, Headers::Document), out);
  }
  if (!data.kernels.empty()) {
    out << "\n### Top kernels\n\n";
    if (data.kernels.size() > kTopKernels) {
      out << fmt::format("Top {} of {} kernels.\n\n", kTopKernels, data.kernels.size());
    }
    out << "By total time. Grid, block, registers and theoretical occupancy are those of the configuration launched "
           "most often; occupancy marked (est.) was computed by nnprof from the device limits.\n\n";
    write_table(gpu_kernels_table(profile, data, kTopKernels, Headers::Document), out);
  }
  if (!data.streams.streams.empty()) {
    out << fmt::format("\n### Streams\n\nIdle: time between a stream's first op and its last with nothing running "
                       "on it; idle gaps: idle stretches longer than {}; efficiency: busy over that span.\n\n",
                       format_duration(data.streams.gap_threshold_ns));
    write_table(gpu_streams_table(profile, data, Headers::Document), out);
  }
  if (!data.streams.devices.empty()) {
    out << "\n### Devices\n\nKernel busy: time with at least one kernel running, and its share of the session; "
           "overlap: time with two or more streams of the device busy at once.\n\n";
    write_table(gpu_devices_table(data, Headers::Document), out);
  }
  if (!data.streams.peers.empty()) {
    out << "\n### Peer-to-peer copies\n\n";
    write_table(gpu_peers_table(data, Headers::Document), out);
  }
  if (!data.memory.devices.empty()) {
    out << "\n### Device memory\n\nAllocations CUPTI traced (cudaMalloc, stream-ordered and managed); NVML: "
           "memory in use on the device, by every process.\n\n";
    write_table(gpu_memory_table(data, Headers::Document), out);
    const std::vector<std::string> notes = gpu_memory_notes(data);
    if (!notes.empty()) out << '\n';
    for (const std::string& note : notes) out << "- " << markdown_escape(note) << '\n';
  }
  if (!data.memory.leaks.empty()) {
    out << "\n### Device memory still allocated at the end\n\n";
    if (data.memory.leaks.size() > kGpuLeaks) {
      out << fmt::format("Top {} of {} allocating scopes.\n\n", kGpuLeaks, data.memory.leaks.size());
    }
    write_table(gpu_leaks_table(profile, data, kGpuLeaks, Headers::Document), out);
  }

  write_heading(out, "GPU time per scope");
  if (profile.gpu.scopes.empty()) {
    out << "No GPU work was launched inside a scope.\n";
    return;
  }
  out << "GPU work launched while the scope was open (nested calls of the same name counted once). GPU time / CPU "
         "time is over the scope's inclusive CPU time; above 100% the GPU worked longer than the CPU spent in the "
         "scope.\n\n";
  write_table(gpu_scopes_table(profile, Headers::Document), out);
}

// ---- insights, completeness, diagnostics --------------------------------------------

// ---- compute, bottlenecks, advice ---------------------------------------------------

void write_compute(const Profile& profile, std::ostream& out) {
  const std::vector<analysis::ScopeCompute> scopes = analysis::compute_scopes(profile);
  if (scopes.empty()) return;
  write_heading(out, "Compute");
  out << render(profile, analysis::compute_note(profile, scopes), kMarkdown) << "\n\n";
  write_table(compute_table(profile, scopes, Headers::Document), out);
  out << '\n'
      << render(profile,
                analysis::machine_known(profile) ? analysis::machine_roofs(profile.machine) : analysis::no_machine_hint(),
                kMarkdown)
      << '\n';
}

void write_all_bottlenecks(const Profile& profile, std::ostream& out) {
  write_heading(out, "Bottlenecks");
  const std::vector<analysis::Bottleneck> found = analysis::all_bottlenecks(profile);
  write_bottleneck_items(profile, found, analysis::no_bottlenecks(profile), out);
}

void write_advice(const Profile& profile, std::ostream& out) {
  write_heading(out, "Recommendations");
  const std::vector<analysis::Advice> advice = analysis::advise(profile);
  if (advice.empty()) {
    out << render(profile, analysis::no_advice(), kMarkdown) << '\n';
    return;
  }
  for (std::size_t i = 0; i < advice.size(); ++i) {
    const analysis::Advice& a = advice[i];
    out << fmt::format("{}. **{}** ({})  \n   Evidence: {}\n", i + 1, render(profile, a.title, kMarkdown),
                       render(profile, analysis::speedup_summary(a), kMarkdown),
                       render(profile, a.evidence, kMarkdown));
    for (const analysis::Sentence& step : a.steps) out << "   - " << render(profile, step, kMarkdown) << '\n';
  }
}

void write_insights(const Profile& profile, std::ostream& out) {
  write_heading(out, "Insights");
  for (const analysis::Insight& insight : analysis::insights(profile)) {
    out << "- " << render(profile, insight.sentence, kMarkdown) << '\n';
  }
}

void write_completeness(const Profile& profile, std::ostream& out) {
  write_heading(out, "Completeness and cost");
  TextTable table({{"Measure", Align::Left}, {"Value", Align::Left}});
  for (const analysis::Fact& fact : analysis::completeness_facts(profile)) {
    table.add_row({std::string(fact.label), render(profile, fact.value)});
  }
  write_table(table, out);
  out << '\n' << markdown_escape(analysis::kStatisticsAreComplete) << '\n';
}

std::string thread_cell(const Profile& profile, std::uint32_t thread) {
  if (thread == kNone) return "n/a";
  if (thread >= profile.threads.size()) return fmt::format("#{}", thread);
  const ThreadInfo& t = profile.threads[thread];
  return fmt::format("{} (TID {})", t.name.empty() ? "[unnamed]" : t.name, t.os_tid);
}

void write_diagnostics(const Profile& profile, std::ostream& out) {
  write_heading(out, "Diagnostics");
  if (profile.diagnostics.empty()) {
    out << "None.\n";
    return;
  }
  TextTable table({{"Severity", Align::Left},
                   {"Kind", Align::Left},
                   {"Thread", Align::Left},
                   {"Scope or counter", Align::Left},
                   {"Count", Align::Right},
                   {"Message", Align::Left}});
  for (const Diagnostic& d : profile.diagnostics) {
    table.add_row({to_string(d.severity), to_string(d.kind), thread_cell(profile, d.thread),
                   d.name == kNone ? "n/a" : profile.str(d.name), format_count(d.count),
                   d.message});
  }
  write_table(table, out);
}

bool is_ascii_alnum(char c) {
  return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
}

// An underscore between two letters or digits can neither open nor close emphasis
// (CommonMark's flanking rules), so "train_step" stays readable in the raw file.
bool intraword(std::string_view text, std::size_t i) {
  return i > 0 && i + 1 < text.size() && is_ascii_alnum(text[i - 1]) && is_ascii_alnum(text[i + 1]);
}

// Counters, gauges and histograms recorded by name (nnprof/metrics.hpp).
void write_metrics(const Profile& profile, std::ostream& out) {
  write_heading(out, "Metrics");
  write_table(metrics_table(profile), out);
  if (const std::string note = metrics_completeness_note(profile); !note.empty()) out << '\n' << note << '\n';
}

}  // namespace

std::string markdown_escape(std::string_view text) {
  std::string out;
  out.reserve(text.size() + text.size() / 8);
  for (std::size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    const auto byte = static_cast<unsigned char>(c);
    if (c == '_' && intraword(text, i)) {
      out += c;
      continue;
    }
    switch (c) {
      case '\\': case '`': case '*': case '_': case '[': case ']': case '<': case '>':
      case '|': case '~': case '&': case '$':
        out += '\\';
        out += c;
        break;
      // "\\n" in the source renders as the two characters \n.
      case '\n': out += "\\\\n"; break;
      case '\r': out += "\\\\r"; break;
      case '\t': out += "\\\\t"; break;
      default:
        if (byte < 0x20 || byte == 0x7F) {
          out += fmt::format("\\\\x{:02x}", byte);
        } else {
          out += c;
        }
    }
  }
  return out;
}

void write_markdown_table(const TextTable& table, std::ostream& out) { write_table(table, out); }

void write_markdown_report(const Profile& whole, std::ostream& out) {
  std::optional<Profile> storage;
  const Profile& profile = with_capped_names(whole, storage);
  const std::uint64_t instrumented_ns = profile.instrumented_ns();
  out << "# nnprof report\n";
  write_system_information(profile, instrumented_ns, out);
  if (profile.scopes.empty()) {
    out << '\n' << render(profile, analysis::no_scopes_hint(), kMarkdown) << '\n';
  } else {
    write_all_bottlenecks(profile, out);
    write_advice(profile, out);
    write_hot_paths(profile, out);
    write_compute(profile, out);
    write_top_allocators(profile, out);
    write_throughput(profile, out);
    write_most_called(profile, out);
    write_call_hierarchy(profile, PercentOf(instrumented_ns), out);
    write_threads(profile, out);
  }
  if (!profile.memory_counters.empty()) write_memory_counters(profile, out);
  if (profile.heap.tracked) write_heap(profile, out);
  if (profile.cpu.sampled) write_cpu(profile, out);
  if (profile.gpu.summary.traced) write_gpu(profile, out);
  if (!profile.metrics.empty()) write_metrics(profile, out);
  if (!profile.flows.empty()) write_critical_path_markdown(profile, out);
  if (!profile.scopes.empty()) write_insights(profile, out);
  // As in the text report: an empty profile's zeros are noise, its diagnostics may not be.
  if (!profile.empty()) write_completeness(profile, out);
  if (!profile.empty() || !profile.diagnostics.empty()) write_diagnostics(profile, out);
}

void MarkdownExporter::write(const Profile& profile, std::ostream& out) const {
  write_markdown_report(profile, out);
  if (!out) throw Error("could not write the Markdown report: the output stream failed");
}

}  // namespace nnprof::io
