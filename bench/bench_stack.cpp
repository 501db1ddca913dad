// The cost of one call stack capture inside a malloc hook: ~20 frames below the capture
// (plus the benchmark's own), all of them copied out. Figures go to docs/PERFORMANCE.md.
#include <benchmark/benchmark.h>

#include <cstdint>

#include "collect/stack/stack_capture.hpp"

namespace {

constexpr int kMaxFrames = 128;

// Recurses `depth` frames, then runs the benchmark loop there. Not inlined and not a tail
// call, so every level is a real frame.
__attribute__((noinline)) int capture_at_depth(benchmark::State& state, int depth) {
  if (depth > 0) {
    const int frames = capture_at_depth(state, depth - 1);
    benchmark::DoNotOptimize(frames);
    return frames;
  }
  std::uintptr_t out[kMaxFrames];
  int frames = 0;
  for (auto _ : state) {
    frames = nnprof::collect::capture_stack(out, kMaxFrames, 0);
    benchmark::DoNotOptimize(out);
  }
  return frames;
}

void BM_CaptureStack(benchmark::State& state) {
  nnprof::collect::stack_capture_init();
  state.SetLabel(nnprof::collect::stack_capture_method());
  const int frames = capture_at_depth(state, static_cast<int>(state.range(0)));
  state.counters["frames"] = benchmark::Counter(frames, benchmark::Counter::kAvgThreads);
}
BENCHMARK(BM_CaptureStack)->Arg(20);
BENCHMARK(BM_CaptureStack)->Arg(20)->Threads(2);
BENCHMARK(BM_CaptureStack)->Arg(100);

}  // namespace
