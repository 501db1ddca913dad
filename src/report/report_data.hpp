// ReportData: everything the profile report shows, computed once under one set of limits.
// "What does nnprof conclude about this profile?" is `analyse`; sections only describe its
// results, and the JSON report serialises them. No format computes anything of its own.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "analysis/advisor.hpp"
#include "analysis/bottleneck.hpp"
#include "analysis/call_tree.hpp"
#include "analysis/compute.hpp"
#include "analysis/cpu_profile.hpp"
#include "analysis/energy.hpp"
#include "analysis/facts.hpp"
#include "analysis/insights.hpp"
#include "analysis/memory_findings.hpp"
#include "analysis/rankings.hpp"
#include "analysis/system_tracks.hpp"
#include "nnprof/continuous.hpp"
#include "report/gpu_data.hpp"
#include "nnprof/critical_path.hpp"
#include "nnprof/distributed_analysis.hpp"
#include "nnprof/operators.hpp"
#include "nnprof/profile.hpp"
#include "nnprof/system.hpp"

namespace nnprof::report {

/// How many rows each part of a report shows: the same for every format, so that the text,
/// Markdown, HTML and JSON reports state the same facts. What a limit leaves out is counted
/// and said. Lists that docs/JSON_SCHEMA.md documents as complete (every CPU function, every
/// sampled scope, every heap allocator) are kept whole in ReportData, for the JSON report;
/// the sections show their first rows as these limits say.
struct ReportLimits {
  std::size_t hot_paths = 30;           ///< rankings by total and by self time
  std::size_t most_called = 15;
  std::size_t allocators = 15;          ///< by bytes allocated (memory counters) and by heap bytes
  std::size_t leak_sites = 15;
  std::size_t cpu_functions = 20;
  std::size_t cpu_caller_functions = 5;  ///< hottest functions whose callers and callees are listed
  std::size_t cpu_edges = 3;             ///< callers and callees listed per function
  std::size_t hot_lines = 20;
  std::size_t cpu_scopes = 15;
  std::size_t cpu_scope_top = 3;         ///< hottest functions listed per scope
  std::size_t kernels = 15;
  std::size_t gpu_leaks = 10;
  std::size_t critical_path_scopes = 15;
  std::size_t critical_path_steps = 30;
  std::size_t callers_scopes = 15;    ///< scopes (hottest by total first) whose callers are listed
  std::size_t callers_per_scope = 5;  ///< callers listed per scope, most calls first; the rest counted
  std::size_t operators = 30;         ///< operator groups (operator, input shapes), most self time first
  analysis::TreeLimits call_tree{12, 200};  ///< deeper or longer trees are counted, not shown
  bool full_names = false;  ///< function names in full signature, not their readable form (--full-names)
  std::size_t energy_scopes = 15;  ///< scopes by energy in "System and energy", most joules first
  std::size_t rank_waits = 20;        ///< "Ranks": (waiter, waited for, collective) rows, most time first
  std::size_t rank_collectives = 20;  ///< "Ranks": collective calls with the widest arrival spread
  std::size_t rank_path_segments = 40;  ///< "Ranks": critical-path segments, longest first, shown in time order
  /// Where the energy was used and the data centre's PUE, for the carbon of a monitored run:
  /// the region defaults to NNPROF_CARBON_REGION, else the world average, said as such.
  CarbonOptions carbon;

  // How much of the CPU profile ReportData keeps for programs, beyond the rows the sections
  // show: the bounds docs/JSON_SCHEMA.md documents for the JSON report. ReportData keeps the
  // larger of each and its shown limit above, so that the sections always have their rows.
  std::size_t cpu_call_graph_functions = 10;  ///< hottest functions whose callers and callees are kept
  std::size_t hot_lines_kept = 50;
  std::size_t cpu_scope_top_kept = 5;          ///< hottest functions kept per scope

