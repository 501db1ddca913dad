// The live allocation table: every tracked heap block that has not been freed yet, keyed by
// its address, with its size, allocating call-tree node, caller and sampled stack.
//
// It sits on the malloc/free hot path of every thread, so it takes no lock: open addressing
// with linear probing, a slot claimed by one compare-and-swap (to a busy mark: the key is
// stored after the block's fields, so a reader that sees a key sees its fields), removal by
// a plain store of a tombstone (only the thread freeing a block touches its slot). It cannot
// be resized in place without stopping the world, so it grows by generations instead: when
// the newest table is half used (live blocks and tombstones) a twice larger one is added, new
// blocks go there, and lookups search the newest first, then the others. Older generations
// only lose entries. A generation mostly full of tombstones (blocks come and go, few stay:
// the table's slots are all used up although it holds little) is followed by one of the same
// size instead, and a generation whose blocks have all been freed is emptied and used again
// as the newest rather than mapping another: under a steady churn two generations take
// turns, where new ones used to be added for ever (254 MiB after 4 million blocks passed
// through with 100 alive). Memory is mapped lazily (MAP_NORESERVE), so only slots that were
// touched cost RSS.
//
// Most blocks never reach it: each thread keeps the blocks it allocated last in a cache of
// its own (thread_cache.hpp), and only blocks that outlive their cache slot are moved here.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <mutex>
#include <vector>

#include "collect/heap/reachability.hpp"

namespace nnprof::detail {
struct Node;
}

namespace nnprof::collect {

struct LiveBlockInfo {
  std::uint64_t size = 0;
  detail::Node* node = nullptr;  ///< innermost scope of the allocating thread
  std::uintptr_t caller = 0;     ///< return address in the caller of malloc/new
  std::uint32_t stack = 0;       ///< 1-based id of a sampled stack; 0: none
};

/// One live block, in the shared table or in a thread's cache: its address (the key) or one
/// of the marks below, and what is known of it. Keys are block addresses, at least 8-aligned
/// and far above the marks.
struct LiveSlot {
  static constexpr std::uint64_t kEmpty = 0, kTombstone = 1, kBusy = 2;
  std::atomic<std::uint64_t> key{kEmpty};
  std::atomic<std::uint64_t> size{0};
  std::atomic<detail::Node*> node{nullptr};
  std::atomic<std::uint64_t> caller_stack{0};  // caller in the low 48 bits, stack id above

  static constexpr std::uint64_t pack(std::uintptr_t caller, std::uint32_t stack) noexcept {
    return (static_cast<std::uint64_t>(caller) & ((std::uint64_t{1} << 48) - 1)) |
           (static_cast<std::uint64_t>(stack) << 48);
  }
  /// Writes the fields (not the key).
  void fill(const LiveBlockInfo& info) noexcept {
    size.store(info.size, std::memory_order_relaxed);
    node.store(info.node, std::memory_order_relaxed);
    caller_stack.store(pack(info.caller, info.stack), std::memory_order_relaxed);
  }
  [[nodiscard]] LiveBlockInfo read() const noexcept {
    const std::uint64_t cs = caller_stack.load(std::memory_order_relaxed);
    return LiveBlockInfo{size.load(std::memory_order_relaxed), node.load(std::memory_order_relaxed),
                         static_cast<std::uintptr_t>(cs & ((std::uint64_t{1} << 48) - 1)),
                         static_cast<std::uint32_t>(cs >> 48)};
  }
};
static_assert(sizeof(LiveSlot) == 32);

/// Appends the memory mapped for the live blocks (tables and thread caches): it holds every
/// block's address, so a leak check must not take it for the program's. False when more
/// mappings were made than could be noted (then the list is incomplete).
bool live_table_mappings(std::vector<MemoryRange>& out);

class LiveTable {
 public:
  static constexpr std::uint32_t kMaxStackId = 0xFFFF;  // stack ids share a word with the caller

