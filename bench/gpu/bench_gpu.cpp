// What CUPTI tracing (nnprof::CudaProfiler) costs a launch-heavy loop: the same loop of empty
// kernel launches without and with the tracer, in one run, so docs/PERFORMANCE.md can state the
// ratio (issue 8 goal: <= 5%). Needs a GPU; without one every benchmark is skipped with the
// reason.
#include <benchmark/benchmark.h>

#include <memory>
#include <string>

#include "launch_kernels.hpp"
#include "nnprof/gpu.hpp"
#include "nnprof/scope.hpp"

namespace {

constexpr int kLaunches = 10'000;

bool skip_without_gpu(benchmark::State& state) {
  if (gpu_device_count() > 0) return false;
  state.SkipWithError("no usable CUDA device: GPU benchmarks need a GPU and its driver");
  return true;
}

void BM_LaunchLoop_Untraced(benchmark::State& state) {
  if (skip_without_gpu(state)) return;
  launch_empty(100);  // context creation and module load outside the timing
  for (auto _ : state) benchmark::DoNotOptimize(launch_empty(kLaunches));
  state.SetItemsProcessed(state.iterations() * kLaunches);
}

void BM_LaunchLoop_Traced(benchmark::State& state) {
  if (skip_without_gpu(state)) return;
  launch_empty(100);
  nnprof::Profiler profiler;
  nnprof::CudaProfilerOptions options;
  options.nvml = false;  // a sampler thread is no part of the per-launch cost
  options.max_records = 100'000'000;
  nnprof::CudaProfiler gpu(profiler, options);
  if (!gpu.status().tracing()) {
    state.SkipWithError(gpu.status().message.c_str());
    return;
  }
  for (auto _ : state) {
    NNPROF_SCOPE_IN(profiler, "launch loop");
    benchmark::DoNotOptimize(launch_empty(kLaunches));
  }
  state.SetItemsProcessed(state.iterations() * kLaunches);
  gpu.stop();
  const nnprof::CudaProfilerStats s = gpu.stats();
  state.counters["records"] = static_cast<double>(s.records);
  state.counters["dropped"] = static_cast<double>(s.dropped);
}

// Untraced, traced, traced, untraced: drift of a shared machine cancels in the ratio.
BENCHMARK(BM_LaunchLoop_Untraced)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK(BM_LaunchLoop_Traced)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK(BM_LaunchLoop_Traced)->Name("BM_LaunchLoop_Traced/again")->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK(BM_LaunchLoop_Untraced)->Name("BM_LaunchLoop_Untraced/again")->Unit(benchmark::kMillisecond)->UseRealTime();

}  // namespace

BENCHMARK_MAIN();
