// The tracked malloc/free fast path, inlined into the allocation hooks (and used by the
// tracker's general path in libnnprof): a thread that allocates a block puts it in its own
// cache and counts it on its innermost scope; a thread that frees a block still in its cache
// takes it out and counts the free. Single-writer counters are plain loads and stores. Any
// other case (inside nnprof, before the thread joined the run, a sampled stack, an occupied
// cache set, a block not in the cache) calls the general path in libnnprof.
//
// Counts are batched per thread: while the innermost scope stays the same, a thread counts
// its allocations and frees there in its HeapThread (the batch), not in the scope's node, and
// adds the batch to the node when the innermost scope changes (at its next allocation or
// free), when the thread ends and when tracking stops. Snapshots read each thread's batch
// with its node (HeapTracker::read_batches), so every report stays exact. One comparison of
// the thread's heap change with a precomputed limit stands for the checks that used to read
// shared state on every allocation: a new peak of heap in use, a new peak of live bytes of
// the scope, a full batch of heap change.
#pragma once

#include <atomic>
#include <cstdint>

#include "collect/heap/heap_hooks_abi.hpp"
#include "collect/heap/thread_cache.hpp"
#include "nnprof/detail/thread_state.hpp"
#include "record/internal_allocations.hpp"

namespace nnprof::detail {

/// The tracker's state for one thread. Made when the thread first joins a tracking run and
/// reused by it in later runs; never freed (a late hook of an ending thread may still use it).
struct HeapThread {
  // Read on every tracked malloc/free; written by the owner only.
  collect::ThreadCache* cache = nullptr;  ///< enlisted cache; nullptr: blocks go to the shared table
  ThreadState* ts = nullptr;              ///< the tracked profiler's state for this thread
  std::int64_t countdown = 0;             ///< bytes until the next sampled stack
  std::atomic<std::int64_t> pending{0};   ///< heap change not yet added to the global counter
  /// The slow path runs when `pending` exceeds this: the heap in use may reach a new peak,
  /// the batch node's live bytes may reach a new peak, or the batch of heap change is full.
  std::int64_t limit = 0;
  /// The largest block this thread allocated in the run. Allocations up to it stay on the fast
  /// path (one compare); a larger one takes the general path, which raises it.
  std::atomic<std::uint64_t> largest_alloc{0};
  // The batch: counts at `batch_node` (the innermost scope when the batch began) that are not
  // in the node yet. Written by the owner; read by snapshots (see batch_seq).
  std::atomic<Node*> batch_node{nullptr};
  std::atomic<std::uint64_t> batch_alloc_bytes{0};
  std::atomic<std::uint64_t> batch_alloc_count{0};
  std::atomic<std::uint64_t> batch_free_bytes{0};  ///< blocks of batch_node freed there by this thread
  std::atomic<std::uint64_t> batch_free_count{0};
  std::uint32_t index = 0;                ///< thread index in that profiler's session
  std::uint32_t claims = 0;               ///< live-table slots taken, not yet reported
  // The rest of the batch, used on slower paths.
  std::atomic<std::uint64_t> batch_other_bytes{0};  ///< freed at batch_node, allocated at another node
  std::atomic<std::uint64_t> batch_other_count{0};
  /// Even while the batch is stable; odd while its owner adds it to the node and starts the
  /// next one. kBatchTaken: tracking stopped and the stopping thread added the batch to its
  /// node (kBatchDone once it has); the owner then drops it.
  std::atomic<std::uint64_t> batch_seq{0};
  std::uint64_t batch_base = 0;  ///< batch_node's own allocated - released bytes when the batch began
  std::int64_t batch_p0 = 0;     ///< `pending` - (batch allocated - batch released bytes at batch_node)
  // Rarely used.
  std::uint64_t rng = 0;
  std::atomic<std::uint64_t> untracked_frees{0};
  std::atomic<std::uint64_t> untracked_allocs{0};
  std::uintptr_t stack_begin = 0, stack_end = 0;  ///< the thread's stack, a root for leak checks
  collect::ThreadCache* own_cache = nullptr;      ///< this thread's cache memory, enlisted or not
  int cache_place = -1;                           ///< where `cache` is enlisted
  std::uint64_t cache_epoch = 0;                  ///< the run `cache` is enlisted in
  bool exited = false;                            ///< the thread has ended: no cache any more

