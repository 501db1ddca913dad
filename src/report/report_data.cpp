#include "report/report_data.hpp"

#include <algorithm>

#include "analysis/bottlenecks.hpp"

namespace nnprof::report {
namespace {

CpuData analyse_cpu(const Profile& profile, const ReportLimits& limits) {
  CpuData cpu;
  cpu.total = analysis::cpu_sample_total(profile);
  cpu.functions = analysis::cpu_functions(profile);
  cpu.function_count = cpu.functions.size();
  if (cpu.functions.size() > limits.cpu_functions) cpu.functions.resize(limits.cpu_functions);
  for (std::size_t i = 0; i < cpu.functions.size() && i < limits.cpu_caller_functions; ++i) {
    if (cpu.functions[i].self.samples == 0) break;  // sorted by self samples: none after
    cpu.callers.push_back(analysis::cpu_callers(profile, cpu.functions[i].name));
  }
  cpu.hot_lines = analysis::cpu_hot_lines(profile, limits.hot_lines);
  cpu.scopes = analysis::cpu_scopes(profile, limits.cpu_scope_top);
  cpu.scope_count = cpu.scopes.size();
  if (cpu.scopes.size() > limits.cpu_scopes) cpu.scopes.resize(limits.cpu_scopes);
  cpu.findings = analysis::cpu_bottlenecks(profile);
  return cpu;
}

}  // namespace

ReportData analyse(const Profile& profile, const ReportLimits& limits) {
  ReportData data;
  data.profile = &profile;
  data.limits = limits;
  data.instrumented_ns = profile.instrumented_ns();
  if (!profile.scopes.empty()) {
    data.bottlenecks = analysis::all_bottlenecks(profile);
    data.advice = analysis::advise(profile);
    data.by_total = analysis::top_by_total(profile, limits.hot_paths);
    data.by_self = analysis::top_by_self(profile, limits.hot_paths);
    data.most_called = analysis::most_called(profile, limits.most_called);
    data.allocators = analysis::top_by_alloc_bytes(profile, limits.allocators);
    data.allocating_scopes = analysis::allocating_scope_count(profile);
    data.compute = analysis::compute_scopes(profile);
    data.call_tree = analysis::walk_call_tree(profile, limits.call_tree);
    data.insights = analysis::insights(profile);
  }
  if (profile.heap.tracked) {
    data.heap.allocators = analysis::top_by_heap_bytes(profile, limits.allocators);
    data.heap.allocating_scopes = analysis::heap_allocating_scope_count(profile);
    data.heap.verdict = analysis::leak_verdict(profile);
  }
  if (profile.heap.tracked || !profile.memory_counters.empty()) data.memory_findings = analysis::memory_bottlenecks(profile);
  if (profile.cpu.sampled) data.cpu = analyse_cpu(profile, limits);
  if (profile.gpu.summary.traced) data.gpu = io::gpu_report_data(profile);
  if (!profile.flows.empty()) data.critical_path = critical_path(profile);
  return data;
}

}  // namespace nnprof::report
