#include "io/text_report.hpp"

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
#include "analysis/call_tree.hpp"
#include "analysis/compute.hpp"
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

constexpr std::size_t kTopByTotal = 15;
constexpr std::size_t kTopBySelf = 15;
constexpr std::size_t kTopCalled = 10;
constexpr std::size_t kTopAllocating = 10;
constexpr std::size_t kTopHeapAllocators = 10;
constexpr std::size_t kLeakSites = 10;
constexpr std::size_t kTopCpuFunctions = 15;
constexpr std::size_t kCpuCallerFunctions = 3;  // hottest functions whose callers are listed
constexpr std::size_t kCpuEdges = 3;            // callers and callees listed per function
constexpr std::size_t kHotLines = 10;
constexpr std::size_t kCpuScopes = 15;
constexpr std::size_t kCpuScopeTop = 3;
constexpr std::size_t kTopKernels = 15;
constexpr std::size_t kGpuLeaks = 10;
// Beyond these the tree stops being readable in a terminal; the nodes left out are counted
// and the count printed, so a reader knows the tree is cut.
constexpr analysis::TreeLimits kTreeLimits{12, 200};

void write_heading(std::ostream& out, std::string_view title) { write_text_heading(out, title); }

// A heading that says when a ranking shows only part of the scopes.
std::string ranking_title(std::string_view title, std::size_t shown, std::size_t total) {
  if (shown >= total) return std::string(title);
  return fmt::format("{} (top {} of {} scopes)", title, shown, total);
}

void write_field(std::ostream& out, std::string_view key, std::string_view value) {
  // At least one space after the colon, however long the key.
  out << fmt::format("  {:<19} {}\n", fmt::format("{}:", key), plain_text(value));
}

// ---- header -------------------------------------------------------------------------

void write_header(const Profile& profile, std::uint64_t instrumented_ns, std::ostream& out) {
  const Metadata& meta = profile.meta;
  out << "nnprof summary\n==============\n";
  std::string host = meta.hostname.empty() ? "unknown" : meta.hostname;
  if (!meta.os.empty()) host += fmt::format(" ({})", meta.os);
  write_field(out, "Host", host);
  std::string cpu = meta.cpu_model.empty() ? "unknown" : meta.cpu_model;
  if (meta.logical_cpus > 0) {
    cpu += fmt::format(", {}", format_count(meta.logical_cpus, "logical CPU", "logical CPUs"));
  }
  write_field(out, "CPU", cpu);
  if (!meta.command_line.empty()) write_field(out, "Command", meta.command_line);
  write_field(out, "Threads", format_count(profile.threads.size()));
  write_field(out, "Session duration", format_duration(meta.duration_ns));
  write_field(out, "Clock source",
              fmt::format("{}, {:.4g} ns per tick", meta.clock.source, meta.clock.ns_per_tick));
  write_field(out, "Instrumented time", format_duration(instrumented_ns));
  out << "  (the sum over threads of top-level scope time; the denominator of every % below)\n";
  if (!profile.annotations.empty()) {
    out << "  Annotations:\n";
    for (const auto& [key, value] : profile.annotations)
      out << "    " << plain_text(key) << " = " << plain_text(value) << '\n';
  }
}

// ---- rankings -----------------------------------------------------------------------

void write_ranking(const Profile& profile, std::string_view title,
                   const std::vector<const ScopeStats*>& top,
                   std::initializer_list<ScopeColumn> columns, std::ostream& out) {
  write_heading(out, ranking_title(title, top.size(), profile.scopes.size()));
  scope_table(profile, top, with_gpu_time(profile, columns), Headers::Terminal).write(out);
}

void write_rankings(const Profile& profile, std::ostream& out) {
  using enum ScopeColumn;
  write_ranking(profile, "Hot paths by total time", analysis::top_by_total(profile, kTopByTotal),
                {Rank, Name, Calls, Total, TotalShare, Avg, Min, Max, P95}, out);
  write_ranking(profile, "Hot paths by self time", analysis::top_by_self(profile, kTopBySelf),
                {Rank, Name, Self, SelfShare, Calls, AvgSelf}, out);
  write_ranking(profile, "Most called", analysis::most_called(profile, kTopCalled),
                {Rank, Name, Calls, Total, Avg}, out);
}

// ---- call hierarchy -----------------------------------------------------------------

