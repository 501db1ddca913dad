// The public face of the bottleneck analysis and the advisor: their findings with every
// sentence rendered as plain text.
#include "nnprof/analysis.hpp"

#include "analysis/advisor.hpp"
#include "analysis/bottlenecks.hpp"
#include "render/sentence_markup.hpp"

namespace nnprof {

const char* to_string(BottleneckType type) noexcept {
  switch (type) {
    case BottleneckType::SlowOperation: return "slow_operation";
    case BottleneckType::HighCallCount: return "high_call_count";
    case BottleneckType::MemoryHotspot: return "memory_hotspot";
    case BottleneckType::MemoryLeak: return "memory_leak";
    case BottleneckType::LowThroughput: return "low_throughput";
    case BottleneckType::BelowRoofline: return "below_roofline";
    case BottleneckType::CpuHotspot: return "cpu_hotspot";
    case BottleneckType::ScopeCpuHotspot: return "scope_cpu_hotspot";
    case BottleneckType::GpuIdle: return "gpu_idle";
    case BottleneckType::GpuLaunchBound: return "gpu_launch_bound";
    case BottleneckType::PageableMemcpy: return "gpu_pageable_memcpy";
    case BottleneckType::LowOccupancy: return "gpu_low_occupancy";
    case BottleneckType::GpuBelowRoofline: return "gpu_below_roofline";
  }
  return "unknown";
}

const char* to_string(BottleneckSeverity severity) noexcept {
  switch (severity) {
    case BottleneckSeverity::Low: return "low";
    case BottleneckSeverity::Medium: return "medium";
    case BottleneckSeverity::High: return "high";
  }
  return "unknown";
}

std::vector<Bottleneck> analyze_bottlenecks(const Profile& profile, const BottleneckThresholds& thresholds) {
  std::vector<Bottleneck> out;
  for (const analysis::Bottleneck& b : analysis::all_bottlenecks(profile, thresholds)) {
    std::string name = b.scope != kNone     ? profile.str(b.scope)
                       : b.counter != kNone ? profile.str(b.counter)
                                            : b.function;
    std::string scope = name;
    out.push_back(Bottleneck{b.kind, b.severity, std::move(name), b.value, b.threshold,
                             render::text_of(profile, b.description), render::text_of(profile, b.suggestion),
                             std::move(scope)});
  }
  return out;
}

std::vector<Recommendation> recommend(const Profile& profile, const AdvisorOptions& options) {
  std::vector<Recommendation> out;
  for (const analysis::Advice& a : analysis::advise(profile, options)) {
    Recommendation r;
    r.title = render::text_of(profile, a.title);
    r.scope = a.scope != kNone ? profile.str(a.scope) : a.counter != kNone ? profile.str(a.counter) : a.function;
    r.evidence = render::text_of(profile, a.evidence);
    for (const analysis::Sentence& step : a.steps) r.steps.push_back(render::text_of(profile, step));
    r.time_share = a.time_share;
    r.part_speedup = a.part_speedup;
    r.expected_speedup = a.expected_speedup;
    r.max_speedup = a.max_speedup;
    r.priority = static_cast<std::uint32_t>(out.size() + 1);  // advise() returns them in the order to act
    out.push_back(std::move(r));
  }
  return out;
}

}  // namespace nnprof
