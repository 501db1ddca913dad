// A single-producer single-consumer ring of chunk pointers: how full chunks leave a thread
// and fresh ones reach it without a lock.
#pragma once

#include <atomic>
#include <bit>
#include <cstddef>
#include <memory>

#include "nnprof/detail/thread_state.hpp"

namespace nnprof::detail {

class ChunkRing {
 public:
  /// Room for `capacity` chunks, rounded up to a power of two. The slots are left
  /// uninitialised, so a large ring costs address space only until chunks pass through it.
  explicit ChunkRing(std::size_t capacity)
      : mask_(std::bit_ceil(capacity < 2 ? std::size_t{2} : capacity) - 1), slots_(new Chunk*[mask_ + 1]) {}
  ChunkRing(const ChunkRing&) = delete;
  ChunkRing& operator=(const ChunkRing&) = delete;

  /// Producer side. False when full.
  bool push(Chunk* c) noexcept {
    const std::size_t head = head_.load(std::memory_order_relaxed);
    if (head - tail_.load(std::memory_order_acquire) > mask_) return false;
    slots_[head & mask_] = c;
    head_.store(head + 1, std::memory_order_release);
    return true;
  }
  /// Consumer side. nullptr when empty.
  Chunk* pop() noexcept {
    const std::size_t tail = tail_.load(std::memory_order_relaxed);
    if (tail == head_.load(std::memory_order_acquire)) return nullptr;
    Chunk* c = slots_[tail & mask_];
    tail_.store(tail + 1, std::memory_order_release);
    return c;
  }
  /// Approximate when called concurrently with push/pop.
  [[nodiscard]] std::size_t size() const noexcept {
    return head_.load(std::memory_order_acquire) - tail_.load(std::memory_order_acquire);
  }
  [[nodiscard]] std::size_t capacity() const noexcept { return mask_ + 1; }

 private:
  // Read-only after construction, then each index on its own cache line.
  const std::size_t mask_;
  const std::unique_ptr<Chunk*[]> slots_;
  alignas(64) std::atomic<std::size_t> head_{0};
  alignas(64) std::atomic<std::size_t> tail_{0};
};

}  // namespace nnprof::detail
