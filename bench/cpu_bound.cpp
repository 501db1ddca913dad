// A plain compute-bound program (no nnprof) for whole-program comparisons of CPU profilers:
// bench/compare_cpu_profilers.sh. Six functions do 30/25/20/12/8/5% of the work, and
// the program prints the time of its own loop, which excludes profiler start-up and the
// writing of the profile.
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>

namespace {
volatile std::uint64_t g_sink;
}

// Every function runs the same dependent multiply-add chain (constants differ), so that time
// and instruction counts are proportional and callgrind's ranking is the true one.
#define NNPROF_CHAIN(name, a, c)                                       \
  __attribute__((noinline)) void name(std::uint64_t n) {               \
    std::uint64_t x = 1;                                               \
    for (std::uint64_t i = 0; i < n; ++i) x = x * (a) + (c);           \
    g_sink = x;                                                        \
  }
extern "C" {
NNPROF_CHAIN(lcg_chain, 6364136223846793005ull, 1442695040888963407ull)
NNPROF_CHAIN(knuth_chain, 2862933555777941757ull, 3037000493ull)
NNPROF_CHAIN(mmix_chain, 6364136223846793005ull, 1ull)
NNPROF_CHAIN(pcg_chain, 6364136223846793005ull, 1442695040888963409ull)
NNPROF_CHAIN(numrec_chain, 1664525ull, 1013904223ull)
NNPROF_CHAIN(borland_chain, 22695477ull, 1ull)
}

int main(int argc, char** argv) {
  const long rounds = argc > 1 ? std::atol(argv[1]) : 200;
  const auto start = std::chrono::steady_clock::now();
  for (long r = 0; r < rounds; ++r) {
    lcg_chain(300'000);
    knuth_chain(250'000);
    mmix_chain(200'000);
    pcg_chain(120'000);
    numrec_chain(80'000);
    borland_chain(50'000);
  }
  const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  std::printf("loop_seconds %.4f\n", s);
  return 0;
}