  static constexpr std::uint64_t kBatchTaken = std::uint64_t{1} << 62;
  static constexpr std::uint64_t kBatchDone = std::uint64_t{1} << 63;
};

/// The flush threshold: a thread adds its heap change to the global counter when it passes
/// this many bytes (or may set a new peak), so the peak is exact to within this per thread.
inline constexpr std::int64_t kHeapFlushBytes = 64 * 1024;

/// Counts a block of `size` bytes allocated by `t` while `node` is innermost.
inline void heap_count_alloc(HeapThread& t, Node* node, std::uint64_t size) noexcept {
  constexpr auto rx = std::memory_order_relaxed;
  if (node != t.batch_node.load(rx)) [[unlikely]] {
    heap_count_alloc_slow(t, node, size);  // another scope: the batch changes
    return;
  }
  single_writer_add(t.batch_alloc_bytes, size);
  single_writer_add(t.batch_alloc_count, std::uint64_t{1});
  const std::int64_t pending = t.pending.load(rx) + static_cast<std::int64_t>(size);
  t.pending.store(pending, rx);
  if (pending > t.limit) [[unlikely]]
    heap_flush(t, node);
}

/// Counts the free of a block that `t` allocated itself (from `owner`, a node of its own
/// tree) while `here` is innermost.
inline void heap_count_own_free(HeapThread& t, Node* here, Node* owner, std::uint64_t size) noexcept {
  constexpr auto rx = std::memory_order_relaxed;
  if (here != owner || here != t.batch_node.load(rx)) [[unlikely]] {
    heap_count_free_slow(t, here, owner, size);
    return;
  }
  single_writer_add(t.batch_free_bytes, size);
  single_writer_add(t.batch_free_count, std::uint64_t{1});
  const std::int64_t pending = t.pending.load(rx) - static_cast<std::int64_t>(size);
  t.pending.store(pending, rx);
  if (pending <= -kHeapFlushBytes) [[unlikely]]
    heap_flush(t, here);
}

/// The calling thread's cache when the fast path may use it: not inside nnprof, joined to the
/// current run, with a cache. nullptr otherwise.
inline collect::ThreadCache* fast_heap_cache(const HeapThreadTls& tls) noexcept {
  if (tls.key != g_heap_hot.epoch.load(std::memory_order_relaxed)) [[unlikely]]  // see HeapThreadTls::key
    return nullptr;
  return static_cast<collect::ThreadCache*>(tls.cache);
}

/// The innermost open scope of the calling thread (tls.ts is set whenever tls.cache is).
inline Node* fast_heap_node(const HeapThreadTls& tls) noexcept {
  return static_cast<ThreadState*>(tls.ts)->top->node.load(std::memory_order_relaxed);
}

/// A tracked allocation: the common case inline, the rest in libnnprof. Returns `block`.
/// The common case (no stack to sample, a free slot in the block's cache set, the innermost scope is the batch
/// node, the limit not reached) makes no call, so the hooks need no stack frame for it.
inline void* heap_track_alloc(void* block, std::size_t size, const void* caller) noexcept {
  constexpr auto rx = std::memory_order_relaxed;
  const HeapThreadTls& tls = tls_heap;
  collect::ThreadCache* cache = fast_heap_cache(tls);
  if (cache == nullptr || block == nullptr) [[unlikely]]
    return heap_on_alloc(block, size, caller);
  auto* t = static_cast<HeapThread*>(tls.thread);
  const std::int64_t countdown = t->countdown - static_cast<std::int64_t>(size);
  const auto address = reinterpret_cast<std::uintptr_t>(block);
  collect::LiveSlot* slot = cache->empty_slot(address);
  Node* node = fast_heap_node(tls);
  const std::int64_t pending = t->pending.load(rx) + static_cast<std::int64_t>(size);
  if (countdown < 0 || slot == nullptr || node != t->batch_node.load(rx) || pending > t->limit ||
      size > t->largest_alloc.load(rx)) [[unlikely]]
    return heap_on_alloc(block, size, caller);  // a stack to sample, the set full, another scope, the limit,
                                                // the thread's largest block yet
  t->countdown = countdown;
  slot->size.store(size, rx);
  slot->node.store(node, rx);
  // pack(caller, 0) without the mask: user-space addresses fit in 48 bits (read() masks).
  slot->caller_stack.store(reinterpret_cast<std::uintptr_t>(caller), rx);
  slot->key.store(address, std::memory_order_release);
  single_writer_add(t->batch_alloc_bytes, std::uint64_t{size});
  single_writer_add(t->batch_alloc_count, std::uint64_t{1});
  t->pending.store(pending, rx);
  return block;
}

/// The common tracked free, before the real free: a block of the thread's own cache,
/// allocated and freed at the batch node, the limit not reached. False when it is not that
/// case: nothing was done, and heap_on_free must handle the block.
inline bool heap_track_free_fast(void* block) noexcept {
  constexpr auto rx = std::memory_order_relaxed;
  const HeapThreadTls& tls = tls_heap;
  collect::ThreadCache* cache = fast_heap_cache(tls);
  const auto address = reinterpret_cast<std::uintptr_t>(block);
  if (cache == nullptr || address == 0) [[unlikely]]
    return false;
  collect::LiveSlot* slot = cache->find(address);
  if (slot == nullptr) [[unlikely]]
    return false;
  auto* t = static_cast<HeapThread*>(tls.thread);
  const std::uint64_t size = slot->size.load(rx);
  Node* owner = slot->node.load(rx);
  const std::int64_t pending = t->pending.load(rx) - static_cast<std::int64_t>(size);
  if (owner != t->batch_node.load(rx) || owner != fast_heap_node(tls) || pending <= -kHeapFlushBytes) [[unlikely]]
    return false;
  // Plain stores: another thread could take the same block only by freeing it twice.
  slot->key.store(collect::LiveSlot::kEmpty, std::memory_order_release);
  single_writer_add(t->batch_free_bytes, size);
  single_writer_add(t->batch_free_count, std::uint64_t{1});
  t->pending.store(pending, rx);
  return true;
}

/// A tracked free of a block, before the real free.
inline void heap_track_free(void* block) noexcept {
  if (!heap_track_free_fast(block)) heap_on_free(block);
}

}  // namespace nnprof::detail
