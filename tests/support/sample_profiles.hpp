// Profiles built by hand for tests and benchmarks, so that every expected number is known
// exactly, the builders they are made with, and profiles recorded by a real Profiler.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "nnprof/profile.hpp"

namespace nnprof::testing {

inline constexpr std::uint64_t kUs = 1'000;
inline constexpr std::uint64_t kMs = 1'000'000;
inline constexpr std::uint64_t kMiB = 1ULL << 20;

// ---- builders -----------------------------------------------------------------------

/// Statistics of a scope on one thread: total time is the sum of its calls. `time` reads
/// field by field: {count, sum, min, max, mean, stddev, p50, p95, p99}.
ScopeStats scope_stats(StringId name, std::uint64_t self_ns, const DurationStats& time);

/// A call-tree node with the name, times, threads and memory of `stats`.
CallTreeNode tree_node(std::uint32_t id, std::uint32_t parent, std::uint32_t depth,
                       std::vector<std::uint32_t> children, const ScopeStats& stats);

/// Machine peaks for roofline tests: the given fp32 roofs (fp64 at half of each), bandwidths
/// and thread count; CPU "synthetic", ISA "avx2+fma".
MachinePeaks synthetic_peaks(double fp32_one_core, double fp32_all, double bandwidth_one_core, double bandwidth_all,
                             std::uint32_t threads);

// ---- built by hand ------------------------------------------------------------------

/// A small profile that uses every field of the model with distinctive values, including
/// awkward strings (quotes, commas, newlines, HTML, non-ASCII).
Profile rich_profile();

/// `spans` spans over `threads` threads in a realistic nesting (step > forward > layer >
/// matmul/gelu ...), with consistent call tree and statistics; deterministic.
Profile synthetic_profile(std::uint64_t spans, std::uint32_t threads);

/// The string ids of export_profile.
enum ExportString : StringId { kTrain, kForward, kMatmul, kBackward, kWeird, kActivations, kWeights };

/// export_profile's awkward scope name: every character CSV and Markdown treat specially.
inline const std::string kWeirdName = "load, \"batch\" | 1\nnext";

/// The exporters' profile (Markdown, JSON, CSV):
///
///     train_step (100 ms, 10 calls, 320 items)
///       forward (60 ms)
///         matmul (40 ms, 1000 calls, 2000 items, 12 MiB allocated in 300 allocations)
///       backward (30 ms)
///       kWeirdName (5 ms, 10 calls, 4 MiB allocated in 100 allocations)
///
/// Self times: 5 + 20 + 40 + 30 + 5 = 100 ms = the instrumented time. Two memory counters,
/// two diagnostics; the tree's children are stored out of time order.
Profile export_profile();

/// The string ids of heap_profile's scopes.
enum HeapString : StringId { kHeapStep, kHeapForward, kHeapMatmul, kHeapBackward, kHeapOptimizer, kHeapLoad };

/// A profile with automatic heap tracking (and no named memory counters), 1 s long:
///
///     main:   train_step (10 x 50 ms)            heap: 640 KiB in 10 allocs, frees 72.6 MiB
///               forward (10 x 20 ms)                   20 MiB in 10 allocs (freed by backward)
///                 matmul (40 x 3 ms)                   40 MiB in 40 allocs, all freed; the peak is here
///               backward (10 x 25 ms)                  12.5 MiB in 100 allocs, frees 32.5 MiB
///               optimizer_step (10 x 4 ms)             10 MiB in 10 allocs, never freed (leaked)
///     loader: load_batch (10 x 10 ms)                  80 MiB + 3 KiB in 13 allocs; one 8 MiB batch
///                                                      still referenced, 3 x 1 KiB leaked
///     outside any scope                                4 KiB in 2 allocs, still referenced
///
/// 163 MiB allocated in 185 allocations, 145 MiB freed in 169 frees; peak 22.0 MiB at
/// 948.5 ms on main in train_step > forward > matmul. Four leak sites (frames with file and
/// line, one unsymbolized, two sampled stacks), 50 timeline samples every 20 ms in which heap
/// and RSS grow by 1 MiB every 100 ms.
Profile heap_profile();

// ---- recorded -----------------------------------------------------------------------

/// A whole number of synthetic steps on 4 threads, just over a million spans.
inline constexpr std::uint64_t kMillionSpans = 1'000'020;

/// A profile recorded by a real Profiler: a training loop on the calling thread and a data
/// loader thread ("data <loader>"), memory counters, items, and a scope named like an HTML
/// script element.
Profile recorded_profile();

/// synthetic_profile(kMillionSpans, 4) with a memory counter on thread 0 that takes 4 KiB per
/// layer and frees them at the end of each step but 512 bytes (a slow leak).
Profile million_span_profile();

}  // namespace nnprof::testing
