// The cost of CPU sampling (issue 5): a fixed amount of compute-bound work, timed without a
// sampler and under each mechanism and unwinder, in one run; the difference divided by the
// samples taken is the cost of one sample (signal delivery, stack walk, ring write). Also the
// cost of symbolizing one address, cold and cached. Figures go to docs/PERFORMANCE.md.
#include <benchmark/benchmark.h>
#include <dlfcn.h>

#include <cstdint>
#include <optional>
#include <vector>

#include "collect/symbols/symbolizer.hpp"
#include "nnprof/cpu_profiler.hpp"
#include "nnprof/profiler.hpp"

namespace {

nnprof::Profiler& cpu_profiler() {
  static nnprof::Profiler p([] {
    nnprof::ProfilerOptions o;
    o.record_spans = false;
    return o;
  }());
  return p;
}

// About 1 ms of dependent multiplications, 20 frames below the benchmark loop, so that stack
// walks have something to walk.
__attribute__((noinline)) std::uint64_t work_at_depth(int depth, std::uint64_t x) {
  if (depth > 0) {
    x = work_at_depth(depth - 1, x) + 1;
    benchmark::DoNotOptimize(x);
    return x;
  }
  for (int i = 0; i < 1'000'000; ++i) x = x * 6364136223846793005ull + 1442695040888963407ull;
  return x;
}

enum Mode : int {
  kOff,
  kTimer199,
  kPerf1k,  // signal per sample; the handler copies the stack, unwound offline with DWARF
  kPerf1kFramePointers,
  kPerf1kKernel,  // the kernel walks the stack, no signal (the default above 250 Hz)
  kPerf10k,
  kPerf10kFramePointers,
  kPerf10kKernel,
  kPerf10kNoStack,
};

void BM_SampledWork(benchmark::State& state) {
  const auto mode = static_cast<Mode>(state.range(0));
  std::optional<nnprof::CpuProfiler> sampler;
  if (mode != kOff) {
    nnprof::CpuProfilerOptions o;
    o.hz = mode == kTimer199 ? 199 : mode >= kPerf10k ? 10'000 : 1'000;
    o.unwinder = mode == kPerf1kFramePointers || mode == kPerf10kFramePointers ? nnprof::Unwinder::FramePointer
                 : mode == kPerf1kKernel || mode == kPerf10kKernel             ? nnprof::Unwinder::Kernel
                                                                               : nnprof::Unwinder::Libunwind;
    o.call_graph = mode != kPerf10kNoStack;  // the signal alone: what a sample costs before any unwinding
    sampler.emplace(cpu_profiler(), o);
    state.SetLabel(std::string(sampler->stats().mechanism) + " " + sampler->stats().unwinder);
  }
  std::uint64_t x = 1;
  for (auto _ : state) x = work_at_depth(20, x);
  benchmark::DoNotOptimize(x);
  if (sampler) {
    const nnprof::CpuProfilerStats s = sampler->stats();
    sampler->stop();
    state.counters["samples"] = static_cast<double>(sampler->stats().samples);
    state.counters["dropped"] = static_cast<double>(s.dropped);
  }
}
BENCHMARK(BM_SampledWork)
    ->ArgName("mode")
    ->Arg(kOff)
    ->Arg(kTimer199)
    ->Arg(kPerf1k)
    ->Arg(kPerf1kFramePointers)
    ->Arg(kPerf1kKernel)
    ->Arg(kPerf10k)
    ->Arg(kPerf10kFramePointers)
    ->Arg(kPerf10kKernel)
    ->Arg(kPerf10kNoStack)
    ->Unit(benchmark::kMillisecond)
    ->MinTime(2.0)
    ->UseRealTime();

// Addresses inside libc and libstdc++ functions (symbol tables, no DWARF on a stock system):
// 64 distinct pcs in each of a few functions.
std::vector<std::uintptr_t> library_addresses() {
  std::vector<std::uintptr_t> out;
  for (const char* name : {"qsort", "strtod", "printf", "memcpy", "fopen", "_ZNSt6thread4joinEv",
                           "_ZNSs6appendEPKc", "_ZSt9terminatev"}) {
    const auto base = reinterpret_cast<std::uintptr_t>(dlsym(RTLD_DEFAULT, name));
    if (base == 0) continue;
    for (std::uintptr_t k = 0; k < 64; ++k) out.push_back(base + k);
  }
  return out;
}

void BM_SymbolizeCold(benchmark::State& state) {
  const std::vector<std::uintptr_t> addresses = library_addresses();
  for (auto _ : state) {
    nnprof::collect::Symbolizer s;  // a fresh cache: reads /proc/self/maps and the symbol tables again
    auto symbols = s.resolve_all(addresses, false);
    benchmark::DoNotOptimize(symbols);
  }
  state.SetItemsProcessed(state.iterations() * static_cast<std::int64_t>(addresses.size()));
}
BENCHMARK(BM_SymbolizeCold)->Unit(benchmark::kMillisecond);

void BM_SymbolizeCached(benchmark::State& state) {
  const std::vector<std::uintptr_t> addresses = library_addresses();
  nnprof::collect::Symbolizer s;
  s.resolve_all(addresses, false);
  for (auto _ : state) {
    auto symbols = s.resolve_all(addresses, false);
    benchmark::DoNotOptimize(symbols);
  }
  state.SetItemsProcessed(state.iterations() * static_cast<std::int64_t>(addresses.size()));
}
BENCHMARK(BM_SymbolizeCached);

}  // namespace
