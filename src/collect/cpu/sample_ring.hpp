// A single-producer, single-consumer ring of variable-length records in 8-byte words. The
// producer is the profiling-signal handler of one thread, so writing must be
// async-signal-safe: no locks, no allocation, no system call. The memory is mapped and
// pre-faulted up front, so a sample never takes a page fault either.
#pragma once

#include <sys/mman.h>

#include <atomic>
#include <cstddef>
#include <cstdint>

namespace nnprof::collect {

class SampleRing {
 public:
  SampleRing() = default;
  SampleRing(const SampleRing&) = delete;
  SampleRing& operator=(const SampleRing&) = delete;
  ~SampleRing() { release(); }

  /// Maps a ring of at least `min_words` words (rounded up to a power of two). False when no
  /// memory could be mapped. Not while a producer or consumer runs.
  bool init(std::size_t min_words) noexcept {
    std::size_t words = 1024;
    while (words < min_words) words *= 2;
    if (data_ != nullptr && words <= capacity_) {
      head_.store(0, std::memory_order_relaxed);
      tail_.store(0, std::memory_order_relaxed);
      return true;
    }
    release();
    void* p = mmap(nullptr, words * 8, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_POPULATE, -1, 0);
    if (p == MAP_FAILED) return false;
    data_ = static_cast<std::uint64_t*>(p);
    capacity_ = words;
    head_.store(0, std::memory_order_relaxed);
    tail_.store(0, std::memory_order_relaxed);
    return true;
  }

  void release() noexcept {
    if (data_ != nullptr) munmap(data_, capacity_ * 8);
    data_ = nullptr;
    capacity_ = 0;
  }

  /// Producer: room for a record of `words` words (header included), or nullptr when the
  /// ring is full. Finish with commit(words).
  std::uint64_t* begin_write(std::uint32_t words) noexcept {
    if (data_ == nullptr || words == 0 || words > capacity_ / 2) return nullptr;
    std::uint64_t head = head_.load(std::memory_order_relaxed);
    const std::uint64_t tail = tail_.load(std::memory_order_acquire);
    std::size_t at = head & (capacity_ - 1);
    if (at + words > capacity_) {
      // The record would wrap: pad to the end, then start over at the front.
      const std::size_t pad = capacity_ - at;
      if (head + pad + words - tail > capacity_) return nullptr;
      data_[at] = header(static_cast<std::uint32_t>(pad), kPad);
      head += pad;
      head_.store(head, std::memory_order_release);
      at = 0;
    }
    if (head + words - tail > capacity_) return nullptr;
    return data_ + at;
  }
  void commit(std::uint32_t words) noexcept {
    head_.store(head_.load(std::memory_order_relaxed) + words, std::memory_order_release);
  }

  /// Consumer (one at a time): calls f(record, words) for every committed record, header
  /// included, and frees their space.
  template <class F>
  void drain(F&& f) {
    if (data_ == nullptr) return;
    const std::uint64_t head = head_.load(std::memory_order_acquire);
    std::uint64_t tail = tail_.load(std::memory_order_relaxed);
    while (tail < head) {
      const std::uint64_t* rec = data_ + (tail & (capacity_ - 1));
      const auto words = static_cast<std::uint32_t>(rec[0] >> 32);
      if (words == 0) break;  // cannot happen with a correct producer; never spin on it
      if ((rec[0] & 0xFF) != kPad) f(rec, words);
      tail += words;
    }
    tail_.store(tail, std::memory_order_release);
  }

  static constexpr std::uint64_t header(std::uint32_t words, std::uint8_t kind, std::uint32_t extra = 0) noexcept {
    return (std::uint64_t{words} << 32) | (std::uint64_t{extra & 0xFFFFFF} << 8) | kind;
  }
  static constexpr std::uint8_t kPad = 0, kSample = 1;

 private:
  std::uint64_t* data_ = nullptr;
  std::size_t capacity_ = 0;
  alignas(64) std::atomic<std::uint64_t> head_{0};  // producer
  alignas(64) std::atomic<std::uint64_t> tail_{0};  // consumer
};

}  // namespace nnprof::collect
