// The recording hot path: what one thread writes when a scope opens and closes.
//
// Every thread that records into a profiler owns one ThreadState. The owner is the only
// writer of everything here; snapshots taken by other threads read the fields they need
// through relaxed atomics (plain loads and stores on x86-64) and the chunks' published
// record counts (release/acquire). Nothing here locks, allocates or makes a system call in
// steady state: new call-tree nodes, histogram rows and chunk switches go through the
// out-of-line functions declared below.
#pragma once

#include <atomic>
#include <concepts>
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "nnprof/config.hpp"
#include "nnprof/detail/clock_read.hpp"
#include "nnprof/detail/histogram_buckets.hpp"
#include "nnprof/source_location.hpp"

namespace nnprof::detail {

enum class RecordKind : std::uint32_t {
  Span = 1,
  MemoryAlloc = 2,
  MemoryFree = 3,
  Metric = 4,
  // Flows (nnprof/flow.hpp): dependencies between threads.
  FlowBegin = 5,      ///< work handed over (flow_begin)
  FlowEnd = 6,        ///< the handed-over work starts (flow_end)
  FlowDone = 7,       ///< the work is complete (flow_done)
  FlowWaitBegin = 8,  ///< a thread starts waiting for the work (flow_wait_begin)
  FlowWaitEnd = 9,    ///< its wait is over (flow_wait_end)
  GpuLaunch = 10,     ///< a CUDA API call that launches GPU work (src/collect/gpu)
};

inline constexpr bool is_flow(RecordKind k) noexcept {
  return k >= RecordKind::FlowBegin && k <= RecordKind::FlowWaitEnd;
}

/// One fixed-size record. Span: t0/t1 = begin/end ticks, ref = call-tree node index.
/// MemoryAlloc/MemoryFree: t0 = ticks, t1 = bytes, ref = named-counter id.
/// Metric: t0 = ticks, t1 = the value (a double, bit for bit), ref = metric id.
/// Flow*: t0 = ticks, t1 = flow id, ref = node index of the innermost open scope (0: none).
/// GpuLaunch: t0 = ticks, t1 = CUPTI correlation id | domain << 32 | callback id << 40,
/// ref = node index of the innermost open scope (0: none).
struct Record {
  std::uint64_t t0;
  std::uint64_t t1;
  std::uint32_t ref;
  RecordKind kind;
};
static_assert(sizeof(Record) == 24, "records are written by the hot path; keep them small and fixed");

/// A block of records. Filled by one thread, handed to the session when full, reused.
struct Chunk {
  static constexpr std::size_t kBytes = 64 * 1024;
  std::atomic<std::uint32_t> count{0};  ///< records written; published with release
  std::uint32_t thread = 0;             ///< index of the thread that filled it
  std::uint64_t sequence = 0;           ///< hand-off order, for the flight recorder
  // Its records by kind, counted by the session when it keeps the chunk (off the recording
  // thread), so that overwriting it (flight recorder) reads three numbers rather than 64 KiB.
  std::uint16_t spans = 0;   ///< RecordKind::Span
  std::uint16_t flows = 0;   ///< is_flow
  std::uint16_t events = 0;  ///< memory events (metric points and GPU launches are not counted)
  std::uint16_t unused = 0;
  static constexpr std::uint32_t capacity() noexcept {
    return static_cast<std::uint32_t>((kBytes - 32) / sizeof(Record));
  }
  Record* records() noexcept { return reinterpret_cast<Record*>(reinterpret_cast<std::byte*>(this) + 32); }
  const Record* records() const noexcept {
    return reinterpret_cast<const Record*>(reinterpret_cast<const std::byte*>(this) + 32);
  }
};
static_assert(sizeof(Chunk) <= 32);
static_assert(Chunk::capacity() <= 0xffff, "the kind tallies of a chunk are 16 bits");

struct HistogramRow {
  std::atomic<std::uint64_t> bucket[kHistogramSubBuckets] = {};
};

/// Adds to an atomic that has exactly one writer: no locked instruction needed.
template <class T>
inline void single_writer_add(std::atomic<T>& a, T d) noexcept {
  a.store(a.load(std::memory_order_relaxed) + d, std::memory_order_relaxed);
}

/// A node of the owning thread's call tree: one per distinct (parent, call site).
struct Node {
  const SourceLocation* site = nullptr;  ///< nullptr for the root
  Node* parent = nullptr;
  Node* first_child = nullptr;   // owner only
  Node* next_sibling = nullptr;  // owner only
  Node* hint = nullptr;          // owner only: the child entered last
  std::uint32_t index = 0;
  std::uint32_t depth = 0;
  std::uint32_t thread = 0;  ///< index of the owning thread in its session
  // Statistics in ticks. Variance uses sums of deviations from the first duration (shift),
  // which stays exact where a plain sum of squares would cancel catastrophically.
  std::atomic<std::uint64_t> count{0};
  std::atomic<std::uint64_t> total{0};
  std::atomic<std::uint64_t> self{0};
  std::atomic<std::uint64_t> min{~std::uint64_t{0}};
  std::atomic<std::uint64_t> max{0};
  std::atomic<std::uint64_t> shift{0};
  std::atomic<std::int64_t> sum_dev{0};
  std::atomic<double> sum_dev_sq{0.0};
  // Memory attributed to this node while it was the innermost open scope.
  std::atomic<std::uint64_t> alloc_bytes{0};
  std::atomic<std::uint64_t> alloc_count{0};
  std::atomic<std::uint64_t> free_bytes{0};
  std::atomic<std::uint64_t> free_count{0};
  // Work the program declared while this node was the innermost open scope (add_flops).
  std::atomic<double> flops{0.0};
  std::atomic<std::uint64_t> bytes_moved{0};
  // Heap blocks (automatic heap tracking). Written by the owner, except heap_released_remote_*,
  // which threads that free a block this node allocated add to.
  std::atomic<std::uint64_t> heap_alloc_bytes{0};
  std::atomic<std::uint64_t> heap_alloc_count{0};
  std::atomic<std::uint64_t> heap_free_bytes{0};  // freed while this node was innermost
  std::atomic<std::uint64_t> heap_free_count{0};
  std::atomic<std::uint64_t> heap_released_bytes{0};  // of the blocks allocated here, freed by the owner
  std::atomic<std::uint64_t> heap_released_count{0};
  std::atomic<std::uint64_t> heap_released_remote_bytes{0};  // ... freed by other threads
  std::atomic<std::uint64_t> heap_released_remote_count{0};
  std::atomic<std::uint64_t> heap_peak_live{0};
  std::atomic<HistogramRow*> rows[kHistogramRows] = {};
};

/// An open scope on the owning thread's stack.
struct Frame {
  std::atomic<Node*> node{nullptr};  // atomic only so that snapshots can see open scopes
  std::uint64_t start = 0;
  std::uint64_t child = 0;  // ticks spent in children, for self time
};

inline constexpr std::uint32_t kMaxDepth = 255;

struct ThreadPrivate;  // rings, node arena, name cache, diagnostics: see src/record

struct ThreadState {
  // Hot fields, owner only.
  Frame* top = nullptr;
  Frame* stack_last = nullptr;  // deepest usable frame
  Record* write = nullptr;
  Record* write_end = nullptr;
  Chunk* chunk = nullptr;
  std::uint32_t chunk_count = 0;
  bool keep_spans = true;
  bool nvtx = false;  // owner only: scopes are also NVTX ranges (ProfilerOptions::nvtx, NNPROF_NVTX=1)
  // Owner only: the session refused this thread a chunk because the cap is reached and its
  // policy keeps the first spans (nothing will be recycled). While set, a full write buffer
  // only looks for a spare chunk (the drainer still hands out any that threads leave behind)
  // and drops the record: no wake-up of the drainer, no lock, no system call per record.
  bool at_cap = false;
  std::uint64_t next_flow_id = 0;  // owner only: the id flow_begin() hands out next
  // Read by snapshots.
  std::atomic<std::uint32_t> depth{0};
  std::atomic<std::uint64_t> dropped_spans{0};
  std::atomic<std::uint64_t> dropped_events{0};
  std::atomic<std::uint64_t> dropped_flows{0};
  std::atomic<std::uint64_t> too_deep{0};
  ThreadPrivate* priv = nullptr;
  Frame stack[kMaxDepth + 1];  // stack[0] holds the root node
};

/// A span argument's value as the program gave it (ProfileGuard::arg, Profiler::arg).
struct ArgValue {
  enum class Type : std::uint8_t { String, Int, Real };
  Type type = Type::String;
  std::string_view text;     ///< Type::String
  std::int64_t integer = 0;  ///< Type::Int
  double real = 0.0;         ///< Type::Real
};

/// The value of an argument as ArgValue: text, an integer or a real.
inline ArgValue arg_value(std::string_view text) noexcept { return {ArgValue::Type::String, text, 0, 0.0}; }
template <typename T>
  requires std::integral<T> || std::floating_point<T>
ArgValue arg_value(T value) noexcept {
  if constexpr (std::integral<T>) {
    return {ArgValue::Type::Int, {}, static_cast<std::int64_t>(value), 0.0};
  } else {
    return {ArgValue::Type::Real, {}, 0, static_cast<double>(value)};
  }
}

// Out-of-line slow paths (src/record/thread_state.cpp).
NNPROF_API Node* find_or_add_child(ThreadState* ts, Node* parent, const SourceLocation* site) noexcept;
NNPROF_API HistogramRow* add_histogram_row(ThreadState* ts, Node* node, unsigned row) noexcept;
/// Hands the full chunk off (the session counts its spans into their histograms when it
/// keeps it) and takes the next one; false when there is none to take.
NNPROF_API bool next_chunk(ThreadState* ts) noexcept;
NNPROF_API void drop_record(ThreadState* ts, RecordKind kind) noexcept;
/// Drops a span past the cap (ThreadState::at_cap), and takes a spare chunk if the drainer
/// has left one, which ends that state.
NNPROF_API void drop_span_at_cap(ThreadState* ts) noexcept;
NNPROF_API void exit_out_of_order(ThreadState* ts, Frame* frame, std::uint64_t start, std::uint64_t end) noexcept;
NNPROF_API void note_too_deep(ThreadState* ts) noexcept;
/// Attaches `key` = `value` to the span the open frame `f` will write. Not the hot path: it
/// takes the thread's lock and copies both. Nothing when spans are not kept.
NNPROF_API void add_span_arg(ThreadState* ts, const Frame* f, std::string_view key, const ArgValue& value) noexcept;
// NVTX ranges for Nsight Systems (src/collect/gpu/nvtx.cpp; no-ops without the CUDA toolkit).
NNPROF_API void nvtx_push(const SourceLocation* site) noexcept;
NNPROF_API void nvtx_pop() noexcept;

/// Appends a record to the calling thread's chunk; false when it was dropped (no room).
inline bool write_record(ThreadState* ts, std::uint64_t t0, std::uint64_t t1, std::uint32_t ref,
                         RecordKind kind) noexcept {
  if (ts->write == ts->write_end) [[unlikely]] {
    if (!next_chunk(ts)) {
      drop_record(ts, kind);
      return false;
    }
  }
  Record* r = ts->write++;
  r->t0 = t0;
  r->t1 = t1;
  r->ref = ref;
  r->kind = kind;
  ts->chunk->count.store(++ts->chunk_count, std::memory_order_release);
  return true;
}

/// Opens a scope; returns its frame, or nullptr when it is not recorded (too deep).
inline Frame* scope_enter(ThreadState* ts, const SourceLocation* site) noexcept {
  Frame* parent = ts->top;
  if (parent == ts->stack_last) [[unlikely]] {
    note_too_deep(ts);
    return nullptr;
  }
  Node* pn = parent->node.load(std::memory_order_relaxed);
  Node* n = pn->hint;
  if (n == nullptr || n->site != site) [[unlikely]] {
    n = find_or_add_child(ts, pn, site);
    if (n == nullptr) return nullptr;
  }
  Frame* f = parent + 1;
  f->node.store(n, std::memory_order_relaxed);
  f->child = 0;
  // A CPU sample interrupting this thread reads top->node: the frame must be complete before
  // it becomes the top (a compiler-only barrier, no instruction).
  std::atomic_signal_fence(std::memory_order_release);
  ts->top = f;
  ts->depth.store(n->depth, std::memory_order_relaxed);
  if (ts->nvtx) [[unlikely]]
    nvtx_push(site);
  f->start = read_ticks();
  return f;
}

/// The histogram counter of duration `d` of node `n` (the percentiles); nullptr when its row
/// cannot be had (out of memory: the duration is then in the statistics only). Owner only.
inline std::atomic<std::uint64_t>* histogram_counter(ThreadState* ts, Node* n, std::uint64_t d) noexcept {
  const BucketIndex b = histogram_bucket(d);
  HistogramRow* row = n->rows[b.row].load(std::memory_order_relaxed);
  if (row == nullptr) [[unlikely]] {
    row = add_histogram_row(ts, n, b.row);
    if (row == nullptr) return nullptr;
  }
  return &row->bucket[b.sub];
}

/// Counts one duration of `n` into its histogram. Owner only.
inline void count_in_histogram(ThreadState* ts, Node* n, std::uint64_t d) noexcept {
  if (std::atomic<std::uint64_t>* counter = histogram_counter(ts, n, d)) single_writer_add(*counter, std::uint64_t{1});
}

/// Every statistic of a closed scope but its histogram (see scope_finish).
inline void count_duration(Node* n, std::uint64_t d, std::uint64_t self) noexcept {
  const std::uint64_t c = n->count.load(std::memory_order_relaxed);
  if (c == 0) [[unlikely]]
    n->shift.store(d, std::memory_order_relaxed);
  n->count.store(c + 1, std::memory_order_relaxed);
  single_writer_add(n->total, d);
  single_writer_add(n->self, self);
  if (d < n->min.load(std::memory_order_relaxed)) n->min.store(d, std::memory_order_relaxed);
  if (d > n->max.load(std::memory_order_relaxed)) n->max.store(d, std::memory_order_relaxed);
  const std::int64_t dev = static_cast<std::int64_t>(d - n->shift.load(std::memory_order_relaxed));
  single_writer_add(n->sum_dev, dev);
  const double ddev = static_cast<double>(dev);
  single_writer_add(n->sum_dev_sq, ddev * ddev);
}

/// Adds FLOPs and bytes moved to the calling thread's innermost open scope (the root node
/// when none is open, which reports count as work outside any scope).
inline void add_work(Node* n, double flops, std::uint64_t bytes) noexcept {
  single_writer_add(n->flops, flops);
  single_writer_add(n->bytes_moved, bytes);
}
inline void add_work(ThreadState* ts, double flops, std::uint64_t bytes) noexcept {
  add_work(ts->top->node.load(std::memory_order_relaxed), flops, bytes);
}

/// Closes the innermost frame `f` at tick `end`.
inline void scope_finish(ThreadState* ts, Frame* f, std::uint64_t end) noexcept {
  const std::uint64_t d = end - f->start;
  Node* n = f->node.load(std::memory_order_relaxed);
  const std::uint64_t self = d > f->child ? d - f->child : 0;
  count_duration(n, d, self);
  Frame* parent = f - 1;
  parent->child += d;
  ts->top = parent;
  ts->depth.store(n->depth - 1, std::memory_order_relaxed);
  if (ts->nvtx) [[unlikely]]
    nvtx_pop();
  // A kept span's duration reaches its histogram when the session keeps its chunk, off this
  // thread (Session::keep_locked). Counted here, the bucket's address, known only when the
  // closing clock read returns, held up the next clock read: a fifth of the cost of a scope
  // (docs/PERFORMANCE.md, "Issue 21: the histogram off the hot path").
  if (ts->keep_spans && !ts->at_cap) [[likely]] {
    if (write_record(ts, f->start, end, n->index, RecordKind::Span)) [[likely]]
      return;
    count_in_histogram(ts, n, d);  // dropped (no chunk to be had): counted here instead
    return;
  }
  // Not kept: counted now, before the drop's calls, so that they overlap with it.
  count_in_histogram(ts, n, d);
  if (ts->keep_spans) drop_span_at_cap(ts);
}

/// Closes a scope opened by scope_enter; `start` is the frame's start as the opener saw it,
/// which tells a still-open frame from a slot reused after an explicit stop.
inline void scope_exit(ThreadState* ts, Frame* f, std::uint64_t start) noexcept {
  const std::uint64_t end = read_ticks();
  if (ts->top != f || f->start != start) [[unlikely]] {
    exit_out_of_order(ts, f, start, end);
    return;
  }
  scope_finish(ts, f, end);
}

}  // namespace nnprof::detail
