// Per-thread caches of live blocks in front of the shared live table.
//
// Most blocks are freed by the thread that allocated them, while it has at most a few thousand
// others alive. So each tracking thread keeps the blocks it allocated last in a two-way
// set-associative cache of its own (kSlots slots, sets indexed by a hash of the address). The owner fills an empty slot and
// empties it again with plain stores: no read-modify-write on the common path. Every other
// thread may still take a block out of a cache (a free from another thread) with one
// compare-and-swap of its key to empty, so each block has exactly one home at any time: a
// cache slot or the shared table.
//
// The owner moves a block out of its cache (to make room for a new one, or to flush the
// cache when the thread ends) in three steps: it marks the slot's key as moving (address | 1,
// by compare-and-swap, so that a concurrent free from another thread either took the block
// before, or will wait), publishes the block in the shared table, then stores the slot's new
// key. A thread that frees a block it does not find in its own cache looks in the shared
// table, then in the set of every other cache for that address, then in the shared table
// once more: a block moved in between is found by the last look, because the slot's new key
// (which the search read) was stored after the block was published.
//
// Caches are searched only while they are enlisted (at most kMaxCaches at a time; threads
// beyond that use the shared table alone). Snapshots read the table and every enlisted
// cache. Cache memory is mapped (never malloc'ed) and reused by later threads.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <mutex>

#include "collect/heap/live_table.hpp"

namespace nnprof::collect {

struct ThreadCache {
  // 4,096 slots (128 KiB): a thread's live set of about a thousand scattered blocks (a ring
  // of buffers, a tree of nodes) fits, so its blocks rarely spill into the shared table,
  // whose lookups miss the processor's caches. Lazily backed: untouched pages cost nothing.
  static constexpr unsigned kBits = 13;
  static constexpr std::size_t kSlots = std::size_t{1} << kBits;
  // Two-way sets: a block may live in either slot of its set, and both share one 64-byte
  // line, so a look at the set is one cache line and a new block displaces another only
  // when both slots are taken. A block never changes slot while it is in the cache.
  static constexpr std::size_t kWays = 2;

  /// The first slot of `address`'s set.
  static std::size_t index(std::uintptr_t address) noexcept {
    // Another multiplier than the shared table's, so that a cache slot's blocks spread over it.
    // Heap blocks are 16-byte aligned: the low four bits say nothing.
    return static_cast<std::size_t>(((address >> 4) * 0xD6E8FEB86659FD93ull) >> (64 - kBits + 1)) * kWays;
  }
  LiveSlot* set(std::uintptr_t address) noexcept { return &slots[index(address)]; }
  /// The slot that holds `address` (its key is the address), or nullptr.
  LiveSlot* find(std::uintptr_t address) noexcept {
    LiveSlot* s = set(address);
    if (s[0].key.load(std::memory_order_relaxed) == address) return &s[0];
    if (s[1].key.load(std::memory_order_relaxed) == address) return &s[1];
    return nullptr;
  }
  /// The owner: an empty slot of `address`'s set, or nullptr when both are taken.
  LiveSlot* empty_slot(std::uintptr_t address) noexcept {
    LiveSlot* s = set(address);
    if (s[0].key.load(std::memory_order_relaxed) == LiveSlot::kEmpty) return &s[0];
    if (s[1].key.load(std::memory_order_relaxed) == LiveSlot::kEmpty) return &s[1];
    return nullptr;
  }

  /// The owner: puts a block in its set if a slot there is empty.
  bool put_if_empty(std::uintptr_t address, const LiveBlockInfo& info) noexcept {
    LiveSlot* s = empty_slot(address);
    if (s == nullptr) return false;
    s->fill(info);
    s->key.store(address, std::memory_order_release);
    return true;
  }
  /// The owner: takes out a block it put in. Plain stores: another thread could take the same
  /// block only by freeing it twice.
  bool take_own(std::uintptr_t address, std::uint64_t& size, detail::Node*& node) noexcept {
    LiveSlot* s = find(address);
    if (s == nullptr) return false;
    size = s->size.load(std::memory_order_relaxed);
    node = s->node.load(std::memory_order_relaxed);
    s->key.store(LiveSlot::kEmpty, std::memory_order_release);
    return true;
  }
  /// The owner: empties every slot (the blocks are forgotten). Only slots in use are written,
  /// so pages the thread never filled stay unbacked (a cache is 256 KiB of address space).
  void reset() noexcept {
    for (LiveSlot& s : slots)
      if (s.key.load(std::memory_order_relaxed) != LiveSlot::kEmpty) s.key.store(LiveSlot::kEmpty, std::memory_order_release);
  }

