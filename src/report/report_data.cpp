#include "report/report_data.hpp"

#include <algorithm>

#include "analysis/bottlenecks.hpp"
#include "analysis/distributed.hpp"
#include "analysis/carbon.hpp"
#include "analysis/continuous_trends.hpp"

namespace nnprof::report {
namespace {

CpuData analyse_cpu(const Profile& profile, const ReportLimits& limits) {
  CpuData cpu;
  cpu.total = analysis::cpu_sample_total(profile);
  for (const CpuSample& s : profile.cpu_samples) {
    if (s.stack >= profile.stacks.size() || profile.stacks[s.stack].frames.empty()) ++cpu.samples_without_stack;
  }
  // Whole lists for programs (the JSON report); the sections cut them to their limits.
  cpu.functions = analysis::cpu_functions(profile);
  cpu.function_count = cpu.functions.size();
  const std::size_t caller_functions = std::max(limits.cpu_caller_functions, limits.cpu_call_graph_functions);
  for (std::size_t i = 0; i < cpu.functions.size() && i < caller_functions; ++i) {
    if (cpu.functions[i].self.samples == 0) break;  // sorted by self samples: none after
    cpu.callers.push_back(analysis::cpu_callers(profile, cpu.functions[i].name));
  }
  cpu.hot_lines = analysis::cpu_hot_lines(profile, std::max(limits.hot_lines, limits.hot_lines_kept));
  cpu.scopes = analysis::cpu_scopes(profile, std::max(limits.cpu_scope_top, limits.cpu_scope_top_kept));
  cpu.scope_count = cpu.scopes.size();
  cpu.findings = analysis::cpu_bottlenecks(profile);
  return cpu;
}

SystemData analyse_system(const Profile& profile, const ReportLimits& limits) {
  SystemData system;
  system.tracks = analysis::summarize_tracks(profile.system);
  system.domains = analysis::summarize_domains(profile.system);
  system.seconds = analysis::monitored_seconds(profile.system);
  system.energy = analysis::attribute_energy(profile);
  const bool any_energy = std::ranges::any_of(profile.system.energy, analysis::counts_towards_total);
  // An unknown region or a PUE below 1 throws: the report would state a figure nobody asked for.
  if (any_energy) system.carbon = analysis::estimate_carbon(profile.system, limits.carbon);
  return system;
}

}  // namespace

ReportLimits ReportLimits::with_rows(std::size_t rows) const {
  ReportLimits limits = *this;
  if (rows == 0) return limits;
  for (std::size_t* limit : {&limits.hot_paths, &limits.most_called, &limits.allocators, &limits.leak_sites,
                             &limits.cpu_functions, &limits.hot_lines, &limits.cpu_scopes, &limits.kernels,
                             &limits.gpu_leaks, &limits.critical_path_scopes, &limits.critical_path_steps, &limits.callers_scopes,
                             &limits.callers_per_scope, &limits.operators, &limits.energy_scopes, &limits.rank_waits, &limits.rank_collectives,
                             &limits.rank_path_segments, &limits.call_tree.max_rows})
    *limit = rows;
  return limits;
}

ReportData analyse(const Profile& profile, const ReportLimits& limits) {
  ReportData data;
  data.profile = &profile;
  data.limits = limits;
  data.instrumented_ns = profile.instrumented_ns();
  // Findings about CPU samples, the heap or the GPU need no scope: the JSON report lists them
  // for every profile (the text formats leave the sections out without scopes).
  data.bottlenecks = analysis::all_bottlenecks(profile);
  data.advice = analysis::advise(profile);
  data.machine_known = analysis::machine_known(profile);
  if (!profile.scopes.empty()) {
    data.by_total = analysis::top_by_total(profile, limits.hot_paths);
    data.by_self = analysis::top_by_self(profile, limits.hot_paths);
    data.most_called = analysis::most_called(profile, limits.most_called);
    data.allocators = analysis::top_by_alloc_bytes(profile, limits.allocators);
    data.allocating_scopes = analysis::allocating_scope_count(profile);
    data.compute = analysis::compute_scopes(profile);
    for (const ScopeStats& scope : profile.scopes) {
      if (scope.items == 0) continue;
      const double seconds = static_cast<double>(scope.total_ns) / 1e9;
      data.throughput.push_back({&scope, scope.items_per_second(),
                                 seconds > 0.0 ? static_cast<double>(scope.time.count) / seconds : 0.0});
    }
    data.call_tree = analysis::walk_call_tree(profile, limits.call_tree);
    data.insights = analysis::insights(profile);
  }
  if (profile.heap.tracked) {
    data.heap.allocators = analysis::top_allocators(profile, profile.scopes.size());
    data.heap.allocating_scopes = data.heap.allocators.size();
    data.heap.verdict = analysis::leak_verdict(profile);
  }
  if (profile.heap.tracked || !profile.memory_counters.empty()) data.memory_findings = analysis::memory_bottlenecks(profile);
  if (profile.cpu.sampled) data.cpu = analyse_cpu(profile, limits);
  if (profile.gpu.summary.traced) data.gpu = report::gpu_report_data(profile);
  if (!profile.flows.empty()) data.critical_path = critical_path(profile);
  if (!profile.span_args.empty()) data.operators = operator_table(profile);
  if (profile.system.monitored) data.system = analyse_system(profile, limits);
  if (profile.continuous.enabled) data.continuous = analysis::trends_of(profile.continuous);
  if (analysis::has_ranks(profile)) data.ranks = analysis::analyze_ranks(profile, RankAnalysisOptions{});
  return data;
}

}  // namespace nnprof::report
