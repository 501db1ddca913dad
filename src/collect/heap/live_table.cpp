#include "collect/heap/live_table.hpp"

#include <sched.h>
#include <sys/mman.h>

#include "collect/heap/thread_cache.hpp"

#include <algorithm>
#include <new>

namespace nnprof::collect {

namespace {

// Every mapping made here, noted without allocating (map_zeroed runs inside malloc hooks).
// Never unmapped but by ~LiveTable, and a stale entry only keeps a leak check off a range.
constexpr std::size_t kMaxOwnMappings = 4096;
constinit std::atomic<std::uintptr_t> g_own_begin[kMaxOwnMappings] = {};
constinit std::atomic<std::uintptr_t> g_own_end[kMaxOwnMappings] = {};
constinit std::atomic<std::size_t> g_own_count{0};

// Generations are mapped directly: the table must not allocate through the malloc it tracks.
void* map_zeroed(std::size_t bytes) noexcept {
  void* p = mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  if (p == MAP_FAILED) return nullptr;
  const std::size_t i = g_own_count.fetch_add(1, std::memory_order_acq_rel);
  if (i < kMaxOwnMappings) {
    g_own_end[i].store(reinterpret_cast<std::uintptr_t>(p) + bytes, std::memory_order_relaxed);
    g_own_begin[i].store(reinterpret_cast<std::uintptr_t>(p), std::memory_order_release);
  }
  return p;
}

}  // namespace

bool live_table_mappings(std::vector<MemoryRange>& out) {
  const std::size_t n = g_own_count.load(std::memory_order_acquire);
  for (std::size_t i = 0; i < std::min(n, kMaxOwnMappings); ++i) {
    const std::uintptr_t begin = g_own_begin[i].load(std::memory_order_acquire);
    if (begin != 0) out.push_back(MemoryRange{begin, g_own_end[i].load(std::memory_order_relaxed)});
  }
  return n <= kMaxOwnMappings;
}

LiveTable::~LiveTable() {
  for (auto& slot : generations_) {
    Generation* g = slot.load(std::memory_order_relaxed);
    if (g == nullptr) continue;
    munmap(g->slots, (g->mask + 1) * sizeof(Slot));
    munmap(g, sizeof(Generation));
  }
}

LiveTable::Generation* LiveTable::newest() const noexcept {
  const int n = newest_.load(std::memory_order_acquire);
  return n < 0 ? nullptr : generations_[n].load(std::memory_order_acquire);
}

LiveTable::Generation* LiveTable::reuse_drained(const Generation* full, std::uint64_t min_slots) noexcept {
  // The smallest generation of at least min_slots slots that holds no block.
  const int n = count_.load(std::memory_order_relaxed);
  for (;;) {
    Generation* best = nullptr;
    int best_index = -1;
    for (int i = 0; i < n; ++i) {
      Generation* g = generations_[i].load(std::memory_order_relaxed);
      if (g == full || g->mask + 1 < min_slots || g->retired.load(std::memory_order_relaxed)) continue;
      if (g->live.load(std::memory_order_seq_cst) != 0) continue;
      if (best == nullptr || g->mask < best->mask) best = g, best_index = i;
    }
    if (best == nullptr) return nullptr;
    // Retire it, then look at `live` again: an insert counts itself before it checks
    // `retired` (both sequentially consistent), so either it sees the mark and goes elsewhere,
    // or this sees its count.
    best->retired.store(true, std::memory_order_seq_cst);
    if (best->live.load(std::memory_order_seq_cst) != 0) {
      best->retired.store(false, std::memory_order_seq_cst);
      continue;  // an insert got in; look for another
    }
    // No block is in it: lookups running through it find nothing, before or after this.
    // Empty each key with a store of its own (a reader sees the old key or an empty one,
    // never a torn one) and keep the pages: dropping them (MADV_DONTNEED) would make the RSS
    // go down and up again at every turn, which a leak check reading RSS takes for growth.
    for (std::uint64_t i = 0; i <= best->mask; ++i) best->slots[i].key.store(kEmpty, std::memory_order_relaxed);
    best->used.store(0, std::memory_order_relaxed);
    best->retired.store(false, std::memory_order_seq_cst);
    newest_.store(best_index, std::memory_order_release);
    return best;
  }
}

LiveTable::Generation* LiveTable::grow(Generation* full) noexcept {
  std::lock_guard lock(grow_mu_);
  Generation* current = newest();
  if (current != full) return current;  // another thread grew it already
  std::uint64_t slots = std::uint64_t{1} << kFirstBits;
  if (current != nullptr) {
    // Mostly tombstones (fewer live blocks than a quarter of what made it "full"): the same
    // size again will do. Otherwise twice the size.
    const std::uint64_t size = current->mask + 1;
    const std::int64_t live = current->live.load(std::memory_order_relaxed);
    slots = live < static_cast<std::int64_t>(size / 8) ? size : size * 2;
    if (Generation* g = reuse_drained(current, slots)) return g;
  }
  const int n = count_.load(std::memory_order_relaxed);
  if (n >= kMaxGenerations) return nullptr;
  void* mem = map_zeroed(sizeof(Generation));
  void* table = map_zeroed(slots * sizeof(Slot));
  if (mem == nullptr || table == nullptr) {
    if (mem != nullptr) munmap(mem, sizeof(Generation));
    if (table != nullptr) munmap(table, slots * sizeof(Slot));
    return nullptr;
  }
  auto* g = new (mem) Generation;
  g->slots = static_cast<Slot*>(table);  // zeroed memory is a table of empty slots
  g->mask = slots - 1;
  g->shift = 64 - static_cast<unsigned>(__builtin_ctzll(slots));
  generations_[n].store(g, std::memory_order_release);
  count_.store(n + 1, std::memory_order_release);
  newest_.store(n, std::memory_order_release);
  return g;
}

void LiveTable::report_claims(Generation* g, std::uint32_t& claims) noexcept {
  const std::uint64_t used = g->used.fetch_add(claims, std::memory_order_relaxed) + claims;
  claims = 0;
  if (used > (g->mask + 1) / 2) grow(g);
}

bool LiveTable::insert(std::uintptr_t address, const LiveBlockInfo& info, std::uint32_t& claims) noexcept {
  Generation* g = newest();
  if (g == nullptr && (g = grow(nullptr)) == nullptr) return false;
  for (;;) {
    g->live.fetch_add(1, std::memory_order_seq_cst);  // before the claim: see reuse_drained()
    if (g->retired.load(std::memory_order_seq_cst)) [[unlikely]] {
      // No longer the newest, and being emptied for reuse: go to the newest.
      g->live.fetch_sub(1, std::memory_order_relaxed);
      Generation* now = newest();
      if (now == nullptr) return false;  // cleared meanwhile
      if (now == g) sched_yield();        // grow() has not switched yet
      g = now;
      continue;
    }
    std::uint64_t i = home(*g, address);
    for (unsigned probe = 0; probe < kMaxProbe; ++probe, i = (i + 1) & g->mask) {
      Slot& slot = g->slots[i];
      std::uint64_t key = slot.key.load(std::memory_order_relaxed);
      if (key > kTombstone) continue;
      if (!slot.key.compare_exchange_strong(key, kBusy, std::memory_order_acq_rel, std::memory_order_relaxed))
        continue;  // another thread took it; keep probing
      slot.fill(info);
      slot.key.store(address, std::memory_order_release);  // fields first: a reader of the key sees them
      if (key == kEmpty && ++claims >= kClaimBatch) report_claims(g, claims);
      return true;
    }
    g->live.fetch_sub(1, std::memory_order_relaxed);
    // A run this long means the generation is too full (or the hash clusters): add a larger one.
    Generation* next = grow(g);
    if (next == nullptr) return false;
    g = next;
  }
}

bool LiveTable::remove_from(Generation* g, std::uintptr_t address, LiveBlockInfo& out) noexcept {
  std::uint64_t i = home(*g, address);
  for (std::uint64_t probe = 0; probe <= g->mask; ++probe, i = (i + 1) & g->mask) {
    Slot& slot = g->slots[i];
    const std::uint64_t key = slot.key.load(std::memory_order_acquire);
    if (key == kEmpty) return false;
    if (key != address) continue;
    out = slot.read();
    slot.key.store(kTombstone, std::memory_order_release);
    g->live.fetch_sub(1, std::memory_order_release);  // after the slot is emptied: see reuse_drained()
    return true;
  }
  return false;
}

bool LiveTable::remove(std::uintptr_t address, LiveBlockInfo& out) noexcept {
  const int newest = newest_.load(std::memory_order_acquire);
  if (newest < 0) return false;
  Generation* first = generations_[newest].load(std::memory_order_acquire);
  if (remove_from(first, address, out)) return true;
  for (int n = count_.load(std::memory_order_acquire) - 1; n >= 0; --n) {
    Generation* g = generations_[n].load(std::memory_order_acquire);
    if (g != first && remove_from(g, address, out)) return true;
  }
  return false;
}

void LiveTable::clear() noexcept {
  std::lock_guard lock(grow_mu_);
  const int n = count_.load(std::memory_order_relaxed);
  for (int i = 0; i < n; ++i) {
    Generation* g = generations_[i].load(std::memory_order_acquire);
    // Dropped pages read back as zeros: empty slots.
    madvise(g->slots, (g->mask + 1) * sizeof(Slot), MADV_DONTNEED);
    g->used.store(0, std::memory_order_relaxed);
    g->live.store(0, std::memory_order_relaxed);
  }
  // The smallest (the first) takes the next run's blocks; the others stay empty until needed.
  newest_.store(n == 0 ? -1 : 0, std::memory_order_release);
}

std::uint64_t LiveTable::mapped_bytes() const noexcept {
  std::uint64_t total = 0;
  for (const auto& slot : generations_)
    if (const Generation* g = slot.load(std::memory_order_acquire)) total += (g->mask + 1) * sizeof(Slot);
  return total;
}

// ---- thread caches -------------------------------------------------------------------------

namespace {

constexpr std::uint64_t kMoving = 1;  // low bit of a cache key: the owner moves the block to the table

// Waits while the owner of a cache slot moves a block to the shared table (a few stores).
void wait_while_moving(const LiveSlot& slot, std::uint64_t moving) noexcept {
  for (unsigned spins = 0; slot.key.load(std::memory_order_acquire) == moving; ++spins) {
    if (spins < 64) {
#if defined(__x86_64__) || defined(__i386__)
      __builtin_ia32_pause();
#endif
    } else {
      sched_yield();  // the owner was preempted in the middle of the move
    }
  }
}

constexpr std::size_t kCacheBytes = (sizeof(ThreadCache) + 4095) & ~std::size_t{4095};

}  // namespace

LiveBlocks::~LiveBlocks() {
  // Only caches in the pool are known to be unused.
  while (ThreadCache* c = pool_) {
    pool_ = c->next_free;
    munmap(c, kCacheBytes);
  }
}

bool LiveBlocks::move_to_table(LiveSlot& slot, std::uint64_t key, std::uint32_t& claims) noexcept {
  // Mark the block as moving: a thread freeing it now waits until it is in the table. A
  // failed exchange means another thread took (freed) it meanwhile: the slot is empty.
  if (!slot.key.compare_exchange_strong(key, key | kMoving, std::memory_order_acq_rel, std::memory_order_relaxed))
    return true;
  if (!table_.insert(static_cast<std::uintptr_t>(key), slot.read(), claims)) {
    slot.key.store(key, std::memory_order_release);  // no memory: it stays
    return false;
  }
  slot.key.store(LiveSlot::kEmpty, std::memory_order_release);  // after the insert: see take()
  return true;
}

bool LiveBlocks::put(ThreadCache& cache, std::uintptr_t address, const LiveBlockInfo& info,
                     std::uint32_t& claims) noexcept {
  LiveSlot* slot = cache.empty_slot(address);
  if (slot == nullptr) {
    // Both slots of the set are taken: displace one, chosen by an address bit (which of the
    // two is older is not known; either way the choice does not depend on the history).
    slot = cache.set(address) + ((address >> 4) & 1);
    const std::uint64_t key = slot->key.load(std::memory_order_relaxed);
    if (key != LiveSlot::kEmpty && !move_to_table(*slot, key, claims)) return table_.insert(address, info, claims);
  }
  slot->fill(info);
  slot->key.store(address, std::memory_order_release);
  return true;
}

bool LiveBlocks::claim(ThreadCache& cache, std::uintptr_t address, LiveBlockInfo& out) noexcept {
  LiveSlot* set = cache.set(address);
  for (std::size_t way = 0; way < ThreadCache::kWays; ++way) {
    LiveSlot& slot = set[way];
    std::uint64_t key = slot.key.load(std::memory_order_acquire);
    if (key == address) {
      // Fields are stable while the key is this block's: the owner rewrites them only after
      // emptying the slot, and only a free of this block (ours) would empty it.
      const LiveBlockInfo info = slot.read();
      if (slot.key.compare_exchange_strong(key, LiveSlot::kEmpty, std::memory_order_acq_rel,
                                           std::memory_order_acquire)) {
        out = info;
        return true;
      }
      // The owner started moving it to the table.
    }
    // A block never changes slot inside a cache: if it is being moved out of this slot, wait
    // until it is in the table (take() looks there again); otherwise it is not here.
    if ((key | kMoving) == (address | kMoving)) {
      wait_while_moving(slot, address | kMoving);
      return false;
    }
  }
  return false;
}

bool LiveBlocks::take(const ThreadCache* own, std::uintptr_t address, LiveBlockInfo& out) noexcept {
  if (table_.remove(address, out)) return true;
  const std::size_t end = cache_end_.load(std::memory_order_acquire);
  for (std::size_t i = 0; i < end; ++i) {
    ThreadCache* c = caches_[i].load(std::memory_order_acquire);
    if (c != nullptr && c != own && claim(*c, address, out)) return true;
  }
  // Moved to the table after the first look: the slot's later key, which claim() read with
  // acquire, was stored after the block was published there.
  return table_.remove(address, out);
}

bool LiveBlocks::flush(ThreadCache& cache) noexcept {
  bool all = true;
  std::uint32_t claims = 0;
  for (LiveSlot& slot : cache.slots) {
    const std::uint64_t key = slot.key.load(std::memory_order_relaxed);
    if (key != LiveSlot::kEmpty && !move_to_table(slot, key, claims)) all = false;
  }
  return all;
}

ThreadCache* LiveBlocks::new_cache() noexcept {
  {
    std::lock_guard lock(mu_);
    if (ThreadCache* c = pool_) {
      pool_ = c->next_free;
      c->next_free = nullptr;
      return c;
    }
  }
  void* mem = map_zeroed(kCacheBytes);
  if (mem == nullptr) return nullptr;
  std::lock_guard lock(mu_);
  ++mapped_caches_;
  return new (mem) ThreadCache;  // zeroed memory: empty slots
}

void LiveBlocks::recycle(ThreadCache* cache) noexcept {
  if (cache == nullptr) return;
  std::lock_guard lock(mu_);
  cache->next_free = pool_;
  pool_ = cache;
}

int LiveBlocks::enlist(ThreadCache* cache) noexcept {
  std::lock_guard lock(mu_);
  const std::size_t end = cache_end_.load(std::memory_order_relaxed);
  for (std::size_t i = 0; i < end; ++i) {
    if (caches_[i].load(std::memory_order_relaxed) == nullptr) {
      caches_[i].store(cache, std::memory_order_release);
      return static_cast<int>(i);
    }
  }
  if (end == kMaxCaches) return -1;
  caches_[end].store(cache, std::memory_order_release);
  cache_end_.store(end + 1, std::memory_order_release);
  return static_cast<int>(end);
}

void LiveBlocks::delist(int place) noexcept {
  if (place < 0 || static_cast<std::size_t>(place) >= kMaxCaches) return;
  std::lock_guard lock(mu_);
  caches_[place].store(nullptr, std::memory_order_release);
}

void LiveBlocks::clear() noexcept {
  table_.clear();
  std::lock_guard lock(mu_);
  for (auto& c : caches_) c.store(nullptr, std::memory_order_release);
  cache_end_.store(0, std::memory_order_release);
}

std::uint64_t LiveBlocks::mapped_bytes() const noexcept {
  std::lock_guard lock(mu_);
  return table_.mapped_bytes() + mapped_caches_ * kCacheBytes;
}

}  // namespace nnprof::collect