void write_call_hierarchy(const Profile& profile, const PercentOf& percent, std::ostream& out) {
  write_heading(out, "Call hierarchy");
  if (profile.call_tree.empty()) {
    out << "  No call tree was recorded.\n";
    return;
  }
  out << "  Merged over all threads; two spaces of indent per level; children by total time.\n";
  TextTable table({{"Scope", Align::Left},
                   {"Calls", Align::Right},
                   {"Total", Align::Right},
                   {"Self", Align::Right},
                   {"Avg", Align::Right},
                   {"Min", Align::Right},
                   {"Max", Align::Right},
                   {"% instr", Align::Right}});
  const analysis::TreeWalk walk = analysis::walk_call_tree(profile, kTreeLimits);
  for (const analysis::TreeRow& row : walk.rows) {
    const CallTreeNode& node = profile.call_tree[row.node];
    const std::string indent(2 * static_cast<std::size_t>(row.depth - 1), ' ');
    table.add_row({indent + profile.str(node.name), format_count(node.time.count),
                   format_duration(node.time.sum_ns), format_duration(node.self_ns),
                   format_duration(node.time.mean_ns), format_duration(node.time.min_ns),
                   format_duration(node.time.max_ns), percent(node.time.sum_ns)});
  }
  table.write(out);
  if (walk.omitted() > 0) out << "  " << render(profile, analysis::omitted_nodes(walk)) << '\n';
}

// ---- memory -------------------------------------------------------------------------

void write_memory(const Profile& profile, std::ostream& out) {
  write_heading(out, "Memory");
  memory_counters_table(profile, Headers::Terminal).write(out);
  out << "  " << render(profile, analysis::memory_totals(profile)) << '\n';
  const auto top = analysis::top_by_alloc_bytes(profile, kTopAllocating);
  if (top.empty()) return;
  out << "\n  Top allocating scopes (bytes allocated while the scope was the innermost open "
         "one):\n";
  using enum ScopeColumn;
  scope_table(profile, top, {Rank, Name, Allocated, Allocs, AllocPerCall}, Headers::Terminal)
      .write(out);
}

// ---- heap ---------------------------------------------------------------------------

// One line per bottleneck, or `none` when there is none: the same list wherever it appears.
void write_bottleneck_items(const Profile& profile, const std::vector<analysis::Bottleneck>& found,
                            const analysis::Sentence& none, std::ostream& out) {
  if (found.empty()) out << "  - " << render(profile, none) << '\n';
  for (const analysis::Bottleneck& b : found) {
    out << fmt::format("  - [{}] {}: {} {}\n", analysis::to_string(b.severity), analysis::title(b.kind),
                       render(profile, b.description), render(profile, b.suggestion));
  }
}

void write_bottlenecks(const Profile& profile, std::ostream& out) {
  const std::vector<analysis::Bottleneck> found = analysis::memory_bottlenecks(profile);
  out << "\n  Findings:\n";
  write_bottleneck_items(profile, found, analysis::no_memory_bottlenecks(), out);
}

// Heap tracking: the summary and verdict, who allocates, what is left, what to fix.
void write_heap(const Profile& profile, std::ostream& out) {
  write_heading(out, "Heap");
  for (const analysis::Fact& fact : analysis::heap_facts(profile)) {
    write_field(out, fact.label, render(profile, fact.value));
  }
  write_field(out, "Leak verdict", render(profile, analysis::leak_verdict(profile).explanation));
  const auto top = analysis::top_by_heap_bytes(profile, kTopHeapAllocators);
  if (!top.empty()) {
    out << fmt::format("\n  {} (heap bytes allocated while the scope was the innermost open one):\n",
                       ranking_title("Top allocators", top.size(), analysis::heap_allocating_scope_count(profile)));
    using enum ScopeColumn;
    scope_table(profile, top,
                {Rank, Name, HeapAllocated, HeapShare, HeapAllocs, HeapPerCall, HeapRetained, HeapPeakLive},
                Headers::Terminal)
        .write(out);
  }
  if (!profile.leaks.empty()) {
    out << "\n  Blocks still allocated at the end, by allocation site";
    if (profile.leaks.size() > kLeakSites) out << fmt::format(" (top {} of {})", kLeakSites, profile.leaks.size());
    out << ":\n";
    leak_sites_table(profile, kLeakSites, Headers::Terminal).write(out);
  }
  write_bottlenecks(profile, out);
}

// ---- CPU samples ----------------------------------------------------------------------

