// Measures the roofs of this machine: FMA throughput on every thread and on one (fp32 and
// fp64, with the widest vector code the CPU runs, chosen at run time), and memory bandwidth
// with a STREAM triad (a[i] = b[i] + s·c[i], 24 bytes per element as STREAM counts them).
#include <immintrin.h>

#include <algorithm>
#include <atomic>
#include <barrier>
#include <chrono>
#include <cstring>
#include <ctime>
#include <memory>
#include <new>
#include <thread>
#include <vector>

#include <fmt/format.h>

#include "collect/machine/measure_peaks.hpp"

#include "collect/host_info.hpp"
#include "nnprof/error.hpp"

namespace nnprof::collect {

namespace {

using Clock = std::chrono::steady_clock;

// Twelve independent FMA chains: enough to cover the FMA latency (4–5 cycles) on two FMA
// pipes. x ← x·m + c converges to c / (1 − m) and never becomes denormal or infinite.
// The empty asm keeps each chain in a register and opaque to the optimiser. (Before, the
// chains were an array with a "memory" clobber, which kept them on the stack: one store per
// FMA capped the loop at half the FMA throughput, and a tuned matmul measured 230% of the
// "peak".)
constexpr int kChains = 12;
constexpr std::uint64_t kItersPerCall = 1 << 14;

template <class T>
T scalar_fma_loop(std::uint64_t iters) {
  T x[kChains];
  for (int j = 0; j < kChains; ++j) x[j] = static_cast<T>(1 + j);
  const T m = static_cast<T>(0.999999), c = static_cast<T>(1e-6);
  for (std::uint64_t i = 0; i < iters; ++i)
    for (int j = 0; j < kChains; ++j) x[j] = x[j] * m + c;
  T sum = 0;
  for (int j = 0; j < kChains; ++j) sum += x[j];
  return sum;
}

#define NNPROF_FMA_STEP(fmadd, x) \
  x = fmadd(x, m, c);               \
  asm volatile("" : "+v"(x))
#define NNPROF_FMA_LOOP(name, isa_target, vec, set1, fmadd, add, lanes_of, scalar)                          \
  __attribute__((target(isa_target))) double name(std::uint64_t iters) {                                   \
    /* Twelve named variables, not an array: GCC keeps an array of vectors on the stack. */               \
    vec x0 = set1(1), x1 = set1(2), x2 = set1(3), x3 = set1(4), x4 = set1(5), x5 = set1(6);                 \
    vec x6 = set1(7), x7 = set1(8), x8 = set1(9), x9 = set1(10), x10 = set1(11), x11 = set1(12);            \
    const vec m = set1(static_cast<scalar>(0.999999)), c = set1(static_cast<scalar>(1e-6));                \
    for (std::uint64_t i = 0; i < iters; ++i) {                                                             \
      NNPROF_FMA_STEP(fmadd, x0); NNPROF_FMA_STEP(fmadd, x1); NNPROF_FMA_STEP(fmadd, x2); NNPROF_FMA_STEP(fmadd, x3);                   \
      NNPROF_FMA_STEP(fmadd, x4); NNPROF_FMA_STEP(fmadd, x5); NNPROF_FMA_STEP(fmadd, x6); NNPROF_FMA_STEP(fmadd, x7);                   \
      NNPROF_FMA_STEP(fmadd, x8); NNPROF_FMA_STEP(fmadd, x9); NNPROF_FMA_STEP(fmadd, x10); NNPROF_FMA_STEP(fmadd, x11);                 \
    }                                                                                                       \
    const vec s = add(add(add(add(x0, x1), add(x2, x3)), add(add(x4, x5), add(x6, x7))),                   \
                      add(add(x8, x9), add(x10, x11)));                                                     \
    alignas(64) scalar out[lanes_of];                                                                       \
    std::memcpy(out, &s, sizeof s);                                                                         \
    double sum = 0;                                                                                         \
    for (int l = 0; l < lanes_of; ++l) sum += out[l];                                                       \
    return sum;                                                                                             \
  }

NNPROF_FMA_LOOP(fma_f32_avx2, "avx2,fma", __m256, _mm256_set1_ps, _mm256_fmadd_ps, _mm256_add_ps, 8, float)
NNPROF_FMA_LOOP(fma_f64_avx2, "avx2,fma", __m256d, _mm256_set1_pd, _mm256_fmadd_pd, _mm256_add_pd, 4, double)
NNPROF_FMA_LOOP(fma_f32_avx512, "avx512f", __m512, _mm512_set1_ps, _mm512_fmadd_ps, _mm512_add_ps, 16, float)
NNPROF_FMA_LOOP(fma_f64_avx512, "avx512f", __m512d, _mm512_set1_pd, _mm512_fmadd_pd, _mm512_add_pd, 8, double)
#undef NNPROF_FMA_LOOP

struct FmaKernel {
  double (*run)(std::uint64_t);
  double flops_per_iter;  // chains × lanes × 2
};

struct Isa {
  const char* name;
  FmaKernel f32, f64;
};

Isa detect_isa() {
  __builtin_cpu_init();
  if (__builtin_cpu_supports("avx512f"))
    return {"avx512f", {fma_f32_avx512, kChains * 16 * 2.0}, {fma_f64_avx512, kChains * 8 * 2.0}};
  if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma"))
    return {"avx2+fma", {fma_f32_avx2, kChains * 8 * 2.0}, {fma_f64_avx2, kChains * 4 * 2.0}};
  return {"scalar",
          {[](std::uint64_t n) { return static_cast<double>(scalar_fma_loop<float>(n)); }, kChains * 2.0},
          {[](std::uint64_t n) { return scalar_fma_loop<double>(n); }, kChains * 2.0}};
}

// Runs `body(thread)` on `threads` threads that start together; returns the seconds from the
// first one's start to the last one's end, as the threads themselves saw them (the calling
// thread may be descheduled while they run).
template <class Body>
double run_together(std::uint32_t threads, Body body) {
  std::barrier start(static_cast<std::ptrdiff_t>(threads));
  std::vector<Clock::time_point> begin(threads), end(threads);
  std::vector<std::thread> pool;
  pool.reserve(threads);
  for (std::uint32_t t = 0; t < threads; ++t)
    pool.emplace_back([&, t] {
      start.arrive_and_wait();
      begin[t] = Clock::now();
      body(t);
      end[t] = Clock::now();
    });
  for (auto& th : pool) th.join();
  return std::chrono::duration<double>(*std::max_element(end.begin(), end.end()) -
                                       *std::min_element(begin.begin(), begin.end()))
      .count();
}

// FLOP/s of `kernel` on `threads` threads, each running for about `duration`.
double measure_flops_once(const FmaKernel& kernel, std::uint32_t threads, std::chrono::milliseconds duration) {
  std::vector<std::uint64_t> calls(threads, 0);
  std::atomic<double> sink{0.0};
  kernel.run(kItersPerCall);  // warm up: clocks ramp, pages of the code fault in
  const double seconds = run_together(threads, [&](std::uint32_t t) {
    const auto end = Clock::now() + duration;
    double local = 0.0;
    std::uint64_t n = 0;
    do {
      local += kernel.run(kItersPerCall);
      ++n;
    } while (Clock::now() < end);
    calls[t] = n;
    sink.store(local, std::memory_order_relaxed);
  });
  double total = 0.0;
  for (std::uint64_t n : calls) total += static_cast<double>(n) * kItersPerCall * kernel.flops_per_iter;
  return total / seconds;
}

// A peak is a maximum: the best of three runs, so that a moment of another job on the machine
// does not lower it.
double measure_flops(const FmaKernel& kernel, std::uint32_t threads, std::chrono::milliseconds duration) {
  double best = 0.0;
  for (int run = 0; run < 3; ++run) best = std::max(best, measure_flops_once(kernel, threads, duration));
  return best;
}

// STREAM triad bytes/s on `threads` threads: best of several passes over arrays that each
// thread first-touched (so that pages sit near the thread that uses them).
double measure_triad(std::uint32_t threads, std::uint64_t array_bytes) {
  const std::size_t n = static_cast<std::size_t>(array_bytes / sizeof(double));
  std::unique_ptr<double[]> a(new (std::nothrow) double[n]), b(new (std::nothrow) double[n]),
      c(new (std::nothrow) double[n]);
  if (!a || !b || !c)
    throw Error(fmt::format("cannot allocate the triad's three arrays of {} MiB: give a smaller size", array_bytes >> 20));
  auto range = [&](std::uint32_t t) {
    const std::size_t per = (n + threads - 1) / threads;
    return std::pair<std::size_t, std::size_t>{std::min(n, t * per), std::min(n, (t + 1) * per)};
  };
  run_together(threads, [&](std::uint32_t t) {
    const auto [lo, hi] = range(t);
    for (std::size_t i = lo; i < hi; ++i) {
      a[i] = 0.0;
      b[i] = 1.0;
      c[i] = 2.0;
    }
  });
  double best = 1e30;
  constexpr int kPasses = 6;  // the first warms up; the best of the rest counts
  for (int pass = 0; pass < kPasses; ++pass) {
    const double scalar = 3.0 + pass;
    const double seconds = run_together(threads, [&](std::uint32_t t) {
      const auto [lo, hi] = range(t);
      double* __restrict pa = a.get();
      const double* __restrict pb = b.get();
      const double* __restrict pc = c.get();
      for (std::size_t i = lo; i < hi; ++i) pa[i] = pb[i] + scalar * pc[i];
    });
    if (pass > 0) best = std::min(best, seconds);
  }
  volatile double keep = a[n / 2];
  (void)keep;
  return 3.0 * sizeof(double) * static_cast<double>(n) / best;
}

}  // namespace

MachinePeaks measure_machine(const MachineMeasureOptions& options) {
  const Isa isa = detect_isa();
  const std::uint32_t threads = options.threads != 0 ? options.threads : usable_cpus();
  const std::uint64_t triad_bytes = options.triad_array_bytes != 0 ? options.triad_array_bytes : std::uint64_t{128} << 20;
  MachinePeaks p;
  p.cpu_model = read_host_info().cpu_model;
  p.threads = threads;
  p.isa = isa.name;
  p.fp32_flops_one_core = measure_flops(isa.f32, 1, options.duration);
  p.fp64_flops_one_core = measure_flops(isa.f64, 1, options.duration);
  p.fp32_flops = threads == 1 ? p.fp32_flops_one_core : measure_flops(isa.f32, threads, options.duration);
  p.fp64_flops = threads == 1 ? p.fp64_flops_one_core : measure_flops(isa.f64, threads, options.duration);
  p.bandwidth_one_core = measure_triad(1, triad_bytes);
  p.bandwidth = threads == 1 ? p.bandwidth_one_core : measure_triad(threads, triad_bytes);
  p.measured_unix = static_cast<std::int64_t>(std::time(nullptr));
  return p;
}

}  // namespace nnprof::collect
