// The allocation pattern of issue 21 (goal 3) for whole-program heap-profiler comparisons
// (bench/compare_heaptrack.sh --ring): plain C++, no nnprof. Each of THREADS threads (default 1)
// runs ROUNDS iterations (default 5,000,000: about 0.8 s here) of:
//   - a block of a random size, 16-4,096 bytes (xorshift from a fixed seed), that replaces the
//     oldest block of a 1,024-slot ring of live blocks (the oldest is freed): live blocks are
//     many, of mixed sizes and scattered over the heap, and each lives 1,024 allocations;
//   - every 8th iteration, a std::vector<int> grown by push_back to 1-64 elements (its
//     reallocations free the previous buffer) and a std::string built by appends past the
//     small-string buffer, both destroyed at the end of the iteration.
// The ring is freed at the end, so no block leaks. It prints its own loop time (steady_clock,
// threads started to threads joined), so that a tool's start-up and exit work can be told
// from its cost per allocation, and the process CPU time over the same span (every thread,
// a tool's own included), which load from other processes on the machine does not inflate.
//
//   nnprof_alloc_ring [ROUNDS [THREADS]]
#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <string>
#include <thread>
#include <vector>

namespace {

constexpr std::size_t kRing = 1024;
constexpr std::size_t kMinSize = 16, kMaxSize = 4096;

std::uint64_t work(int rounds, unsigned seed) {
  std::uint64_t rng = 0x9E3779B97F4A7C15ull ^ (seed * 0xBF58476D1CE4E5B9ull);
  auto next = [&rng] {
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return rng;
  };
  std::uint64_t checksum = 0;
  // The ring itself is one allocation made before the loop.
  std::vector<unsigned char*> ring(kRing, nullptr);
  std::size_t oldest = 0;
  for (int round = 0; round < rounds; ++round) {
    const std::size_t size = kMinSize + static_cast<std::size_t>(next() % (kMaxSize - kMinSize + 1));
    auto* block = static_cast<unsigned char*>(std::malloc(size));
    if (block == nullptr) std::abort();
    block[0] = static_cast<unsigned char>(round);  // touch it, as a program would
    block[size - 1] = static_cast<unsigned char>(size);
    if (unsigned char* old = ring[oldest]) {
      checksum += old[0];
      std::free(old);
    }
    ring[oldest] = block;
    oldest = (oldest + 1) % kRing;
    if ((round & 7) == 0) {
      std::vector<int> values;
      const int n = 1 + static_cast<int>(next() % 64);
      for (int k = 0; k < n; ++k) values.push_back(k ^ round);  // growth: 1, 2, 4, ... 64 ints
      std::string text = "round ";
      for (int k = 0; k < 4; ++k) text += std::to_string(next() % 1000000) + ", ";  // past 15 bytes
      checksum += values.back() + text.size();
    }
  }
  for (unsigned char* block : ring) std::free(block);
  return checksum;
}

}  // namespace

int main(int argc, char** argv) {
  const int rounds = argc > 1 ? std::max(1, std::atoi(argv[1])) : 5000000;
  const int threads = argc > 2 ? std::max(1, std::atoi(argv[2])) : 1;
  std::vector<std::uint64_t> results(static_cast<std::size_t>(threads));
  std::vector<std::thread> pool;
  const auto process_cpu = [] {
    timespec ts{};
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) * 1e-9;
  };
  const double cpu_begin = process_cpu();
  const auto begin = std::chrono::steady_clock::now();
  for (int t = 0; t < threads; ++t)
    pool.emplace_back([&results, rounds, t] { results[static_cast<std::size_t>(t)] = work(rounds, static_cast<unsigned>(t + 1)); });
  for (auto& th : pool) th.join();
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - begin).count();
  const double cpu_seconds = process_cpu() - cpu_begin;
  std::uint64_t total = 0;
  for (const std::uint64_t r : results) total += r;
  std::printf("loop_seconds %.3f threads %d rounds %d checksum %llu loop_cpu_seconds %.3f\n", seconds, threads, rounds,
              static_cast<unsigned long long>(total), cpu_seconds);
  return 0;
}
