#include "analysis/insights.hpp"

#include <string>
#include <utility>

#include <fmt/format.h>

#include "analysis/rankings.hpp"

namespace nnprof::analysis {
namespace {

Sentence concentration(const Profile& profile, const InsightOptions& options) {
  const Concentration c = hot_path_concentration(profile, options.concentration_scopes);
  Sentence s;
  if (c.top_n == 1) {
    return s.words("The only scope accounts for ").share(c.share).key().words(
        " of instrumented time by self time.");
  }
  return s.words("The top ").count(c.top_n).words(" scopes by self time account for ")
      .share(c.share).key().words(" of instrumented time.");
}

Sentence hottest_self(const Profile& profile) {
  const ScopeStats& hottest = *top_by_self(profile, 1).front();
  return Sentence()
      .words("Highest self time: ").scope(hottest.name).words(", ").duration(hottest.self_ns)
      .words(" (").share(share_of(hottest.self_ns, profile.instrumented_ns()))
      .words(" of instrumented time) in ").count(hottest.time.count, "call", "calls").words(".");
}

Sentence inflation(const Profile& profile, const InsightOptions& options) {
  const double overhead = profile.completeness.overhead_per_scope_ns;
  Sentence s;
  if (!(overhead > 0.0)) {
    return s.words("Instrumentation overhead was not measured, so timings inflated by it cannot be "
                   "flagged.");
  }
  const auto inflated = inflated_by_instrumentation(profile, options.inflation_factor);
  if (inflated.empty()) {
    return s.words("No scope is short enough for instrumentation cost (").duration(overhead)
        .words(" per scope) to dominate its timing.");
  }
  s.words(fmt::format("Timings dominated by instrumentation cost (mean below {:g} × ",
                      options.inflation_factor))
      .duration(overhead).words(" = ").duration(options.inflation_factor * overhead)
      .words(" per call): ");
  for (std::size_t i = 0; i < inflated.size(); ++i) {
    if (i > 0) s.words(", ");
    s.scope(inflated[i]->name);
  }
  return s.words(".");
}

// Empty when no allocation was attributed to a scope.
Sentence allocation(const Profile& profile, const InsightOptions& options) {
  const auto top = top_by_alloc_bytes(profile, options.scopes_named);
  Sentence s;
  if (top.empty()) return s;
  const std::uint64_t total = allocation_total(profile).bytes;
  s.words("Highest allocation: ");
  for (std::size_t i = 0; i < top.size(); ++i) {
    const ScopeStats& scope = *top[i];
    if (i > 0) s.words("; ");
    s.scope(scope.name).words(" ").bytes(scope.memory.alloc_bytes).words(" (")
        .share(share_of(scope.memory.alloc_bytes, total)).words(" of all allocations, ");
    if (const auto per_call = alloc_bytes_per_call(scope)) {
      s.bytes(*per_call);
    } else {
      s.words("n/a");
    }
    s.words(" per call)");
  }
  return s.words(
      ". Allocating on every call costs time and memory pressure: consider reusing buffers (a "
      "pool or a preallocated workspace).");
}

// The heap bytes allocated per scope while it was the innermost open one (heap tracking): the
// "high-allocation methods" of an allocation profile. Empty when no scope allocated on the heap.
Sentence heap_allocation(const Profile& profile, const InsightOptions& options) {
  Sentence s;
  if (!profile.heap.tracked) return s;
  const auto top = top_by_heap_bytes(profile, options.scopes_named);
  if (top.empty()) return s;
  const std::uint64_t total = profile.heap.alloc_bytes;
  s.words("Highest heap allocation: ");
  std::uint64_t named_bytes = 0;
  for (std::size_t i = 0; i < top.size(); ++i) {
    const ScopeStats& scope = *top[i];
    named_bytes += scope.heap.alloc_bytes;
    if (i > 0) s.words("; ");
    s.scope(scope.name).words(" ").bytes(scope.heap.alloc_bytes).words(" (")
        .share(share_of(scope.heap.alloc_bytes, total)).words(" of all heap bytes allocated, ");
    if (const auto per_call = heap_bytes_per_call(scope)) {
      s.bytes(*per_call);
    } else {
      s.words("n/a");
    }
    s.words(" per call)");
  }
  if (top.size() > 1) {
    s.words("; together ").share(share_of(named_bytes, total)).key().words(" of the ").bytes(total)
        .words(" allocated");
  }
  return s.words(
      ". Allocating on every call costs time and memory pressure: consider reusing buffers (a "
      "pool or a preallocated workspace).");
}

Sentence frequency(const Profile& profile, const InsightOptions& options) {
  Sentence named;
  for (const ScopeStats* scope : most_called(profile, options.scopes_named)) {
    if (scope->time.count < options.high_frequency_calls) break;
    if (!named.empty()) named.words("; ");
    named.scope(scope->name).words(" ").count(scope->time.count, "call", "calls");
    if (profile.meta.duration_ns > 0) {
      const double per_second = static_cast<double>(scope->time.count) * 1e9 /
                                static_cast<double>(profile.meta.duration_ns);
      named.words(", ").rate(per_second, "calls/s").words(" over the session");
    }
    named.words(", ").duration(scope->time.mean_ns).words(" per call");
  }
  if (named.empty()) {
    return Sentence().words("No scope was called ").count(options.high_frequency_calls)
        .words(" times or more.");
  }
  return Sentence().words("High call frequency: ").append(named).words(
      ". Per-call costs add up: consider batching the work into fewer calls or caching results.");
}

}  // namespace

std::vector<Insight> insights(const Profile& profile, const InsightOptions& options) {
  std::vector<Insight> result;
  if (profile.scopes.empty()) return result;
  result.push_back({InsightKind::Concentration, concentration(profile, options)});
  result.push_back({InsightKind::HottestSelf, hottest_self(profile)});
  result.push_back({InsightKind::Inflation, inflation(profile, options)});
  if (Sentence s = allocation(profile, options); !s.empty()) {
    result.push_back({InsightKind::Allocation, std::move(s)});
  }
  if (Sentence s = heap_allocation(profile, options); !s.empty()) {
    result.push_back({InsightKind::HeapAllocation, std::move(s)});
  }
  result.push_back({InsightKind::Frequency, frequency(profile, options)});
  return result;
}

}  // namespace nnprof::analysis
