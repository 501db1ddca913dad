// The tracked malloc/free fast path, inlined into the allocation hooks (and used by the
// tracker's general path in libnnprof): a thread that allocates a block puts it in its own
// cache and counts it on its innermost scope; a thread that frees a block still in its cache
// takes it out and counts the free. Single-writer counters are plain loads and stores. Any
// other case (inside nnprof, before the thread joined the run, a sampled stack, an occupied
// cache slot, a block not in the cache) calls the general path in libnnprof.
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
  std::uint32_t index = 0;                ///< thread index in that profiler's session
  std::uint32_t claims = 0;               ///< live-table slots taken, not yet reported
  // Rarely used.
  std::uint64_t rng = 0;
  std::atomic<std::uint64_t> untracked_frees{0};
  std::atomic<std::uint64_t> untracked_allocs{0};
  std::uintptr_t stack_begin = 0, stack_end = 0;  ///< the thread's stack, a root for leak checks
  collect::ThreadCache* own_cache = nullptr;      ///< this thread's cache memory, enlisted or not
  int cache_place = -1;                           ///< where `cache` is enlisted
  std::uint64_t cache_epoch = 0;                  ///< the run `cache` is enlisted in
  bool exited = false;                            ///< the thread has ended: no cache any more
};

/// The flush threshold: a thread adds its heap change to the global counter when it passes
/// this many bytes (or may set a new peak), so the peak is exact to within this per thread.
inline constexpr std::int64_t kHeapFlushBytes = 64 * 1024;

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

/// Counts a block of `size` bytes allocated by `t` while `node` is innermost. True when the
/// thread's batch must be flushed (full, or it might make a new peak: the peak is then exact
/// for this thread, and in steady state below the peak no shared line is written).
inline bool heap_count_alloc(HeapThread& t, Node* node, std::uint64_t size) noexcept {
  constexpr auto rx = std::memory_order_relaxed;
  const std::uint64_t allocated = node->heap_alloc_bytes.load(rx) + size;
  node->heap_alloc_bytes.store(allocated, rx);
  single_writer_add(node->heap_alloc_count, std::uint64_t{1});
  const std::uint64_t released = node->heap_released_bytes.load(rx) + node->heap_released_remote_bytes.load(rx);
  if (allocated > released && allocated - released > node->heap_peak_live.load(rx))
    node->heap_peak_live.store(allocated - released, rx);
  const std::int64_t pending = t.pending.load(rx) + static_cast<std::int64_t>(size);
  t.pending.store(pending, rx);
  return pending >= kHeapFlushBytes ||
         g_heap_hot.current.load(rx) + pending > g_heap_hot.peak.load(rx);
}

/// Counts the free of a block that `t` allocated itself (from `owner`, a node of its own
/// tree) while `here` is innermost. True when the batch must be flushed.
inline bool heap_count_own_free(HeapThread& t, Node* here, Node* owner, std::uint64_t size) noexcept {
  constexpr auto rx = std::memory_order_relaxed;
  single_writer_add(here->heap_free_bytes, size);
  single_writer_add(here->heap_free_count, std::uint64_t{1});
  single_writer_add(owner->heap_released_bytes, size);
  single_writer_add(owner->heap_released_count, std::uint64_t{1});
  const std::int64_t pending = t.pending.load(rx) - static_cast<std::int64_t>(size);
  t.pending.store(pending, rx);
  return pending <= -kHeapFlushBytes;
}

/// A tracked allocation: the common case inline, the rest in libnnprof. Returns `block`.
inline void* heap_track_alloc(void* block, std::size_t size, const void* caller) noexcept {
  const HeapThreadTls& tls = tls_heap;
  collect::ThreadCache* cache = fast_heap_cache(tls);
  if (cache == nullptr || block == nullptr) [[unlikely]]
    return heap_on_alloc(block, size, caller);
  auto* t = static_cast<HeapThread*>(tls.thread);
  const std::int64_t countdown = t->countdown - static_cast<std::int64_t>(size);
  const auto address = reinterpret_cast<std::uintptr_t>(block);
  collect::LiveSlot& slot = cache->slot(address);
  if (countdown < 0 || slot.key.load(std::memory_order_relaxed) != collect::LiveSlot::kEmpty) [[unlikely]]
    return heap_on_alloc(block, size, caller);  // a stack to sample, or the slot is taken
  t->countdown = countdown;
  Node* node = fast_heap_node(tls);
  slot.size.store(size, std::memory_order_relaxed);
  slot.node.store(node, std::memory_order_relaxed);
  slot.caller_stack.store(collect::LiveSlot::pack(reinterpret_cast<std::uintptr_t>(caller), 0),
                          std::memory_order_relaxed);
  slot.key.store(address, std::memory_order_release);
  if (heap_count_alloc(*t, node, size)) [[unlikely]]
    heap_flush(*t, node);
  return block;
}

/// A tracked free of a non-null block, before the real free.
inline void heap_track_free(void* block) noexcept {
  const HeapThreadTls& tls = tls_heap;
  collect::ThreadCache* cache = fast_heap_cache(tls);
  std::uint64_t size = 0;
  Node* owner = nullptr;
  if (cache == nullptr || !cache->take_own(reinterpret_cast<std::uintptr_t>(block), size, owner)) [[unlikely]] {
    heap_on_free(block);
    return;
  }
  auto* t = static_cast<HeapThread*>(tls.thread);
  Node* here = fast_heap_node(tls);
  if (heap_count_own_free(*t, here, owner, size)) [[unlikely]]
    heap_flush(*t, here);
}

}  // namespace nnprof::detail
