// The cost of marking a dependency between threads (nnprof/flow.hpp), next to the cost of a
// scope in the same run: BM_FlowScopeBaseline is BM_ScopeTimeline's scope on its own profiler.
// Results go to docs/PERFORMANCE.md ("Issue 6: flows").
#include <benchmark/benchmark.h>

#include "nnprof/nnprof.hpp"

namespace {

nnprof::Profiler& flow_profiler() {
  // Flight recorder, as the scope benchmarks: a long run recycles chunks instead of reaching
  // the cap, which is the steady state of a long training run.
  static nnprof::Profiler p([] {
    nnprof::ProfilerOptions o;
    o.policy = nnprof::BufferPolicy::FlightRecorder;
    return o;
  }());
  return p;
}

void BM_FlowScopeBaseline(benchmark::State& state) {
  nnprof::Profiler& p = flow_profiler();
  for (auto _ : state) {
    NNPROF_SCOPE_IN(p, "bench_scope");
  }
}
BENCHMARK(BM_FlowScopeBaseline);

// One flow_begin with a made id, inside a scope as a submitting thread calls it.
void BM_FlowBegin(benchmark::State& state) {
  nnprof::Profiler& p = flow_profiler();
  NNPROF_SCOPE_IN(p, "submit");
  for (auto _ : state) benchmark::DoNotOptimize(nnprof::flow_begin(p));
}
BENCHMARK(BM_FlowBegin);
BENCHMARK(BM_FlowBegin)->Threads(2);

// One flow_end with a given id.
void BM_FlowEnd(benchmark::State& state) {
  nnprof::Profiler& p = flow_profiler();
  NNPROF_SCOPE_IN(p, "task");
  nnprof::FlowId id = 1;
  for (auto _ : state) nnprof::flow_end(p, id++);
}
BENCHMARK(BM_FlowEnd);

// What a pool task costs to mark in all: a scope, its FlowTask (flow_end + flow_done), and on
// the submitting side flow_begin and a FlowWait (two records). Here on one thread.
void BM_FlowTaskRoundTrip(benchmark::State& state) {
  nnprof::Profiler& p = flow_profiler();
  for (auto _ : state) {
    const nnprof::FlowId id = nnprof::flow_begin(p);
    {
      NNPROF_SCOPE_IN(p, "task");
      nnprof::FlowTask task(p, id);
    }
    nnprof::FlowWait wait(p, id);
  }
}
BENCHMARK(BM_FlowTaskRoundTrip);

// Disabled: one relaxed load, as a disabled scope.
void BM_FlowBeginDisabled(benchmark::State& state) {
  static nnprof::Profiler p;
  p.set_enabled(false);
  for (auto _ : state) benchmark::DoNotOptimize(nnprof::flow_begin(p));
}
BENCHMARK(BM_FlowBeginDisabled);

}  // namespace
