#include "analysis/advisor.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <set>
#include <utility>

#include "analysis/bottlenecks.hpp"
#include "analysis/compute.hpp"
#include "analysis/rankings.hpp"

namespace nnprof::analysis {
namespace {

// 1 / (1 − p): the whole run's speedup if the part took no time; infinite for the whole run.
double limit_speedup(double share) {
  return share < 1.0 ? 1.0 / (1.0 - share) : std::numeric_limits<double>::infinity();
}

std::vector<Sentence> roof_steps(RooflineBound bound) {
  if (bound == RooflineBound::Memory) {
    return {Sentence().words("Fuse it with the operations before and after it, so that intermediate tensors stay "
                             "in cache instead of going to memory and back."),
            Sentence().words("Tile its loops so that each block of data is reused while it is in cache, and read "
                             "memory contiguously."),
            Sentence().words("Move fewer bytes: a smaller element type (fp16, bf16, int8) where accuracy allows.")};
  }
  return {Sentence().words("Call a tuned kernel (OpenBLAS, oneDNN, Eigen) instead of hand-written loops."),
          Sentence().words("Let the compiler vectorise with FMA: build with ").code("-O3 -march=native")
              .words(" and keep inner loops free of branches and aliasing."),
          Sentence().words("Spread the work over the cores (one block of rows per thread).")};
}

// The gain of a scope placed on the roofline: from its fraction of the attainable roof to the
// fraction a tuned kernel reaches.
Advice roof_advice(const ScopeCompute& c, double share, const AdvisorOptions& o) {
  const RooflinePoint& p = *c.roofline;
  Advice a;
  a.scope = c.scope->name;
  a.title.words("Bring ").scope(a.scope).words(" closer to its ")
      .words(p.bound == RooflineBound::Memory ? "memory" : "compute").words(" roof");
  a.time_share = share;
  a.part_speedup = std::max(1.0, o.roof_target / p.fraction);
  a.expected_speedup = amdahl_speedup(share, a.part_speedup);
  a.max_speedup = limit_speedup(share);
  a.evidence.scope(a.scope).words(" takes ").share(share).words(" of the instrumented time and runs at ")
      .si(p.attained, "FLOP/s").words(", ").share(p.fraction).words(" of the ")
      .si(p.attainable, "FLOP/s").words(" that ").words(c.one_core ? "one core" : "this machine")
      .words(" attains at its ").ratio(p.intensity, "FLOP/byte").words(" (")
      .words(p.bound == RooflineBound::Memory ? "memory" : "compute").words("-bound). Reaching ")
      .share(o.roof_target).words(" of the roof makes it ").ratio(a.part_speedup, "×").words(" faster and the run ")
      .ratio(a.expected_speedup, "×").words(" faster (Amdahl).");
  a.steps = roof_steps(p.bound);
  return a;
}

Advice from_bottleneck(const Bottleneck& b, const AdvisorOptions& o) {
  Advice a;
  a.scope = b.scope;
  a.function = b.function;
  a.counter = b.counter;
  a.time_share = std::clamp(b.time_share, 0.0, 1.0);
  a.max_speedup = limit_speedup(a.time_share);
  a.evidence = b.description;
  switch (b.kind) {
    case BottleneckKind::SlowOperation:
      a.title.words("Find out what inside ").scope(b.scope).words(" takes its time");
      a.steps.push_back(b.suggestion);
      break;
    case BottleneckKind::HighCallCount:
      a.title.words("Call ").scope(b.scope).words(" less often, with more work per call");
      a.steps.push_back(b.suggestion);
      break;
    case BottleneckKind::LowThroughput:
      a.title.words("Speed up the arithmetic of ").scope(b.scope);
      a.steps.push_back(b.suggestion);
      break;
    case BottleneckKind::CpuHotspot:
    case BottleneckKind::ScopeCpuHotspot:
      a.title.words("Optimise ").function(b.function);
      a.steps.push_back(b.suggestion);
      break;
    // A counter finding is about what the program recorded under a name, not about a scope's
    // mallocs: its title names the counter, and its step is the counter's own suggestion.
    case BottleneckKind::MemoryHotspot:
      if (b.counter != kNone) {
        a.title.words("Lower what memory counter ").scope(b.counter).words(" holds at the peak");
      } else {
        a.title.words("Hold less memory in ").scope(b.scope);
      }
      a.steps.push_back(b.suggestion);
      break;
    case BottleneckKind::MemoryLeak:
      if (b.counter != kNone) {
        a.title.words("Free what memory counter ").scope(b.counter).words(" keeps to the end");
      } else {
        a.title.words("Free the memory that is never released");
      }
      a.steps.push_back(b.suggestion);
      break;
    case BottleneckKind::BelowRoofline:  // handled from the roofline itself
      break;
    case BottleneckKind::GpuIdle:
      a.title.words("Keep the GPU fed: launch its work before it runs out");
      a.steps.push_back(b.suggestion);
      break;
    case BottleneckKind::GpuLaunchBound:
      a.title.words("Launch fewer, larger GPU kernels");
      a.steps.push_back(b.suggestion);
      break;
    case BottleneckKind::PageableMemcpy:
      a.title.words("Copy through pinned memory, asynchronously");
      a.steps.push_back(b.suggestion);
      break;
    case BottleneckKind::LowOccupancy:
      a.title.words("Raise the occupancy of ").function(b.function);
      a.steps.push_back(b.suggestion);
      break;
    case BottleneckKind::GpuBelowRoofline:
      // As roof_advice: reaching the target fraction of the memory roof is the part's gain.
      a.title.words("Bring the GPU kernels of ").scope(b.scope).words(" closer to the memory roof");
      if (b.value > 0.0) {
        a.part_speedup = std::max(1.0, o.roof_target / b.value);
        a.expected_speedup = amdahl_speedup(a.time_share, a.part_speedup);
        a.evidence.words(" Reaching ").share(o.roof_target).words(" of the roof makes its kernels ")
            .ratio(a.part_speedup, "×").words(" faster and the run ").ratio(a.expected_speedup, "×")
            .words(" faster (Amdahl, if the GPU work is on the run's critical path).");
      }
      a.steps.push_back(b.suggestion);
      break;
  }
  return a;
}

// Ranking: the expected gain when known, else the gain of making the part twice as fast.
double rank_key(const Advice& a) {
  return a.part_speedup > 0.0 ? a.expected_speedup : amdahl_speedup(a.time_share, 2.0);
}

}  // namespace

std::vector<Advice> advise(const Profile& profile, const AdvisorOptions& o) {
  std::vector<Advice> out;
  std::set<StringId> placed;  // scopes with a roofline recommendation
  for (const ScopeCompute& c : compute_scopes(profile)) {
    if (!c.roofline || !(c.scope->flops > 0.0) || c.own_flops_share < kOwnWorkShare) continue;
    const double share = std::min(1.0, share_of_instrumented(profile, c.scope->total_ns));
    if (!(c.roofline->fraction < o.roof_target) || !(share >= o.thresholds.roofline_min_share)) continue;
    out.push_back(roof_advice(c, share, o));
    placed.insert(c.scope->name);
  }
  std::set<std::pair<int, std::string>> seen;  // one recommendation per kind and subject
  for (const Bottleneck& b : all_bottlenecks(profile, o.thresholds)) {
    if (b.kind == BottleneckKind::BelowRoofline) continue;
    if (b.scope != kNone && placed.count(b.scope) != 0 &&
        (b.kind == BottleneckKind::LowThroughput || b.kind == BottleneckKind::SlowOperation))
      continue;  // the roofline recommendation covers it, with a measured gain
    const int group = b.kind == BottleneckKind::ScopeCpuHotspot ? static_cast<int>(BottleneckKind::CpuHotspot)
                                                                : static_cast<int>(b.kind);
    // A counter is a subject of its own: a heap finding about a scope, or a counter finding
    // about another counter, does not stand for it.
    const std::string subject = b.counter != kNone   ? "counter " + std::to_string(b.counter)
                                : b.function.empty() ? std::to_string(b.scope)
                                                     : b.function;
    if (!seen.emplace(group, subject).second) continue;
    out.push_back(from_bottleneck(b, o));
  }
  std::stable_sort(out.begin(), out.end(), [](const Advice& a, const Advice& b) { return rank_key(a) > rank_key(b); });
  return out;
}

Sentence speedup_summary(const Advice& a) {
  Sentence s;
  if (a.part_speedup > 0.0) s.words("expected: the run ").ratio(a.expected_speedup, "×").key().words(" faster; ");
  if (a.time_share <= 0.0) return s.words("saves memory, not time");
  if (std::isinf(a.max_speedup)) return s.words("it is the whole run");
  return s.words("at most ").ratio(a.max_speedup, "×").words(" if it took no time (").share(a.time_share)
      .words(" of the time)");
}

Sentence no_advice() {
  return Sentence().words("Nothing to recommend: no bottleneck passed its threshold and no scope with declared FLOPs "
                          "ran far from its roof.");
}

}  // namespace nnprof::analysis
