#include "collect/heap/live_table.hpp"

#include <sys/mman.h>

#include <new>

namespace nnprof::collect {

namespace {

// Generations are mapped directly: the table must not allocate through the malloc it tracks.
void* map_zeroed(std::size_t bytes) noexcept {
  void* p = mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  return p == MAP_FAILED ? nullptr : p;
}

std::uint64_t pack_caller(const LiveBlockInfo& info) noexcept {
  return (static_cast<std::uint64_t>(info.caller) & ((std::uint64_t{1} << 48) - 1)) |
         (static_cast<std::uint64_t>(info.stack) << 48);
}

}  // namespace

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

LiveTable::Generation* LiveTable::grow(Generation* full) noexcept {
  std::lock_guard lock(grow_mu_);
  const int n = newest_.load(std::memory_order_acquire);
  Generation* current = n < 0 ? nullptr : generations_[n].load(std::memory_order_acquire);
  if (current != full) return current;  // another thread grew it already
  if (n + 1 >= kMaxGenerations) return nullptr;
  // A generation that clear() emptied is reused rather than mapped again.
  Generation* g = generations_[n + 1].load(std::memory_order_acquire);
  if (g == nullptr) {
    const unsigned bits = current == nullptr ? kFirstBits : 64 - current->shift + 1;
    const std::uint64_t slots = std::uint64_t{1} << bits;
    void* mem = map_zeroed(sizeof(Generation));
    void* table = map_zeroed(slots * sizeof(Slot));
    if (mem == nullptr || table == nullptr) {
      if (mem != nullptr) munmap(mem, sizeof(Generation));
      if (table != nullptr) munmap(table, slots * sizeof(Slot));
      return nullptr;
    }
    g = new (mem) Generation;
    g->slots = static_cast<Slot*>(table);  // zeroed memory is a table of empty slots
    g->mask = slots - 1;
    g->shift = 64 - bits;
    generations_[n + 1].store(g, std::memory_order_release);
  }
  newest_.store(n + 1, std::memory_order_release);
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
    std::uint64_t i = home(*g, address);
    for (unsigned probe = 0; probe < kMaxProbe; ++probe, i = (i + 1) & g->mask) {
      Slot& slot = g->slots[i];
      std::uint64_t key = slot.key.load(std::memory_order_relaxed);
      if (key > kTombstone) continue;
      if (!slot.key.compare_exchange_strong(key, address, std::memory_order_acq_rel, std::memory_order_relaxed))
        continue;  // another thread took it; keep probing
      slot.size.store(info.size, std::memory_order_relaxed);
      slot.node.store(info.node, std::memory_order_relaxed);
      slot.caller_stack.store(pack_caller(info), std::memory_order_relaxed);
      if (key == kEmpty && ++claims >= kClaimBatch) report_claims(g, claims);
      return true;
    }
    // A run this long means the generation is too full (or the hash clusters): add a larger one.
    Generation* next = grow(g);
    if (next == nullptr) return false;
    g = next;
  }
}

bool LiveTable::remove(std::uintptr_t address, LiveBlockInfo& out) noexcept {
  for (int n = newest_.load(std::memory_order_acquire); n >= 0; --n) {
    Generation* g = generations_[n].load(std::memory_order_acquire);
    std::uint64_t i = home(*g, address);
    for (std::uint64_t probe = 0; probe <= g->mask; ++probe, i = (i + 1) & g->mask) {
      Slot& slot = g->slots[i];
      const std::uint64_t key = slot.key.load(std::memory_order_acquire);
      if (key == kEmpty) break;
      if (key != address) continue;
      out.size = slot.size.load(std::memory_order_relaxed);
      out.node = slot.node.load(std::memory_order_relaxed);
      const std::uint64_t cs = slot.caller_stack.load(std::memory_order_relaxed);
      out.caller = static_cast<std::uintptr_t>(cs & ((std::uint64_t{1} << 48) - 1));
      out.stack = static_cast<std::uint32_t>(cs >> 48);
      slot.key.store(kTombstone, std::memory_order_release);
      return true;
    }
  }
  return false;
}

void LiveTable::clear() noexcept {
  std::lock_guard lock(grow_mu_);
  for (auto& slot : generations_) {
    Generation* g = slot.load(std::memory_order_acquire);
    if (g == nullptr) continue;
    // Dropped pages read back as zeros: empty slots.
    madvise(g->slots, (g->mask + 1) * sizeof(Slot), MADV_DONTNEED);
    g->used.store(0, std::memory_order_relaxed);
  }
  newest_.store(generations_[0].load(std::memory_order_relaxed) == nullptr ? -1 : 0, std::memory_order_release);
}

std::uint64_t LiveTable::mapped_bytes() const noexcept {
  std::uint64_t total = 0;
  for (const auto& slot : generations_)
    if (const Generation* g = slot.load(std::memory_order_acquire)) total += (g->mask + 1) * sizeof(Slot);
  return total;
}

}  // namespace nnprof::collect