// CPU sampling: how it ran, the hottest functions and who calls them, hot lines, each scope's
// samples, and what to fix.
void write_cpu(const Profile& profile, std::ostream& out) {
  write_heading(out, "CPU samples");
  for (const analysis::Fact& fact : analysis::cpu_facts(profile)) {
    write_field(out, fact.label, render(profile, fact.value));
  }
  std::vector<analysis::CpuFunction> functions = analysis::cpu_functions(profile);
  if (functions.empty()) {
    out << "\n  No sample has a stack: there is nothing to attribute to functions.\n";
    return;
  }
  const std::size_t all = functions.size();
  if (functions.size() > kTopCpuFunctions) functions.resize(kTopCpuFunctions);
  out << fmt::format("\n  {} (self: the innermost frame; total: anywhere on the stack, once per sample; % of "
                     "every sample):\n",
                     all > functions.size()
                         ? fmt::format("Top {} of {} functions", functions.size(), all)
                         : std::string("Top functions"));
  cpu_functions_table(functions, Headers::Terminal).write(out);

  out << "\n  Who calls the hottest functions:\n";
  for (std::size_t i = 0; i < functions.size() && i < kCpuCallerFunctions; ++i) {
    if (functions[i].self.samples == 0) break;
    const analysis::CpuCallers calls = analysis::cpu_callers(profile, functions[i].name);
    out << fmt::format("  - {}: {}\n", plain_text(functions[i].name),
                       plain_text(cpu_callers_summary(calls, kCpuEdges)));
  }

  const std::vector<analysis::CpuLine> lines = analysis::cpu_hot_lines(profile, kHotLines);
  if (!lines.empty()) {
    out << "\n  Hot lines (samples whose innermost frame was on the line):\n";
    cpu_lines_table(lines, Headers::Terminal).write(out);
  }

  std::vector<analysis::CpuScope> scopes = analysis::cpu_scopes(profile, kCpuScopeTop);
  if (!scopes.empty()) {
    const std::size_t all_scopes = scopes.size();
    if (scopes.size() > kCpuScopes) scopes.resize(kCpuScopes);
    out << "\n  Samples per scope (each scope with everything below it";
    if (all_scopes > scopes.size()) out << fmt::format("; top {} of {}", scopes.size(), all_scopes);
    out << "):\n";
    cpu_scopes_table(scopes, Headers::Terminal).write(out);
  }

  const std::vector<analysis::Bottleneck> found = analysis::cpu_bottlenecks(profile);
  out << "\n  Findings:\n";
  write_bottleneck_items(profile, found, analysis::no_cpu_bottlenecks(profile), out);
}

// ---- GPU ----------------------------------------------------------------------------

// GPU tracing: how it ran and what it lost, copies, kernels, streams, devices, peer copies and
// device memory; then what each scope's CPU time paid for on the GPU.
void write_gpu(const Profile& profile, std::ostream& out) {
  const GpuReportData data = gpu_report_data(profile);
  write_heading(out, "GPU");
  for (const GpuFact& fact : gpu_facts(profile, data)) write_field(out, fact.label, fact.value);

  if (!data.transfers.empty()) {
    out << "\n  Copies and memsets (bandwidth: bytes over the summed time of the copies):\n";
    gpu_transfers_table(data, Headers::Terminal).write(out);
  }
  if (!data.kernels.empty()) {
    out << "\n  "
        << ranking_title("Top kernels by total time", std::min(data.kernels.size(), kTopKernels), data.kernels.size())
        << " (grid, block, registers and occupancy of the configuration launched most often):\n";
    gpu_kernels_table(profile, data, kTopKernels, Headers::Terminal).write(out);
  }
  if (!data.streams.streams.empty()) {
    out << fmt::format("\n  Streams (idle: between a stream's first op and its last with nothing running; gaps: "
                       "idle stretches longer than {}):\n",
                       format_duration(data.streams.gap_threshold_ns));
    gpu_streams_table(profile, data, Headers::Terminal).write(out);
  }
  if (!data.streams.devices.empty()) {
    out << "\n  Devices (kernel busy: time with a kernel running, as a share of the session):\n";
    gpu_devices_table(data, Headers::Terminal).write(out);
  }
  if (!data.streams.peers.empty()) {
    out << "\n  Peer-to-peer copies:\n";
    gpu_peers_table(data, Headers::Terminal).write(out);
  }
  if (!data.memory.devices.empty()) {
    out << "\n  Device memory (allocations CUPTI traced; NVML: memory in use on the device, every process):\n";
    gpu_memory_table(data, Headers::Terminal).write(out);
    for (const std::string& note : gpu_memory_notes(data)) out << "  " << plain_text(note) << '\n';
  }
  if (!data.memory.leaks.empty()) {
    out << "\n  Device memory still allocated at the end, by allocating scope";
    if (data.memory.leaks.size() > kGpuLeaks) out << fmt::format(" (top {} of {})", kGpuLeaks, data.memory.leaks.size());
    out << ":\n";
    gpu_leaks_table(profile, data, kGpuLeaks, Headers::Terminal).write(out);
  }

  write_heading(out, "GPU time per scope");
  if (profile.gpu.scopes.empty()) {
    out << "  No GPU work was launched inside a scope.\n";
    return;
  }
  out << "  GPU work launched while the scope was open (nested calls of the same name counted once); % of CPU:\n"
         "  GPU time over the scope's inclusive CPU time (over 100%: the GPU worked longer than the CPU waited).\n";
  gpu_scopes_table(profile, Headers::Terminal).write(out);
}

