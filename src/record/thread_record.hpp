// Everything a session keeps per recording thread beyond the hot fields of ThreadState.
#pragma once

#include <algorithm>
#include <array>
#include <atomic>
#include <cstdint>
#include <deque>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

#include "nnprof/detail/thread_state.hpp"
#include "record/chunk_ring.hpp"
#include "record/metric_registry.hpp"
#include "record/raw_snapshot.hpp"

namespace nnprof::detail {

class Session;
struct NamedEntry;

inline constexpr std::uint32_t kNodesPerBlock = 64;
inline constexpr std::uint32_t kMaxNodeBlocks = 1024;  // 65,536 call-tree nodes per thread

/// Spare chunks the session hands a thread at most (the drainer's target is lower).
inline constexpr std::size_t kSpareRingChunks = 64;

/// The capacity of a thread's hand-off ring in a session capped at `cap_bytes`: every chunk the
/// cap allows, so that handing a full chunk off never fails below the cap however far behind
/// the drainer is (a ring of 64 overflowed when the drainer was descheduled or busy faulting
/// chunks in, and lost spans below the cap). It costs 8 bytes of address space per chunk the
/// cap allows (32 KiB for the default 256 MiB), touched only as far as chunks pass through it;
/// past 2^20 chunks (64 GiB) the ring stops growing, and a drainer that far behind loses spans.
inline std::size_t full_ring_capacity(std::size_t cap_bytes) noexcept {
  const std::size_t chunks = cap_bytes / Chunk::kBytes + 1;
  return chunks < kSpareRingChunks ? kSpareRingChunks : chunks > (std::size_t{1} << 20) ? std::size_t{1} << 20 : chunks;
}

/// Histogram rows carved from slabs of kRowsPerSlab: one heap allocation per slab, none per
/// row. One writer at a time (whoever owns the slabs).
struct HistogramRowSlabs {
  static constexpr std::uint32_t kRowsPerSlab = 256;
  std::vector<std::unique_ptr<HistogramRow[]>> slabs;
  std::uint32_t used = kRowsPerSlab;  // rows carved from the last slab

  /// Carves a new slab when the last one is used up, so that the next take() allocates
  /// nothing. Throws std::bad_alloc when it cannot be had.
  void refill() {
    if (used == kRowsPerSlab) {
      slabs.push_back(std::make_unique<HistogramRow[]>(kRowsPerSlab));
      used = 0;
    }
  }
  /// A zeroed row; throws std::bad_alloc when a new slab cannot be had.
  HistogramRow* take() {
    refill();
    return &slabs.back()[used++];
  }
};

struct ThreadPrivate {
  explicit ThreadPrivate(std::size_t full_ring_chunks) : full(full_ring_chunks) {}

  Session* session = nullptr;  // valid while the owning profiler lives
  std::uint32_t index = 0;
  std::int64_t os_tid = 0;

  ChunkRing full;                     // owner -> session
  ChunkRing spare{kSpareRingChunks};  // session -> owner
  std::atomic<Chunk*> current{nullptr};  // the chunk being filled, published for snapshots
  std::atomic<std::uint64_t> chunks_taken{0};
  std::atomic<bool> starving{false};  // set by the owner when it found no spare chunk
  std::atomic<bool> exited{false};    // the thread has ended; its state is the session's now
  std::atomic<bool> orphaned{false};  // the session has ended; the thread may drop this record
  // Session-side bookkeeping (under the session mutex).
  bool finalized = false;
  std::uint64_t last_taken = 0;
  std::size_t spare_target = 2;

  // Call-tree node arena: blocks never move, so nodes keep their addresses.
  std::atomic<Node*> blocks[kMaxNodeBlocks] = {};
  std::atomic<std::uint32_t> node_count{0};
  std::atomic<std::uint64_t> tree_full{0};

  // Histogram rows of Node::rows (owner only): the session carves the first slab when it
  // registers the thread, so a duration of a new magnitude does not cost a heap allocation on
  // the hot path.
  HistogramRowSlabs rows;

  // The histograms of the spans this thread handed off, by node index: Session::keep_locked
  // counts each chunk's span durations here as it keeps the chunk, off the recording thread
  // (the hot path counts only spans it does not keep, into Node::rows). Session side, under
  // the session mutex; rows carved from slabs of their own.
  std::vector<std::array<HistogramRow*, kHistogramRows>> kept_rows;
  HistogramRowSlabs kept_row_slabs;

