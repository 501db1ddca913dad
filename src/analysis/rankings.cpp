#include "analysis/rankings.hpp"

#include <algorithm>

namespace nnprof::analysis {
namespace {

// Orders scopes by a key, larger first, then by name so that equal keys give the same
// order on every run and in every report format.
template <typename Key>
std::vector<const ScopeStats*> ranked(const Profile& profile, std::size_t n, Key key) {
  std::vector<const ScopeStats*> result;
  result.reserve(profile.scopes.size());
  for (const ScopeStats& scope : profile.scopes) result.push_back(&scope);
  const auto before = [&](const ScopeStats* a, const ScopeStats* b) {
    const auto key_a = key(*a);
    const auto key_b = key(*b);
    if (key_a != key_b) return key_a > key_b;
    return profile.str(a->name) < profile.str(b->name);
  };
  const std::size_t count = std::min(n, result.size());
  std::partial_sort(result.begin(), result.begin() + static_cast<std::ptrdiff_t>(count),
                    result.end(), before);
  result.resize(count);
  return result;
}

}  // namespace

std::vector<const ScopeStats*> top_by_total(const Profile& profile, std::size_t n) {
  return ranked(profile, n, [](const ScopeStats& s) { return s.total_ns; });
}

std::vector<const ScopeStats*> top_by_self(const Profile& profile, std::size_t n) {
  return ranked(profile, n, [](const ScopeStats& s) { return s.self_ns; });
}

std::vector<const ScopeStats*> most_called(const Profile& profile, std::size_t n) {
  return ranked(profile, n, [](const ScopeStats& s) { return s.time.count; });
}

std::vector<const ScopeStats*> top_by_alloc_bytes(const Profile& profile, std::size_t n) {
  std::vector<const ScopeStats*> result =
      ranked(profile, n, [](const ScopeStats& s) { return s.memory.alloc_bytes; });
  std::erase_if(result, [](const ScopeStats* s) { return s->memory.alloc_bytes == 0; });
  return result;
}

std::size_t allocating_scope_count(const Profile& profile) {
  return static_cast<std::size_t>(std::count_if(profile.scopes.begin(), profile.scopes.end(),
                                                [](const ScopeStats& s) { return s.memory.alloc_bytes > 0; }));
}

std::vector<const ScopeStats*> top_by_heap_bytes(const Profile& profile, std::size_t n) {
  std::vector<const ScopeStats*> result =
      ranked(profile, n, [](const ScopeStats& s) { return s.heap.alloc_bytes; });
  std::erase_if(result, [](const ScopeStats* s) { return s->heap.alloc_bytes == 0; });
  return result;
}

std::size_t heap_allocating_scope_count(const Profile& profile) {
  return static_cast<std::size_t>(std::count_if(profile.scopes.begin(), profile.scopes.end(),
                                                [](const ScopeStats& s) { return s.heap.alloc_bytes > 0; }));
}

std::optional<std::uint64_t> heap_bytes_per_call(const ScopeStats& scope) {
  if (scope.time.count == 0) return std::nullopt;
  return scope.heap.alloc_bytes / scope.time.count;
}

AllocationTotal allocation_total(const Profile& profile) {
  std::uint64_t counters = 0;
  for (const MemoryCounter& counter : profile.memory_counters) counters += counter.alloc_bytes;
  std::uint64_t scopes = 0;
  for (const ScopeStats& scope : profile.scopes) scopes += scope.memory.alloc_bytes;
  if (counters >= scopes) return {counters, true};
  return {scopes, false};
}

std::optional<double> self_per_call(const ScopeStats& scope) {
  if (scope.time.count == 0) return std::nullopt;
  return static_cast<double>(scope.self_ns) / static_cast<double>(scope.time.count);
}

std::optional<std::uint64_t> alloc_bytes_per_call(const ScopeStats& scope) {
  if (scope.time.count == 0) return std::nullopt;
  return scope.memory.alloc_bytes / scope.time.count;
}

double share_of_instrumented(const Profile& profile, std::uint64_t ns) {
  const std::uint64_t instrumented = profile.instrumented_ns();
  if (instrumented == 0) return 0.0;
  return static_cast<double>(ns) / static_cast<double>(instrumented);
}

Concentration hot_path_concentration(const Profile& profile, std::size_t n) {
  // Self time, not total: a parent's total contains its children's, so summing totals of
  // nested hot scopes would count the same nanoseconds twice (and could exceed 100%).
  // Self times partition the instrumented time.
  const std::vector<const ScopeStats*> top = top_by_self(profile, n);
  std::uint64_t self_sum = 0;
  for (const ScopeStats* scope : top) self_sum += scope->self_ns;
  return {top.size(), share_of_instrumented(profile, self_sum)};
}

std::vector<const ScopeStats*> inflated_by_instrumentation(const Profile& profile, double factor) {
  std::vector<const ScopeStats*> result;
  const double overhead = profile.completeness.overhead_per_scope_ns;
  if (!(overhead > 0.0)) return result;  // not measured: no basis for a judgement
  const double threshold = factor * overhead;
  for (const ScopeStats& scope : profile.scopes) {
    if (scope.time.count > 0 && scope.time.mean_ns < threshold) result.push_back(&scope);
  }
  std::sort(result.begin(), result.end(), [&](const ScopeStats* a, const ScopeStats* b) {
    if (a->time.mean_ns != b->time.mean_ns) return a->time.mean_ns < b->time.mean_ns;
    return profile.str(a->name) < profile.str(b->name);
  });
  return result;
}

}  // namespace nnprof::analysis