  /// These limits with every list of rows (rankings, allocators, leak sites, functions, hot lines,
  /// scopes, kernels, critical-path rows, tree rows) at `rows` (--rows: every scope in a sortable
  /// HTML table, say); 0 keeps them.
  [[nodiscard]] ReportLimits with_rows(std::size_t rows) const;
};

/// CPU sampling results (empty unless profile.cpu.sampled).
struct CpuData {
  std::vector<analysis::CpuFunction> functions;  ///< every function sampled, most self samples first
  std::size_t function_count = 0;                ///< functions.size()
  /// Callers and callees of the hottest functions with self samples: at most the larger of
  /// limits.cpu_caller_functions and limits.cpu_call_graph_functions.
  std::vector<analysis::CpuCallers> callers;
  std::vector<analysis::CpuLine> hot_lines;  ///< at most the larger of limits.hot_lines and limits.hot_lines_kept
  /// Every scope path with samples, each with its hottest functions (at most the larger of
  /// limits.cpu_scope_top and limits.cpu_scope_top_kept).
  std::vector<analysis::CpuScope> scopes;
  std::size_t scope_count = 0;  ///< scopes.size()
  analysis::SampleCount total;
  std::uint64_t samples_without_stack = 0;
  std::vector<analysis::Bottleneck> findings;
};

/// Heap tracking results (empty unless profile.heap.tracked).
struct HeapData {
  std::vector<analysis::HeapAllocator> allocators;  ///< every scope that allocated heap bytes, most first
  std::size_t allocating_scopes = 0;                ///< allocators.size()
  analysis::LeakVerdict verdict;
};

/// The rates of a scope for which the program reported work items (add_items): the JSON
/// report's `throughput` section. Both over the scope's inclusive time (summed over threads).
struct ScopeThroughput {
  const ScopeStats* scope = nullptr;
  double items_per_second = 0.0;  ///< items * 1e9 / total_ns (samples per second)
  /// calls * 1e9 / total_ns: the iterations per second of a scope that marks one iteration.
  double calls_per_second = 0.0;
};

/// What the system monitor recorded, summarised (only for profiles with Profile::system.monitored).
struct SystemData {
  std::vector<analysis::TrackSummary> tracks;    ///< every track, by name
  std::vector<analysis::DomainSummary> domains;  ///< every energy domain, psys included (not counted)
  double seconds = 0.0;                          ///< from the first sample to the last
  analysis::EnergyAttribution energy;            ///< per scope and per step
  std::optional<CarbonEstimate> carbon;          ///< when some domain counts towards the energy
};

/// Everything the report of one profile shows. It refers to `profile`, which must outlive it.
struct ReportData {
  const Profile* profile = nullptr;
  ReportLimits limits;
  std::uint64_t instrumented_ns = 0;

  std::vector<analysis::Bottleneck> bottlenecks;  ///< every finding, most severe first (also without scopes)
  std::vector<analysis::Bottleneck> memory_findings;
  std::vector<analysis::Advice> advice;  ///< also without scopes
  std::vector<const ScopeStats*> by_total;
  std::vector<const ScopeStats*> by_self;
  std::vector<const ScopeStats*> most_called;
  std::vector<const ScopeStats*> allocators;  ///< by bytes allocated while innermost (memory counters)
  std::size_t allocating_scopes = 0;
  std::vector<analysis::ScopeCompute> compute;
  std::vector<ScopeThroughput> throughput;  ///< scopes with work items, in the profile's order
  bool machine_known = false;  ///< the profile holds the machine's measured peaks (roofs)
  analysis::TreeWalk call_tree;
  std::vector<analysis::Insight> insights;
  HeapData heap;
  CpuData cpu;
  std::optional<report::GpuReportData> gpu;     ///< when profile.gpu.summary.traced
  std::optional<CriticalPath> critical_path;  ///< when the profile has flows
  /// Framework operator calls (spans with "op_scope") by operator and input shapes: every group,
  /// for the JSON report; the section shows limits.operators. Empty without operator calls.
  OperatorTable operators;
  std::optional<SystemData> system;  ///< when the system monitor ran (Profile::system.monitored)
  /// A continuous run's series, anomalies and trends (Profile::continuous.enabled): those stored
  /// when the run finished, else computed from the windows the file holds.
  std::optional<PerformanceTrends> continuous;
  std::optional<RankAnalysis> ranks;  ///< when the profile merges two or more ranks (Profile::ranks)
};

/// Runs every analysis the report needs on `profile`, once. The result points into `profile`.
[[nodiscard]] ReportData analyse(const Profile& profile, const ReportLimits& limits = {});
/// A temporary profile would be gone before its ReportData is read.
ReportData analyse(const Profile&& profile, const ReportLimits& limits = {}) = delete;

}  // namespace nnprof::report