  // Keep-first past the cap (Session::lend_scratch_chunk): a few chunks lent beyond the cap,
  // which the thread fills like any chunk, so that a scope there costs what it costs below
  // the cap. The session empties each one it takes from the ring (its spans into their
  // histograms and, with its flows and events, into the counts below as dropped) and hands it
  // back as a spare. Four: with two, the drainer's wake-up latency left two thirds of a short
  // burst's spans to be dropped on the thread. Session side, under the session mutex.
  static constexpr std::size_t kScratchChunks = 4;
  std::array<Chunk*, kScratchChunks> scratch{};
  std::uint8_t scratch_lent = 0;  // owner only: how many the session lent (it takes none back)
  std::uint64_t scratch_dropped_spans = 0;
  std::uint64_t scratch_dropped_flows = 0;
  std::uint64_t scratch_dropped_events = 0;
  [[nodiscard]] bool is_scratch(const Chunk* c) const noexcept {
    return c != nullptr && std::find(scratch.begin(), scratch.end(), c) != scratch.end();
  }

  // start(name) calls refused because the stack was full (owner only): the stops that match
  // them are consumed one each, so balanced start/stop pairs deeper than kMaxDepth neither
  // close the wrong scopes nor read as stops without a start. Scope guards need no such
  // count: a guard that opened nothing closes nothing.
  std::uint32_t overflow_depth = 0;

  // Run-time names this thread has used (owner only).
  std::unordered_map<std::string_view, NamedEntry*> name_cache;

  // Its statistics of each metric (nnprof/metrics.hpp), and the metric names it used.
  MetricThread metrics;

  // Rare events and the thread's name, read by snapshots.
  std::mutex mu;
  std::string name;
  std::map<std::pair<ThreadEventKind, const SourceLocation*>, std::uint64_t> events;
  // Span arguments (add_span_arg), under `mu`: a lock is fine at a few per operator; at most
  // kMaxSpanArgsPerThread. Keys and texts are interned: `arg_strings` holds each once (a deque,
  // so that the views `arg_string_ids` is keyed by stay valid as it grows).
  std::vector<RawSpanArg> span_args;
  std::deque<std::string> arg_strings;
  std::unordered_map<std::string_view, std::uint32_t> arg_string_ids;
  std::uint64_t span_args_dropped = 0;

  // The strings interned last, by where the caller keeps them: a framework passes the same
  // key literals and reuses one buffer for its texts, so most lookups are a compare of the
  // bytes at a remembered address instead of a hash (the bytes are compared, so a buffer
  // that now holds another text is looked up anew).
  struct RecentString {
    const char* data = nullptr;
    std::size_t size = 0;
    std::uint32_t id = 0;
  };
  std::array<RecentString, 16> recent_strings{};

  /// The id of `text` in arg_strings, added when new (under `mu`). Throws std::bad_alloc.
  std::uint32_t arg_string_id(std::string_view text) {
    RecentString& recent = recent_strings[(reinterpret_cast<std::uintptr_t>(text.data()) >> 3) % recent_strings.size()];
    if (recent.data == text.data() && recent.size == text.size() &&
        std::string_view(arg_strings[recent.id]) == text)
      return recent.id;
    std::uint32_t id = 0;
    if (auto it = arg_string_ids.find(text); it != arg_string_ids.end()) {
      id = it->second;
    } else {
      id = static_cast<std::uint32_t>(arg_strings.size());
      const std::string& kept = arg_strings.emplace_back(text);
      arg_string_ids.emplace(kept, id);
    }
    recent = RecentString{text.data(), text.size(), id};
    return id;
  }

  Node* node_at(std::uint32_t index) const noexcept {
    return blocks[index / kNodesPerBlock].load(std::memory_order_acquire) + index % kNodesPerBlock;
  }
  void note(ThreadEventKind kind, const SourceLocation* site) noexcept;
};

/// One allocation holding both halves; shared by the session and the thread's exit hook.
struct ThreadRecord {
  ThreadState state;
  ThreadPrivate priv;
  explicit ThreadRecord(std::size_t full_ring_chunks);
  ~ThreadRecord();
  ThreadRecord(const ThreadRecord&) = delete;
  ThreadRecord& operator=(const ThreadRecord&) = delete;
};

Chunk* allocate_chunk();
void free_chunk(Chunk* c) noexcept;

}  // namespace nnprof::detail