  LiveTable() = default;
  ~LiveTable();
  LiveTable(const LiveTable&) = delete;
  LiveTable& operator=(const LiveTable&) = delete;

  /// Adds the block at `address` (which must not be in the table). `claims` is the calling
  /// thread's count of slots taken since it last reported them. False when no memory could
  /// be mapped for a larger generation.
  bool insert(std::uintptr_t address, const LiveBlockInfo& info, std::uint32_t& claims) noexcept;
  /// Removes `address` and returns what was stored for it; false when it is not tracked.
  bool remove(std::uintptr_t address, LiveBlockInfo& out) noexcept;
  /// Calls f(address, info) for every live block. Safe while other threads insert and
  /// remove (they may or may not be seen).
  template <class F>
  void for_each(F&& f) const;
  /// Empties the table, keeping its address space mapped (late hooks of a stopped tracker
  /// may still read it) but returning its memory to the system.
  void clear() noexcept;
  /// Bytes of address space mapped for all generations.
  [[nodiscard]] std::uint64_t mapped_bytes() const noexcept;

 private:
  static constexpr std::uint64_t kEmpty = LiveSlot::kEmpty, kTombstone = LiveSlot::kTombstone,
                                 kBusy = LiveSlot::kBusy;
  static constexpr int kMaxGenerations = 36;
  // 512 KiB: most blocks stay in the thread caches, and under churn the table runs on two
  // generations of this size; a step of RSS as large as a generation, late in a short run,
  // would look like growth to a leak check.
  static constexpr unsigned kFirstBits = 14;
  static constexpr unsigned kMaxProbe = 128;       // a longer probe means the table is too full
  static constexpr std::uint32_t kClaimBatch = 32;  // slots counted per thread before reporting

  using Slot = LiveSlot;

  struct Generation {
    Slot* slots = nullptr;
    std::uint64_t mask = 0;
    unsigned shift = 0;
    std::atomic<std::uint64_t> used{0};  // slots ever claimed (live + tombstones), batched
    // Blocks in it, counted before a slot is claimed and after one is emptied: zero means no
    // block is in it and no insert is under way that has not seen `retired`.
    std::atomic<std::int64_t> live{0};
    // Set while grow() checks whether the generation can be emptied and used again; an insert
    // that sees it goes to the newest generation instead.
    std::atomic<bool> retired{false};
  };

  static std::uint64_t home(const Generation& g, std::uintptr_t address) noexcept {
    return ((address >> 4) * 0x9E3779B97F4A7C15ull) >> g.shift;
  }
  Generation* newest() const noexcept;
  Generation* grow(Generation* full) noexcept;
  Generation* reuse_drained(const Generation* full, std::uint64_t min_slots) noexcept;
  void report_claims(Generation* g, std::uint32_t& claims) noexcept;
  static bool remove_from(Generation* g, std::uintptr_t address, LiveBlockInfo& out) noexcept;

  // generations_[0, count_) are mapped; newest_ is the one new blocks go to (any of them).
  std::atomic<Generation*> generations_[kMaxGenerations] = {};
  std::atomic<int> count_{0};
  std::atomic<int> newest_{-1};
  std::mutex grow_mu_;
};

template <class F>
void LiveTable::for_each(F&& f) const {
  const int n = count_.load(std::memory_order_acquire);
  for (int i = 0; i < n; ++i) {
    const Generation* g = generations_[i].load(std::memory_order_acquire);
    if (g == nullptr) continue;
    for (std::uint64_t s = 0; s <= g->mask; ++s) {
      const Slot& slot = g->slots[s];
      const std::uint64_t key = slot.key.load(std::memory_order_acquire);
      if (key <= kBusy) continue;
      const LiveBlockInfo info = slot.read();
      if (slot.key.load(std::memory_order_acquire) != key) continue;  // removed meanwhile
      f(static_cast<std::uintptr_t>(key), info);
    }
  }
}

}  // namespace nnprof::collect