// ---- compute, bottlenecks, advice ---------------------------------------------------

// Scopes with declared work: their rates and, with the machine's peaks, their roofline place.
void write_compute(const Profile& profile, std::ostream& out) {
  const std::vector<analysis::ScopeCompute> scopes = analysis::compute_scopes(profile);
  if (scopes.empty()) return;
  write_heading(out, "Compute (declared FLOPs and bytes)");
  compute_table(profile, scopes, Headers::Terminal).write(out);
  out << "  " << render(profile, analysis::compute_note(profile, scopes)) << '\n';
  out << "  "
      << render(profile, analysis::machine_known(profile) ? analysis::machine_roofs(profile.machine)
                                                          : analysis::no_machine_hint())
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
    out << "  " << render(profile, analysis::no_advice()) << '\n';
    return;
  }
  for (std::size_t i = 0; i < advice.size(); ++i) {
    const analysis::Advice& a = advice[i];
    out << fmt::format("  {}. {} ({})\n", i + 1, render(profile, a.title), render(profile, analysis::speedup_summary(a)));
    out << "     Evidence: " << render(profile, a.evidence) << '\n';
    for (const analysis::Sentence& step : a.steps) out << "     - " << render(profile, step) << '\n';
  }
}

// ---- insights, completeness, diagnostics --------------------------------------------

void write_insights(const Profile& profile, std::ostream& out) {
  write_heading(out, "Insights");
  for (const analysis::Insight& insight : analysis::insights(profile)) {
    out << "  - " << render(profile, insight.sentence) << '\n';
  }
}

void write_completeness(const Profile& profile, std::ostream& out) {
  write_heading(out, "Completeness and cost");
  for (const analysis::Fact& fact : analysis::completeness_facts(profile)) {
    write_field(out, fact.label, render(profile, fact.value));
  }
  out << "  " << analysis::kStatisticsAreComplete << '\n';
}

// Which threads did the work: the first thing to check in a multi-threaded program.
void write_threads(const Profile& profile, std::ostream& out) {
  write_heading(out, "Threads");
  threads_table(profile, Headers::Terminal).write(out);
}

void write_diagnostics(const Profile& profile, std::ostream& out) {
  write_heading(out, "Diagnostics");
  if (profile.diagnostics.empty()) {
    out << "  none\n";
    return;
  }
  for (const Diagnostic& d : profile.diagnostics) {
    out << fmt::format("  [{}] {}\n", to_string(d.severity), plain_text(d.message));
  }
}

// Counters, gauges and histograms recorded by name (nnprof/metrics.hpp).
void write_metrics(const Profile& profile, std::ostream& out) {
  write_heading(out, "Metrics");
  metrics_table(profile).write(out);
  if (const std::string note = metrics_completeness_note(profile); !note.empty()) out << "  " << plain_text(note) << '\n';
}

}  // namespace

void write_text_report(const Profile& whole, std::ostream& out) {
  std::optional<Profile> storage;
  const Profile& profile = with_capped_names(whole, storage);
  const std::uint64_t instrumented_ns = profile.instrumented_ns();
  write_header(profile, instrumented_ns, out);
  if (profile.scopes.empty()) {
    out << '\n' << render(profile, analysis::no_scopes_hint()) << '\n';
  } else {
    write_all_bottlenecks(profile, out);
    write_advice(profile, out);
    write_rankings(profile, out);
    write_compute(profile, out);
    write_call_hierarchy(profile, PercentOf(instrumented_ns), out);
    write_threads(profile, out);
  }
  if (!profile.memory_counters.empty()) write_memory(profile, out);
  if (profile.heap.tracked) write_heap(profile, out);
  if (profile.cpu.sampled) write_cpu(profile, out);
  if (profile.gpu.summary.traced) write_gpu(profile, out);
  if (!profile.metrics.empty()) write_metrics(profile, out);
  if (!profile.flows.empty()) write_critical_path_text(profile, out);
  if (!profile.scopes.empty()) write_insights(profile, out);
  // Zeros in an empty profile would only be noise; its diagnostics may say why it is empty.
  if (!profile.empty()) write_completeness(profile, out);
  if (!profile.empty() || !profile.diagnostics.empty()) write_diagnostics(profile, out);
}

void TextExporter::write(const Profile& profile, std::ostream& out) const {
  write_text_report(profile, out);
  if (!out) throw Error("could not write the text report: the output stream failed");
}

}  // namespace nnprof::io
