// Tables that the text and the Markdown report both print, each rendering the cells in its
// own way (aligned plain text, GitHub-flavoured Markdown): rankings of scopes, threads and
// memory counters. One place decides what each column holds.
#pragma once

#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <vector>

#include "analysis/compute.hpp"
#include "analysis/cpu_profile.hpp"
#include "io/format.hpp"
#include "nnprof/profile.hpp"

namespace nnprof::io {

/// Column headers: compact for a terminal ("% instr", "Allocs") or spelled out for a
/// document ("% of instrumented time", "Allocations").
enum class Headers : std::uint8_t { Terminal, Document };

/// What a column of a scope table holds. Shares of time are of the profile's instrumented
/// time; AllocShare is of analysis::allocation_total; HeapShare of every heap byte allocated.
enum class ScopeColumn : std::uint8_t {
  Rank,          ///< 1, 2, 3 ... in the order given
  Name,
  Calls,
  Total,         ///< inclusive time
  TotalShare,
  Self,
  SelfShare,
  Avg,           ///< mean time per call
  AvgSelf,       ///< self time per call
  Min,
  Max,
  P95,
  Allocated,     ///< bytes allocated while the scope was innermost
  AllocShare,
  Allocs,        ///< allocations while innermost
  AllocPerCall,  ///< bytes allocated per call
  // Automatic heap tracking (ScopeStats::heap), while the scope was innermost:
  HeapAllocated,  ///< heap bytes allocated
  HeapShare,
  HeapAllocs,     ///< heap allocations
  HeapPerCall,    ///< heap bytes allocated per call
  HeapRetained,   ///< allocated here and still live at the end: "1.00 MiB in 3 blocks"
  HeapPeakLive,   ///< the most of its bytes live at one time
  GpuTime,        ///< GPU work launched while the scope was open (GpuScopeStats::gpu_ns)
};

/// `columns` with GpuTime appended when the profile has GPU tracing: the rankings show it
/// only then, so that reports of CPU-only profiles stay as they were.
std::vector<ScopeColumn> with_gpu_time(const Profile& profile, std::initializer_list<ScopeColumn> columns);

/// One row per scope of `scopes`, in that order, with `columns` in the order given.
TextTable scope_table(const Profile& profile, const std::vector<const ScopeStats*>& scopes,
                      const std::vector<ScopeColumn>& columns, Headers headers);

/// One row per scope with declared work, by inclusive time: calls, time, FLOPs, FLOP/s,
/// bytes/s, FLOPs per byte and, when the machine's peaks are known, the bound, the roof the
/// scope is under and its share of that roof.
TextTable compute_table(const Profile& profile, const std::vector<analysis::ScopeCompute>& scopes, Headers headers);

/// One row per thread: name, OS thread id, scopes, top-level time and its share, state.
TextTable threads_table(const Profile& profile, Headers headers);

/// One row per named memory counter: current, peak, allocated and freed bytes, counts.
TextTable memory_counters_table(const Profile& profile, Headers headers);

/// The first `max_rows` leak sites (live blocks at the end, largest first): where they were
/// allocated (scope path and calling function), blocks, bytes, and whether still reachable.
TextTable leak_sites_table(const Profile& profile, std::size_t max_rows, Headers headers);

/// CPU sampling: functions in the order given: rank, function, module, self (% of samples,
/// samples, time), total (% of samples, samples).
TextTable cpu_functions_table(const std::vector<analysis::CpuFunction>& functions, Headers headers);

/// CPU sampling: source lines in the order given: rank, file:line, function, self samples, %.
TextTable cpu_lines_table(const std::vector<analysis::CpuLine>& lines, Headers headers);

/// CPU sampling: scopes in the order given: path, samples, % of all samples, time, and the
/// scope's hottest functions by self samples with their share of the scope's samples.
TextTable cpu_scopes_table(const std::vector<analysis::CpuScope>& scopes, Headers headers);

/// "called from a (9 samples, 100.0%), b (...); calls c (4 samples, 44.4%)": who calls a
/// function and whom it calls, at most `max_edges` of each, or "no caller or callee sampled".
std::string cpu_callers_summary(const analysis::CpuCallers& calls, std::size_t max_edges);

}  // namespace nnprof::io