  alignas(64) LiveSlot slots[kSlots];
  ThreadCache* next_free = nullptr;  // in the pool of unused caches
};

/// The live blocks of a tracking run: the shared table and the enlisted thread caches.
class LiveBlocks {
 public:
  static constexpr std::size_t kMaxCaches = 128;  // the cost of a free that misses every cache grows with it

  LiveBlocks() = default;
  ~LiveBlocks();
  LiveBlocks(const LiveBlocks&) = delete;
  LiveBlocks& operator=(const LiveBlocks&) = delete;

  LiveTable& table() noexcept { return table_; }

  /// The owner of `cache`: adds a block, moving the block that holds its slot (if any) to the
  /// shared table. False when no memory could be mapped for the table.
  bool put(ThreadCache& cache, std::uintptr_t address, const LiveBlockInfo& info, std::uint32_t& claims) noexcept;
  /// Any thread: takes the block out wherever it lives. `own` (the caller's cache, or
  /// nullptr) has been searched already. False: the block is not tracked.
  bool take(const ThreadCache* own, std::uintptr_t address, LiveBlockInfo& out) noexcept;
  /// The owner of `cache`: moves all its blocks to the shared table. False when no memory
  /// could be mapped for the table (some blocks are then still in the cache).
  bool flush(ThreadCache& cache) noexcept;

  /// An empty cache, from the pool or newly mapped; nullptr when no memory could be mapped.
  ThreadCache* new_cache() noexcept;
  /// Returns an empty cache, no longer enlisted nor used by its owner, to the pool.
  void recycle(ThreadCache* cache) noexcept;
  /// Makes `cache` searched by take() and for_each(); returns its place (for delist), or -1
  /// when kMaxCaches caches are enlisted already.
  int enlist(ThreadCache* cache) noexcept;
  void delist(int place) noexcept;

  /// Empties the shared table and delists every cache (their owners reset them before they
  /// enlist again).
  void clear() noexcept;

  /// Calls f(address, info) for every live block of the table and the enlisted caches. Safe
  /// while other threads add and remove blocks (they may or may not be seen, and a block that
  /// its owner moves from its cache to the table at that moment may be missed).
  template <class F>
  void for_each(F&& f) const;

  [[nodiscard]] std::uint64_t mapped_bytes() const noexcept;

 private:
  bool claim(ThreadCache& cache, std::uintptr_t address, LiveBlockInfo& out) noexcept;
  bool move_to_table(LiveSlot& slot, std::uint64_t key, std::uint32_t& claims) noexcept;

  LiveTable table_;
  std::atomic<ThreadCache*> caches_[kMaxCaches] = {};
  std::atomic<std::size_t> cache_end_{0};  // caches_[cache_end_..] were never used since clear()
  mutable std::mutex mu_;                  // enlist, delist, the pool
  ThreadCache* pool_ = nullptr;
  std::size_t mapped_caches_ = 0;
};

template <class F>
void LiveBlocks::for_each(F&& f) const {
  table_.for_each(f);
  const std::size_t end = cache_end_.load(std::memory_order_acquire);
  for (std::size_t i = 0; i < end; ++i) {
    const ThreadCache* c = caches_[i].load(std::memory_order_acquire);
    if (c == nullptr) continue;
    for (const LiveSlot& s : c->slots) {
      const std::uint64_t key = s.key.load(std::memory_order_acquire);
      if (key <= LiveSlot::kBusy || (key & 1) != 0) continue;  // empty, or being moved to the table
      const LiveBlockInfo info = s.read();
      if (s.key.load(std::memory_order_acquire) != key) continue;  // freed meanwhile
      f(static_cast<std::uintptr_t>(key), info);
    }
  }
}

}  // namespace nnprof::collect
