// A single-producer single-consumer ring of chunk pointers: how full chunks leave a thread
// and fresh ones reach it without a lock.
#pragma once

#include <array>
#include <atomic>
#include <cstddef>

#include "nnprof/detail/thread_state.hpp"

namespace nnprof::detail {

template <std::size_t N>
class ChunkRing {
  static_assert((N & (N - 1)) == 0, "capacity must be a power of two");

 public:
  /// Producer side. False when full.
  bool push(Chunk* c) noexcept {
    const std::size_t head = head_.load(std::memory_order_relaxed);
    if (head - tail_.load(std::memory_order_acquire) == N) return false;
    slots_[head & (N - 1)] = c;
    head_.store(head + 1, std::memory_order_release);
    return true;
  }
  /// Consumer side. nullptr when empty.
  Chunk* pop() noexcept {
    const std::size_t tail = tail_.load(std::memory_order_relaxed);
    if (tail == head_.load(std::memory_order_acquire)) return nullptr;
    Chunk* c = slots_[tail & (N - 1)];
    tail_.store(tail + 1, std::memory_order_release);
    return c;
  }
  /// Approximate when called concurrently with push/pop.
  [[nodiscard]] std::size_t size() const noexcept {
    return head_.load(std::memory_order_acquire) - tail_.load(std::memory_order_acquire);
  }
  static constexpr std::size_t capacity() noexcept { return N; }

 private:
  alignas(64) std::atomic<std::size_t> head_{0};
  alignas(64) std::atomic<std::size_t> tail_{0};
  std::array<Chunk*, N> slots_{};
};

}  // namespace nnprof::detail
