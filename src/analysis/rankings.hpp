// Rankings of a profile's scopes: what takes the time, what is called most, what to distrust.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <vector>

#include "nnprof/profile.hpp"

namespace nnprof::analysis {

/// The `n` scopes with the most inclusive time, longest first; equal times by name.
std::vector<const ScopeStats*> top_by_total(const Profile& profile, std::size_t n);

/// The `n` scopes with the most self time (time not spent in child scopes), longest first;
/// equal times by name.
std::vector<const ScopeStats*> top_by_self(const Profile& profile, std::size_t n);

/// The `n` scopes with the most calls, most first; equal counts by name.
std::vector<const ScopeStats*> most_called(const Profile& profile, std::size_t n);

/// The `n` scopes that allocated the most bytes while innermost, most first; equal amounts
/// by name. Scopes that allocated nothing are left out, so the result may be shorter.
std::vector<const ScopeStats*> top_by_alloc_bytes(const Profile& profile, std::size_t n);

/// How many scopes allocated anything while innermost: the whole of which
/// top_by_alloc_bytes shows the top.
std::size_t allocating_scope_count(const Profile& profile);

/// The `n` scopes that allocated the most heap bytes (automatic heap tracking) while
/// innermost, most first; equal amounts by name. Scopes that allocated nothing are left out.
std::vector<const ScopeStats*> top_by_heap_bytes(const Profile& profile, std::size_t n);

/// How many scopes allocated heap bytes while innermost.
std::size_t heap_allocating_scope_count(const Profile& profile);

/// Heap bytes allocated per call (while innermost); nothing for a scope with no calls.
std::optional<std::uint64_t> heap_bytes_per_call(const ScopeStats& scope);

/// Every byte allocated: by the named counters, or attributed to scopes if that is more (a
/// collector may attribute allocations to scopes without feeding a named counter).
struct AllocationTotal {
  std::uint64_t bytes = 0;
  bool from_counters = true;  ///< the named counters' sum (allocations inside scopes or not)
};

/// The denominator of "% of all allocations".
AllocationTotal allocation_total(const Profile& profile);

/// Self time per call; nothing for a scope with no calls.
std::optional<double> self_per_call(const ScopeStats& scope);

/// Bytes allocated per call (while innermost); nothing for a scope with no calls.
std::optional<std::uint64_t> alloc_bytes_per_call(const ScopeStats& scope);

/// `ns` as a fraction of the profile's instrumented time (0 when nothing was instrumented).
double share_of_instrumented(const Profile& profile, std::uint64_t ns);

/// How much of the instrumented time the hottest few scopes hold.
struct Concentration {
  std::size_t top_n = 0;  ///< scopes counted (fewer than asked when the profile has fewer)
  double share = 0.0;     ///< fraction of instrumented time, 0..1
};

/// "The top `n` scopes by self time account for `share` of instrumented time".
Concentration hot_path_concentration(const Profile& profile, std::size_t n = 5);

/// Scopes whose mean duration is below `factor` x the measured cost of one empty scope:
/// their timings are dominated by instrumentation, not by their own work. Shortest mean
/// first; equal means by name. Empty when the overhead was not measured.
std::vector<const ScopeStats*> inflated_by_instrumentation(const Profile& profile,
                                                           double factor = 10.0);

}  // namespace nnprof::analysis
