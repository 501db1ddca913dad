// What a session hands to the model: per-thread call trees and records, still in ticks.
// The record layer fills it, src/collect adds what only the running process can tell (host
// facts, symbols: collect/snapshot_facts.hpp), and src/model turns it into a Profile.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "nnprof/clock.hpp"
#include "nnprof/detail/thread_state.hpp"
#include "record/metric_registry.hpp"
#include "record/raw_gpu.hpp"
#include "record/raw_system.hpp"
#include "record/raw_symbols.hpp"

namespace nnprof::detail {

/// Heap figures of one node; retained = allocated here and not yet released by any thread.
struct RawNodeHeap {
  std::uint64_t alloc_bytes = 0, alloc_count = 0, free_bytes = 0, free_count = 0;
  std::uint64_t retained_bytes = 0, retained_blocks = 0, peak_live = 0;
};

inline void read_heap_fields(const Node& n, RawNodeHeap& r) noexcept {
  constexpr auto rx = std::memory_order_relaxed;
  r.alloc_bytes = n.heap_alloc_bytes.load(rx);
  r.alloc_count = n.heap_alloc_count.load(rx);
  r.free_bytes = n.heap_free_bytes.load(rx);
  r.free_count = n.heap_free_count.load(rx);
  const std::uint64_t released = n.heap_released_bytes.load(rx) + n.heap_released_remote_bytes.load(rx);
  const std::uint64_t released_n = n.heap_released_count.load(rx) + n.heap_released_remote_count.load(rx);
  // Read without a lock while threads allocate: clamp rather than wrap around.
  r.retained_bytes = r.alloc_bytes > released ? r.alloc_bytes - released : 0;
  r.retained_blocks = r.alloc_count > released_n ? r.alloc_count - released_n : 0;
  r.peak_live = n.heap_peak_live.load(rx);
}

struct RawNode {
  const SourceLocation* site = nullptr;
  std::uint32_t parent = 0;
  std::uint32_t depth = 0;
  std::uint64_t count = 0, total = 0, self = 0, min = 0, max = 0, shift = 0;
  std::int64_t sum_dev = 0;
  double sum_dev_sq = 0.0;
  std::uint64_t alloc_bytes = 0, alloc_count = 0, free_bytes = 0, free_count = 0;
  double flops = 0.0;             ///< declared with add_flops while this node was innermost
  std::uint64_t bytes_moved = 0;
  RawNodeHeap heap;
  /// Non-empty histogram buckets as (row * kHistogramSubBuckets + sub, count), ascending.
  std::vector<std::pair<std::uint32_t, std::uint64_t>> buckets;
};

enum class ThreadEventKind : std::uint8_t { StopWithoutStart, ImplicitlyClosed, NegativeMemory };

struct RawThreadEvent {
  ThreadEventKind kind;
  const SourceLocation* site;  ///< the scope (or counter) concerned
  std::uint64_t count;
};

/// How many span arguments one thread keeps: a framework attaches a few per operator (the
/// LibTorch observer about six), so this is some 350,000 operator calls per thread, at 32
/// bytes an argument (64 MiB) plus each distinct key and text once.
inline constexpr std::size_t kMaxSpanArgsPerThread = std::size_t{1} << 21;

/// A key/value argument attached to a span that was open at the time (add_span_arg): the
/// span is the one whose record has this node and start tick. Keys and texts are ids into
/// the thread's `arg_strings`: a framework repeats the same few keys and shapes millions of
/// times, so each is stored once and an argument costs no allocation.
struct RawSpanArg {
  std::uint64_t start_ticks = 0;
  std::uint32_t node = 0;
  std::uint32_t key = 0;   ///< into RawThread::arg_strings
  std::uint32_t text = 0;  ///< into RawThread::arg_strings (Type::String)
  ArgValue::Type type = ArgValue::Type::String;
  union {
    std::int64_t integer = 0;  ///< Type::Int
    double real;               ///< Type::Real
  };
};
static_assert(sizeof(RawSpanArg) == 32, "span arguments stay compact: millions of them per run");

struct RawThread {
  std::uint32_t index = 0;
  std::int64_t os_tid = 0;
  std::string name;
  bool exited = false;
  std::vector<RawNode> nodes;          ///< [0] is the root
  std::vector<Record> records;         ///< in the order written
  std::vector<std::uint32_t> open_nodes;  ///< scopes still open, outermost first
  std::uint64_t dropped_spans = 0, dropped_events = 0, too_deep = 0, tree_full = 0;
  std::uint64_t dropped_flows = 0;  ///< flow records lost to the memory cap
  std::vector<RawThreadEvent> events;
  std::vector<RawSpanArg> span_args;      ///< in the order attached
  std::vector<std::string> arg_strings;   ///< the keys and texts span_args refer to
  std::uint64_t span_args_dropped = 0;    ///< past the per-thread limit
};

struct RawCounter {
  std::string name;
  std::int64_t current = 0;
  std::uint64_t peak = 0, alloc_bytes = 0, freed_bytes = 0, alloc_count = 0, free_count = 0, largest_alloc = 0;
  std::uint64_t items = 0;
};

struct RawHeapSample {
  std::uint64_t ticks = 0, heap_bytes = 0, rss_bytes = 0, rss_peak_bytes = 0;
};

/// Live heap blocks with one allocation site: the allocating thread's node, the caller of
/// malloc/new, and (when one of them was sampled) a full stack.
struct RawLeakGroup {
  std::uint32_t thread = 0;  ///< thread index of the allocating node
  std::uint32_t node = 0;    ///< node index within that thread
  std::uintptr_t caller = 0;
  std::uint32_t stack = 0;   ///< 1-based index into RawHeap::stacks; 0: none
  bool reachable = false;
  std::uint64_t blocks = 0, bytes = 0;
};

/// What the heap tracker hands to the model.
struct RawHeap {
  bool tracked = false;
  std::string source;
  std::uint64_t current_bytes = 0, current_blocks = 0, peak_bytes = 0, peak_ticks = 0;
  std::uint32_t peak_thread = ~std::uint32_t{0}, peak_node = 0;
  std::uint64_t peak_resolution_bytes = 0, untracked_frees = 0, untracked_allocs = 0;
  std::uint64_t largest_alloc_bytes = 0;  ///< the largest single tracked block
  std::uint64_t stack_sample_bytes = 0, interval_ns = 0;
  std::uint64_t rss_initial = 0, rss_peak = 0, rss_final = 0;
  bool reachability_checked = false;
  std::uint64_t leaked_bytes = 0, leaked_blocks = 0, reachable_bytes = 0, reachable_blocks = 0;
  std::vector<RawHeapSample> samples;
  std::vector<RawLeakGroup> leaks;
  std::vector<std::vector<std::uintptr_t>> stacks;  ///< return addresses, innermost first
  std::vector<std::string> warnings;                ///< become HeapTracking diagnostics
};

/// One CPU sample as the sampler recorded it.
struct RawCpuSample {
  std::uint64_t ticks = 0;
  std::uint64_t weight_ns = 0;
  std::int64_t tid = 0;
  std::uint32_t node_thread = ~std::uint32_t{0};  ///< session thread owning `node`; ~0: no open scope
  std::uint32_t node = 0;                          ///< node index within that thread
  std::uint32_t stack = 0;                         ///< 1-based index into RawCpu::stacks; 0: none
  /// Samples taken by the kernel (Unwinder::Kernel) carry CLOCK_MONOTONIC instead of `ticks`,
  /// and no node: their scope is found from the spans by time when the profile is built.
  std::uint64_t monotonic_ns = 0;
};

/// What the CPU sampler hands to the model.
struct RawCpu {
  bool sampled = false;
  std::string mode, mechanism, unwinder;
  double requested_hz = 0.0;
  std::uint64_t period_ns = 0, dropped = 0, truncated = 0;
  std::uint32_t threads_sampled = 0;
  std::vector<RawCpuSample> samples;
  /// Code addresses, innermost first: the interrupted instruction, then call sites (return
  /// addresses minus one), so every entry is symbolized as it is.
  std::vector<std::vector<std::uintptr_t>> stacks;
  std::vector<std::pair<std::int64_t, std::string>> thread_names;  ///< tid, name of every sampled thread
  /// Python frames (collect/cpu/python_frames.hpp): a stack entry with bits 48-63 equal to
  /// 0x7EC0, a non-canonical address no code has, stands for python_frames[low 48 bits].
  std::vector<Symbol> python_frames;
  std::vector<std::string> warnings;  ///< become CpuSampling diagnostics
};

/// The machine and the process: what collect::read_host_info reads once (uname, /proc).
struct HostFacts {
  std::string hostname;
  std::string os;
  std::string cpu_model;
  std::uint32_t logical_cpus = 0;
  std::string compiler;
  std::string command_line;
  std::int64_t pid = 0;
};

/// The host facts as src/collect read them when the snapshot was taken, so that building a
/// profile reads nothing but the snapshot.
struct RawHost : HostFacts {
  /// Sampled threads outside the session that had already ended (no /proc/self/task entry), ascending.
  std::vector<std::int64_t> exited_threads;
};

struct RawSnapshot {
  ClockPair start;
  ClockPair now;
  std::int64_t unix_start_ns = 0;
  double nominal_ns_per_tick = 1.0;
  std::uint64_t memory_cap_bytes = 0;
  bool flight_recorder = false;
  bool keep_spans = true;
  double overhead_ticks_per_scope = 0.0;
  const SourceLocation* internal_site = nullptr;  ///< calibration scope, excluded from reports
  std::vector<RawThread> threads;
  std::vector<RawCounter> counters;  ///< indexed by the name id in memory records
  std::uint64_t spans_overwritten = 0;
  std::uint64_t hot_path_chunks = 0;  ///< buffers a recording thread had to allocate itself
  std::uint64_t events_overwritten = 0;
  std::uint64_t flows_overwritten = 0;  ///< flow records the flight recorder overwrote
  std::int64_t memory_current = 0;
  std::uint64_t memory_peak = 0;
  std::uint64_t memory_peak_ticks = 0;
  RawHeap heap;
  RawCpu cpu;
  RawGpu gpu;
  RawSystem system;  ///< the system monitor's tracks, when one is attached
  RawMetrics metrics;  ///< points are the threads' Metric records
  std::map<std::string, std::string> annotations;  ///< Profiler::annotate
  RawHost host;
  RawSymbols symbols;  ///< of every address in stack_addresses(*this)
};

/// The code addresses a snapshot's stacks refer to, each once, ascending: return addresses
/// (heap callers and sampled heap stacks) and code addresses (CPU stacks, whose call sites the
/// sampler already moved into the call instruction).
struct StackAddresses {
  std::vector<std::uintptr_t> returns;
  std::vector<std::uintptr_t> code;
};

inline StackAddresses stack_addresses(const RawSnapshot& raw) {
  StackAddresses a;
  for (const RawLeakGroup& g : raw.heap.leaks) {
    if (g.caller != 0) a.returns.push_back(g.caller);
    if (g.stack != 0 && g.stack <= raw.heap.stacks.size())
      a.returns.insert(a.returns.end(), raw.heap.stacks[g.stack - 1].begin(), raw.heap.stacks[g.stack - 1].end());
  }
  for (const auto& stack : raw.cpu.stacks) a.code.insert(a.code.end(), stack.begin(), stack.end());
  for (auto* v : {&a.returns, &a.code}) {
    std::sort(v->begin(), v->end());
    v->erase(std::unique(v->begin(), v->end()), v->end());
  }
  return a;
}

}  // namespace nnprof::detail
