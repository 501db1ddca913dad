// The cost of heap tracking (issue 4) on a 64-byte malloc+free pair: raw glibc, through the
// hooks with tracking off, tracked without stacks (counting, attribution, live blocks), and
// tracked with stacks at the default sampling. A block freed by the thread that allocated it
// soon after stays in that thread's cache: this measures the fast path inlined in the hooks.
// Results and their ratio to BM_MallocFree go to docs/PERFORMANCE.md ("Issue 4: heap
// tracking"). Goal: tracked <= 2x raw. The VM is noisy: run with --benchmark_repetitions=10
// and compare min and median with BM_MallocFree of the same run.
//
// A program of its own (nnprof_bench_heap): it links nnprof::memory, whose hooks replace the
// process's malloc and operator new, and the shared libnnprof that holds the one tracker.
#include <benchmark/benchmark.h>

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <optional>
#include <string>

#include "nnprof/memory.hpp"
#include "nnprof/nnprof.hpp"

// glibc's own entry points: calling them bypasses the hooks (which forward to them).
extern "C" {
void* __libc_malloc(std::size_t);
void __libc_free(void*);
}

namespace {

constexpr std::size_t kBlockBytes = 64;

struct Block {
  char bytes[kBlockBytes];
};

nnprof::Profiler& heap_profiler() {
  // Statistics only: the one scope per thread around the loop needs no timeline.
  static nnprof::Profiler p([] {
    nnprof::ProfilerOptions o;
    o.record_spans = false;
    return o;
  }());
  return p;
}

// Tracking is process-wide and one at a time: thread 0 starts it before the loop (whose
// start is a barrier for all threads of the benchmark) and stops it after the loop (whose
// end is one too).
class TrackingForBenchmark {
 public:
  TrackingForBenchmark(const benchmark::State& state, bool on, std::uint64_t stack_sample_bytes) {
    if (!on || state.thread_index() != 0) return;
    nnprof::MemoryTrackingOptions o;
    o.stack_sample_bytes = stack_sample_bytes;
    tracking_.emplace(heap_profiler(), o);
  }
  void stop(benchmark::State& state) {
    if (!tracking_) return;
    // A check that the loop was tracked (HeapCounters add up the call-tree nodes of the
    // profiler, which keeps them from one benchmark run to the next: not a per-run count).
    if (tracking_->counters().alloc_count < static_cast<std::uint64_t>(state.iterations()))
      state.SkipWithError("the allocations of the loop were not tracked");
    tracking_.reset();
  }

 private:
  std::optional<nnprof::MemoryTracking> tracking_;
};

void BM_MallocFree(benchmark::State& state) {
  for (auto _ : state) {
    void* p = __libc_malloc(kBlockBytes);
    benchmark::DoNotOptimize(p);
    __libc_free(p);
  }
  state.SetItemsProcessed(state.iterations());
}

template <bool kTrack, std::uint64_t kStackSampleBytes>
void malloc_free_loop(benchmark::State& state) {
  TrackingForBenchmark tracking(state, kTrack, kStackSampleBytes);
  {
    NNPROF_SCOPE_IN(heap_profiler(), "malloc_free");
    for (auto _ : state) {
      void* p = std::malloc(kBlockBytes);
      benchmark::DoNotOptimize(p);
      std::free(p);
    }
  }
  tracking.stop(state);
  state.SetItemsProcessed(state.iterations());
}

template <bool kTrack, std::uint64_t kStackSampleBytes>
void new_delete_loop(benchmark::State& state) {
  TrackingForBenchmark tracking(state, kTrack, kStackSampleBytes);
  {
    NNPROF_SCOPE_IN(heap_profiler(), "new_delete");
    for (auto _ : state) {
      auto* p = new Block;
      benchmark::DoNotOptimize(p);
      delete p;
    }
  }
  tracking.stop(state);
  state.SetItemsProcessed(state.iterations());
}

constexpr std::uint64_t kDefaultSampling = nnprof::MemoryTrackingOptions{}.stack_sample_bytes;

void BM_MallocFreeHooksIdle(benchmark::State& state) { malloc_free_loop<false, 0>(state); }
void BM_MallocFreeTracked(benchmark::State& state) { malloc_free_loop<true, 0>(state); }
void BM_MallocFreeTrackedStack(benchmark::State& state) { malloc_free_loop<true, kDefaultSampling>(state); }
void BM_NewDeleteHooksIdle(benchmark::State& state) { new_delete_loop<false, 0>(state); }
void BM_NewDeleteTracked(benchmark::State& state) { new_delete_loop<true, 0>(state); }

BENCHMARK(BM_MallocFree)->Threads(1)->Threads(2);
BENCHMARK(BM_MallocFreeHooksIdle)->Threads(1)->Threads(2);
BENCHMARK(BM_MallocFreeTracked)->Threads(1)->Threads(2);
BENCHMARK(BM_MallocFreeTrackedStack)->Threads(1)->Threads(2);
BENCHMARK(BM_NewDeleteHooksIdle)->Threads(1)->Threads(2);
BENCHMARK(BM_NewDeleteTracked)->Threads(1)->Threads(2);

}  // namespace

int main(int argc, char** argv) {
  std::string why;
  if (!nnprof::heap_hooks_available(&why)) {
    std::fprintf(stderr, "nnprof_bench_heap: the allocation hooks are not active: %s\n", why.c_str());
    return 1;
  }
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
