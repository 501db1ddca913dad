// An allocation-heavy workload for whole-program comparisons of heap profilers
// (bench/compare_heaptrack.sh): plain C++, no nnprof. Each of THREADS threads (default 2)
// builds and destroys std::map<std::string, std::vector<int>> of 1,000 entries with
// heap-allocated keys (longer than the small-string buffer) and small vectors that grow by
// push_back, plus a few short-lived strings per entry, ROUNDS times (default 10,000: about 3 s here).
//
//   nnprof_alloc_heavy [ROUNDS [THREADS]]
//
// It prints its own loop time (steady_clock, threads started to threads joined), so that a
// tool's start-up and exit work can be told from its cost per allocation.
#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <string>
#include <thread>
#include <vector>

namespace {

constexpr int kEntries = 1000;

struct Result {
  std::uint64_t checksum = 0;
};

Result work(int rounds, unsigned seed) {
  Result r;
  std::uint64_t rng = 0x9E3779B97F4A7C15ull ^ seed;
  auto next = [&rng] {
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return rng;
  };
  for (int round = 0; round < rounds; ++round) {
    std::map<std::string, std::vector<int>> m;
    for (int i = 0; i < kEntries; ++i) {
      // 24+ characters: beyond libstdc++'s 15-byte small-string buffer, so one allocation.
      std::string key = "key/" + std::to_string(next() % 100000) + "/entry-" + std::to_string(i);
      std::vector<int> values;
      const int n = 1 + static_cast<int>(next() % 12);
      for (int k = 0; k < n; ++k) values.push_back(k * i);  // growth: 1, 2, 4, 8, 16 ints
      auto [it, inserted] = m.emplace(std::move(key), std::move(values));
      // A short-lived temporary, as parsing and formatting code makes them.
      std::string label = it->first + ":" + std::to_string(it->second.size());
      r.checksum += label.size() + (inserted ? 1 : 0);
    }
    // Read some, erase half (frees interleaved with live data), then destroy the rest.
    for (auto it = m.begin(); it != m.end();) {
      r.checksum += it->second.empty() ? 0 : static_cast<std::uint64_t>(it->second.back());
      it = (next() & 1) ? m.erase(it) : std::next(it);
    }
  }
  return r;
}

}  // namespace

int main(int argc, char** argv) {
  const int rounds = argc > 1 ? std::max(1, std::atoi(argv[1])) : 10000;
  const int threads = argc > 2 ? std::max(1, std::atoi(argv[2])) : 2;
  std::vector<Result> results(static_cast<std::size_t>(threads));
  std::vector<std::thread> pool;
  const auto begin = std::chrono::steady_clock::now();
  for (int t = 0; t < threads; ++t)
    pool.emplace_back([&results, rounds, t] { results[static_cast<std::size_t>(t)] = work(rounds, static_cast<unsigned>(t + 1)); });
  for (auto& th : pool) th.join();
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - begin).count();
  Result total;
  for (const Result& r : results) {
    total.checksum += r.checksum;
  }
  std::printf("loop_seconds %.3f threads %d rounds %d checksum %llu\n", seconds, threads, rounds,
              static_cast<unsigned long long>(total.checksum));
  return 0;
}
