#include "analysis/bottlenecks.hpp"

#include <algorithm>
#include <cmath>

#include "analysis/compute.hpp"
#include "analysis/cpu_profile.hpp"
#include "analysis/gpu_findings.hpp"
#include "analysis/memory_findings.hpp"
#include "analysis/rankings.hpp"

namespace nnprof::analysis {
namespace {

// A scope this small a share of the run is still reported, but as worth knowing only.
constexpr double kMinorShare = 0.01;

Sentence where_time_goes(const Profile& profile, const ScopeStats& s) {
  Sentence out;
  const bool has_children = std::any_of(profile.call_tree.begin(), profile.call_tree.end(), [&](const CallTreeNode& n) {
    return n.name == s.name && !n.children.empty();
  });
  if (s.flops > 0.0) {
    out.words("Its FLOP rate and roofline position (below) say whether to cut memory traffic or computation.");
  } else if (profile.cpu.sampled) {
    out.words("The CPU samples of the scope (see its hottest functions) say where inside it the time goes; declare "
              "its work with ")
        .code("NNPROF_SCOPE_FLOPS")
        .words(" to see how close it runs to this machine's roofs.");
  } else {
    out.words(has_children ? "Its own time is outside its child scopes: add scopes around the steps inside it, or "
                           : "Split it into child scopes around the steps inside it, or ")
        .words("sample it (")
        .code("nnprof record --sample-hz 1000")
        .words(") to find its hot functions and lines; declare its work with ")
        .code("NNPROF_SCOPE_FLOPS")
        .words(" to see how close it runs to this machine's roofs.");
  }
  return out;
}

void add_slow_operations(const Profile& profile, const BottleneckThresholds& t, std::vector<Bottleneck>& out) {
  const std::uint64_t instrumented = profile.instrumented_ns();
  if (instrumented == 0) return;
  for (const ScopeStats& s : profile.scopes) {
    const double share = static_cast<double>(s.self_ns) / static_cast<double>(instrumented);
    if (!(share > t.slow_operation_share)) continue;
    Bottleneck b;
    b.kind = BottleneckKind::SlowOperation;
    b.severity = severity_for(share, t.slow_operation_share);
    b.scope = s.name;
    b.value = share;
    b.time_share = share;
    b.threshold = t.slow_operation_share;
    b.description.scope(s.name).words(" spent ").duration(s.self_ns).words(" in itself, ").share(share).key()
        .words(" of the instrumented time (threshold ").share(t.slow_operation_share).words("), over ")
        .count(s.time.count, "call", "calls").words(" of ").duration(s.time.mean_ns).words(" on average.");
    b.suggestion = where_time_goes(profile, s);
    out.push_back(std::move(b));
  }
}

void add_high_call_counts(const Profile& profile, const BottleneckThresholds& t, std::vector<Bottleneck>& out) {
  const double per_scope = profile.completeness.overhead_per_scope_ns;
  for (const ScopeStats& s : profile.scopes) {
    if (s.time.count <= t.high_call_count) continue;
    const double calls = static_cast<double>(s.time.count);
    const double share = share_of_instrumented(profile, s.total_ns);
    Bottleneck b;
    b.kind = BottleneckKind::HighCallCount;
    b.severity = share < kMinorShare ? BottleneckSeverity::Low
                                     : severity_for(calls, static_cast<double>(t.high_call_count));
    b.scope = s.name;
    b.value = calls;
    b.time_share = std::min(share, 1.0);
    b.threshold = static_cast<double>(t.high_call_count);
    b.description.scope(s.name).words(" was called ").count(s.time.count).key().words(" times (threshold ")
        .count(t.high_call_count).words("), ").duration(s.time.mean_ns).words(" per call on average, ")
        .share(share).words(" of the instrumented time.");
    b.suggestion.words("Give each call more work: process a whole batch (or tile) per call instead of one item, "
                       "or fuse it with the operations next to it, so that the fixed cost of a call is paid less often.");
    if (per_scope > 0.0) {
      b.suggestion.words(" Recording each call costs about ").duration(per_scope).words(" (")
          .duration(per_scope * calls).words(" in all); if that matters, move the scope outside the loop.");
    }
    out.push_back(std::move(b));
  }
}

Sentence bound_advice(const RooflinePoint& p) {
  Sentence s;
  if (p.bound == RooflineBound::Memory) {
    return s.words("It is memory-bound (")
        .ratio(p.intensity, "FLOP/byte").words(", below the ridge at ").ratio(p.ridge, "FLOP/byte")
        .words("): move fewer bytes per FLOP. Fuse it with the operations before and after it so that "
               "intermediates stay in cache, tile loops so that each block is reused while it is in cache, read "
               "memory contiguously, and use a smaller element type (fp16/bf16) where accuracy allows.");
  }
  return s.words("It is compute-bound (")
      .ratio(p.intensity, "FLOP/byte").words(", above the ridge at ").ratio(p.ridge, "FLOP/byte")
      .words("): do the FLOPs faster. Use a tuned kernel (OpenBLAS, oneDNN, Eigen) rather than hand loops, let "
             "the compiler vectorise with FMA (")
      .code("-O3 -march=native")
      .words("), and spread the work over the cores.");
}

}  // namespace

std::vector<Bottleneck> time_bottlenecks(const Profile& profile, const BottleneckThresholds& thresholds) {
  std::vector<Bottleneck> out;
  add_slow_operations(profile, thresholds, out);
  add_high_call_counts(profile, thresholds, out);
  return out;
}

std::vector<Bottleneck> compute_bottlenecks(const Profile& profile, const BottleneckThresholds& t) {
  std::vector<Bottleneck> out;
  for (const ScopeCompute& c : compute_scopes(profile)) {
    const ScopeStats& s = *c.scope;
    if (!(s.flops > 0.0)) continue;
    const double gflops = c.flops_per_second / 1e9;
    // A slow operation that takes almost none of the time is not a bottleneck.
    const double time_share = share_of_instrumented(profile, s.total_ns);
    // Wrappers are judged through their children (as below), so no work is flagged twice.
    if (gflops < t.low_throughput_gflops && time_share >= t.roofline_min_share && c.own_flops_share >= kOwnWorkShare) {
      Bottleneck b;
      b.kind = BottleneckKind::LowThroughput;
      b.severity = severity_below(gflops, t.low_throughput_gflops);
      b.scope = s.name;
      b.value = gflops;
      b.time_share = std::min(time_share, 1.0);
      b.threshold = t.low_throughput_gflops;
      b.description.scope(s.name).words(" computed at ").si(c.flops_per_second, "FLOP/s").key()
          .words(" (threshold ").si(t.low_throughput_gflops * 1e9, "FLOP/s").words("): ")
          .si(s.flops, "FLOP").words(" in ").duration(s.total_ns).words(".");
      if (c.roofline) {
        b.suggestion = bound_advice(*c.roofline);
      } else {
        b.suggestion.words("Use a tuned kernel (OpenBLAS, oneDNN, Eigen) instead of scalar loops and build with ")
            .code("-O3 -march=native");
        if (s.bytes == 0) b.suggestion.words("; declare the bytes it moves too, to see whether memory limits it");
        if (!machine_known(profile)) b.suggestion.words("; run ").code("nnprof machine").words(" to get this machine's roofs");
        b.suggestion.words(".");
      }
      out.push_back(std::move(b));
    }
    if (!c.roofline || c.own_flops_share < kOwnWorkShare) continue;
    const RooflinePoint& p = *c.roofline;
    if (!(p.fraction < t.roofline_fraction) || !(time_share >= t.roofline_min_share)) continue;
    Bottleneck b;
    b.kind = BottleneckKind::BelowRoofline;
    b.severity = severity_below(p.fraction, t.roofline_fraction);
    b.scope = s.name;
    b.value = p.fraction;
    b.time_share = std::min(time_share, 1.0);
    b.threshold = t.roofline_fraction;
    b.description.scope(s.name).words(" reached ").si(p.attained, "FLOP/s").words(", ").share(p.fraction).key()
        .words(" of the ").words(p.bound == RooflineBound::Memory ? "memory" : "compute").words(" roof of ")
        .si(p.attainable, "FLOP/s").words(" that ").words(c.one_core ? "one core" : "this machine")
        .words(" attains at its ").ratio(p.intensity, "FLOP/byte").words(" (threshold ").share(t.roofline_fraction)
        .words("; ").share(time_share).words(" of the instrumented time).");
    b.suggestion = bound_advice(p);
    out.push_back(std::move(b));
  }
  return out;
}

std::vector<Bottleneck> scope_cpu_bottlenecks(const Profile& profile, const BottleneckThresholds& t) {
  std::vector<Bottleneck> out;
  if (!profile.cpu.sampled || profile.cpu_samples.size() < t.cpu_min_samples) return out;
  std::vector<std::uint32_t> nodes;  // of each finding in `out`
  for (const CpuScope& cs : cpu_scopes(profile, 1)) {
    if (cs.node == 0 || cs.top.empty() || !(cs.share >= t.scope_hotspot_min_share)) continue;
    const CpuFunction& fn = cs.top.front();
    const double in_scope = cs.samples.samples == 0
                                ? 0.0
                                : static_cast<double>(fn.self.samples) / static_cast<double>(cs.samples.samples);
    if (!(in_scope > t.scope_hotspot_share)) continue;
    Bottleneck b;
    b.kind = BottleneckKind::ScopeCpuHotspot;
    b.severity = severity_for(cs.share, t.scope_hotspot_min_share);
    b.scope = profile.call_tree[cs.node].name;
    b.function = fn.name;
    b.value = in_scope;
    b.time_share = cs.share * in_scope;
    b.threshold = t.scope_hotspot_share;
    b.description.function(fn.name).words(" was running in ").share(in_scope).key().words(" of the ")
        .count(cs.samples.samples, "CPU sample", "CPU samples").words(" of ").words(cs.path)
        .words(" (threshold ").share(t.scope_hotspot_share).words("), a scope with ").share(cs.share)
        .words(" of all samples.");
    b.suggestion.words("Optimise ").function(fn.name).words(" first, or call it less often from ").scope(b.scope)
        .words(": it is where that scope's time goes (its hot lines are in the CPU section).");
    out.push_back(std::move(b));
    nodes.push_back(cs.node);
  }
  // A function that dominates a scope dominates every scope around it too: report it once,
  // at the innermost scope, which says most precisely where it is called from.
  auto inside = [&](std::uint32_t node, std::uint32_t ancestor) {
    for (std::uint32_t up = profile.call_tree[node].parent; up != 0 && up != kNone; up = profile.call_tree[up].parent)
      if (up == ancestor) return true;
    return false;
  };
  std::vector<Bottleneck> innermost;
  for (std::size_t i = 0; i < out.size(); ++i) {
    bool covered = false;
    for (std::size_t j = 0; j < out.size() && !covered; ++j)
      covered = j != i && out[j].function == out[i].function && inside(nodes[j], nodes[i]);
    if (!covered) innermost.push_back(std::move(out[i]));
  }
  return innermost;
}

std::vector<Bottleneck> all_bottlenecks(const Profile& profile, const BottleneckThresholds& t) {
  std::vector<Bottleneck> all = time_bottlenecks(profile, t);
  auto append = [&](std::vector<Bottleneck> more) {
    for (Bottleneck& b : more) all.push_back(std::move(b));
  };
  append(compute_bottlenecks(profile, t));
  CpuFindingOptions cpu;
  cpu.hotspot_share = t.cpu_hotspot_share;
  cpu.min_samples = t.cpu_min_samples;
  append(cpu_bottlenecks(profile, cpu));
  append(scope_cpu_bottlenecks(profile, t));
  MemoryFindingOptions memory;
  memory.hotspot_share = t.memory_hotspot_share;
  memory.leak_share = t.memory_leak_share;
  append(memory_bottlenecks(profile, memory));
  // The named counters judged as well: a program that reports its memory with record_alloc and
  // runs without heap tracking has no other memory findings. When both ran, both are kept, each
  // naming its source: a heap finding names a scope and the heap peak, a counter finding the
  // counter and the counters' peak. They measure different things (every malloc, attributed to
  // scopes; what the program declares, under names of its choosing) and nothing links a counter
  // to the scopes whose mallocs back it, so one cannot stand in for the other; the same buffer
  // may be reported once as each, and the advisor keeps them apart (advisor.cpp).
  append(counter_bottlenecks(profile, memory));
  append(gpu_bottlenecks(profile, t));
  std::stable_sort(all.begin(), all.end(),
                   [](const Bottleneck& a, const Bottleneck& b) { return a.severity > b.severity; });
  return all;
}

Sentence no_bottlenecks(const Profile& profile, const BottleneckThresholds& t) {
  Sentence s;
  s.words("No bottleneck: no scope spent more than ").share(t.slow_operation_share)
      .words(" of the instrumented time in itself or was called more than ").count(t.high_call_count)
      .words(" times");
  if (work_total(profile).flops > 0.0)
    s.words(", no scope with FLOPs ran below ").si(t.low_throughput_gflops * 1e9, "FLOP/s")
        .words(" or ").share(t.roofline_fraction).words(" of its roof");
  if (profile.heap.tracked)
    s.words(", no scope held more than ").share(t.memory_hotspot_share).words(" of the heap peak and less than ")
        .share(t.memory_leak_share).words(" of the heap was left unfreed");
  if (!profile.memory_counters.empty())
    s.words(", no memory counter held more than ").share(t.memory_hotspot_share)
        .words(" of the counters' peak and none kept more than ").share(t.memory_leak_share)
        .words(" of what it allocated");
  if (profile.cpu.sampled)
    s.words(", no function ran in more than ").share(t.cpu_hotspot_share).words(" of the CPU samples");
  if (profile.gpu.summary.traced) s.words(", ").append(no_gpu_bottlenecks(profile, t));
  return s.words(".");
}

}  // namespace nnprof::analysis
