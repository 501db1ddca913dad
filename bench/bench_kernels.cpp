// The transformer's numeric kernels (issue 7), per instruction set: the blocked matmul against
// the machine's one-core fp32 peak (from `nnprof machine`, when cached), the m = 1 GEMV of
// decoding in GB/s of weights streamed, the attention scores of one query against a KV
// cache, softmax and GELU. Run by hand:
//   nnprof_bench --benchmark_filter='Matmul|Gemv|Softmax|Gelu' --benchmark_min_time=0.2s
#include <benchmark/benchmark.h>

#include <cstdint>
#include <cstring>
#include <optional>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "kernels.hpp"
#include "nnprof/error.hpp"
#include "nnprof/roofline.hpp"

namespace {

namespace k = nnprof::transformer::kernels;
using k::Isa;

// Short names: the ISA's own names contain '+', which a --benchmark_filter regex reads as an operator.
const char* short_name(Isa isa) {
  switch (isa) {
    case Isa::Scalar: return "scalar";
    case Isa::Avx2: return "avx2";
    case Isa::Avx512: return "avx512";
  }
  return "unknown";
}

std::vector<Isa> runnable_isas() {
  std::vector<Isa> out;
  for (Isa isa : {Isa::Scalar, Isa::Avx2, Isa::Avx512})
    if (static_cast<int>(isa) <= static_cast<int>(k::best_isa())) out.push_back(isa);
  return out;
}

std::vector<float> random_floats(std::size_t n, unsigned seed, float lo = -1.0f, float hi = 1.0f) {
  std::mt19937 gen(seed);
  std::uniform_real_distribution<float> dist(lo, hi);
  std::vector<float> v(n);
  for (float& x : v) x = dist(gen);
  return v;
}

// One core's fp32 peak in FLOP/s, from the cached `nnprof machine` result; 0 when none.
double one_core_peak() {
  static const double peak = [] {
    try {
      const std::optional<nnprof::MachinePeaks> p = nnprof::cached_machine_peaks();
      return p ? p->fp32_flops_one_core : 0.0;
    } catch (const nnprof::Error&) {
      return 0.0;
    }
  }();
  return peak;
}

void set_flops_counters(benchmark::State& state, double flops_per_iteration) {
  state.counters["GFLOP/s"] = benchmark::Counter(flops_per_iteration / 1e9, benchmark::Counter::kIsIterationInvariantRate);
  // 100 · (FLOP/s) / peak, as a rate counter too: Google Benchmark divides by the time itself.
  if (const double peak = one_core_peak(); peak > 0.0)
    state.counters["pct_of_peak"] =
        benchmark::Counter(100.0 * flops_per_iteration / peak, benchmark::Counter::kIsIterationInvariantRate);
}

// C = A·B, n×n×n.
void bm_matmul(benchmark::State& state, Isa isa, int n) {
  const auto a = random_floats(static_cast<std::size_t>(n) * n, 1);
  const auto b = random_floats(static_cast<std::size_t>(n) * n, 2);
  std::vector<float> c(static_cast<std::size_t>(n) * n);
  for (auto _ : state) {
    k::matmul(isa, n, n, n, a.data(), n, b.data(), n, c.data(), n);
    benchmark::DoNotOptimize(c.data());
    benchmark::ClobberMemory();
  }
  set_flops_counters(state, 2.0 * n * n * n);
}

// y = x·W, W k×n: every weight read once per token, so the figure that matters is GB/s.
void bm_gemv(benchmark::State& state, Isa isa, int kk, int n) {
  const auto x = random_floats(static_cast<std::size_t>(kk), 3);
  const auto w = random_floats(static_cast<std::size_t>(kk) * n, 4);
  std::vector<float> y(static_cast<std::size_t>(n));
  for (auto _ : state) {
    k::matmul(isa, 1, n, kk, x.data(), kk, w.data(), n, y.data(), n);
    benchmark::DoNotOptimize(y.data());
    benchmark::ClobberMemory();
  }
  state.SetBytesProcessed(static_cast<std::int64_t>(state.iterations()) * kk * n * 4);
  set_flops_counters(state, 2.0 * kk * n);
}

// Scores of one query against `n` cached keys of a 32-wide head in a 4-head cache.
void bm_scores(benchmark::State& state, Isa isa, int n) {
  constexpr int kHead = 32, kHeads = 4;
  const auto q = random_floats(kHead, 5);
  const auto cache = random_floats(static_cast<std::size_t>(n) * kHead * kHeads, 6);
  std::vector<float> s(static_cast<std::size_t>(n));
  for (auto _ : state) {
    k::matmul_bt(isa, 1, n, kHead, q.data(), kHead, cache.data(), kHead * kHeads, s.data(), n);
    benchmark::DoNotOptimize(s.data());
    benchmark::ClobberMemory();
  }
  state.SetBytesProcessed(static_cast<std::int64_t>(state.iterations()) * n * kHead * 4);
}

// In-place kernels run on their own output; the input is restored every 32 calls (a copy
// amortised to ~3%) so that repeated GELU never drifts into denormals.
template <void (*Kernel)(Isa, float*, int)>
void bm_elementwise(benchmark::State& state, Isa isa, int n) {
  const auto src = random_floats(static_cast<std::size_t>(n), 7, -5.0f, 5.0f);
  std::vector<float> x = src;
  int since_restore = 0;
  for (auto _ : state) {
    if (++since_restore == 32) {
      std::memcpy(x.data(), src.data(), src.size() * sizeof(float));
      since_restore = 0;
    }
    Kernel(isa, x.data(), n);
    benchmark::DoNotOptimize(x.data());
    benchmark::ClobberMemory();
  }
  state.SetItemsProcessed(static_cast<std::int64_t>(state.iterations()) * n);
  state.SetBytesProcessed(static_cast<std::int64_t>(state.iterations()) * n * 8);  // read + write
}

void softmax_kernel(Isa isa, float* x, int n) { k::softmax(isa, x, n); }
void gelu_kernel(Isa isa, float* x, int n) { k::gelu(isa, x, n); }

const bool registered = [] {
  for (Isa isa : runnable_isas()) {
    const std::string name = short_name(isa);
    for (int n : {128, 256, 512})
      benchmark::RegisterBenchmark(("BM_Matmul/" + name + "/" + std::to_string(n)).c_str(),
                                   [isa, n](benchmark::State& s) { bm_matmul(s, isa, n); })
          ->Unit(benchmark::kMicrosecond);
    for (auto [kk, n] : {std::pair{256, 768}, std::pair{512, 2048}})
      benchmark::RegisterBenchmark(("BM_Gemv/" + name + "/1x" + std::to_string(kk) + "x" + std::to_string(n)).c_str(),
                                   [isa, kk, n](benchmark::State& s) { bm_gemv(s, isa, kk, n); })
          ->Unit(benchmark::kMicrosecond);
    benchmark::RegisterBenchmark(("BM_Scores/" + name + "/1x512x32").c_str(),
                                 [isa](benchmark::State& s) { bm_scores(s, isa, 512); })
        ->Unit(benchmark::kMicrosecond);
    for (int n : {64, 1024, 16384}) {
      benchmark::RegisterBenchmark(("BM_Softmax/" + name + "/" + std::to_string(n)).c_str(),
                                   [isa, n](benchmark::State& s) { bm_elementwise<softmax_kernel>(s, isa, n); });
      benchmark::RegisterBenchmark(("BM_Gelu/" + name + "/" + std::to_string(n)).c_str(),
                                   [isa, n](benchmark::State& s) { bm_elementwise<gelu_kernel>(s, isa, n); });
    }
  }
  return true;
}();

}  // namespace
