// The cost of recording: one clock read, one scope in each mode, and start/stop by name.
// Results and their ratio to BM_ClockRead go to docs/PERFORMANCE.md.
#include <benchmark/benchmark.h>

#include <string>

#include "nnprof/nnprof.hpp"

namespace {

nnprof::Profiler& timeline_profiler() {
  // Flight recorder: a long benchmark run recycles chunks instead of hitting the cap, so
  // the steady state measured is the one a long training run sees.
  static nnprof::Profiler p([] {
    nnprof::ProfilerOptions o;
    o.policy = nnprof::BufferPolicy::FlightRecorder;
    return o;
  }());
  return p;
}

nnprof::Profiler& aggregate_profiler() {
  static nnprof::Profiler p([] {
    nnprof::ProfilerOptions o;
    o.record_spans = false;
    return o;
  }());
  return p;
}

nnprof::Profiler& disabled_profiler() {
  static nnprof::Profiler p;
  p.set_enabled(false);
  return p;
}

void BM_ClockRead(benchmark::State& state) {
  for (auto _ : state) benchmark::DoNotOptimize(nnprof::detail::read_ticks());
}
BENCHMARK(BM_ClockRead);
BENCHMARK(BM_ClockRead)->Threads(2);

void BM_ScopeTimeline(benchmark::State& state) {
  nnprof::Profiler& p = timeline_profiler();
  for (auto _ : state) {
    NNPROF_SCOPE_IN(p, "bench_scope");
  }
}
BENCHMARK(BM_ScopeTimeline);
BENCHMARK(BM_ScopeTimeline)->Threads(2);

// A scope that declares its work: the goal is the cost of BM_ScopeTimeline plus two adds.
void BM_ScopeFlops(benchmark::State& state) {
  nnprof::Profiler& p = timeline_profiler();
  double flops = 1.0;
  for (auto _ : state) {
    NNPROF_SCOPE_FLOPS_IN(p, "bench_scope_flops", flops, 64);
    flops += 1.0;  // not a constant the compiler could fold into the scope
  }
}
BENCHMARK(BM_ScopeFlops);

void BM_ScopeAggregate(benchmark::State& state) {
  nnprof::Profiler& p = aggregate_profiler();
  for (auto _ : state) {
    NNPROF_SCOPE_IN(p, "bench_scope");
  }
}
BENCHMARK(BM_ScopeAggregate);
BENCHMARK(BM_ScopeAggregate)->Threads(2);

// NNPROF_NVTX=1 with no NVTX tool attached (no Nsight Systems): each scope is also an NVTX
// push and pop, which NVTX turns into calls through its no-op function table.
void BM_ScopeNvtxNoTool(benchmark::State& state) {
  static nnprof::Profiler p([] {
    nnprof::ProfilerOptions o;
    o.policy = nnprof::BufferPolicy::FlightRecorder;  // as timeline_profiler(): only nvtx differs
    o.nvtx = true;
    return o;
  }());
  for (auto _ : state) {
    NNPROF_SCOPE_IN(p, "bench_scope");
  }
}
BENCHMARK(BM_ScopeNvtxNoTool);

void BM_ScopeDisabled(benchmark::State& state) {
  nnprof::Profiler& p = disabled_profiler();
  for (auto _ : state) {
    NNPROF_SCOPE_IN(p, "bench_scope");
  }
}
BENCHMARK(BM_ScopeDisabled);
BENCHMARK(BM_ScopeDisabled)->Threads(2);

void BM_StartStopByName(benchmark::State& state) {
  nnprof::Profiler& p = timeline_profiler();
  for (auto _ : state) {
    p.start("bench_named_scope");
    p.stop("bench_named_scope");
  }
}
BENCHMARK(BM_StartStopByName);
BENCHMARK(BM_StartStopByName)->Threads(2);

}  // namespace

namespace {

// Profiler::call_count, total_time and stats with 10,000 distinct names recorded (issue 16):
// answered from the call-tree nodes of one name. BM_QueryBySnapshot10kNames is how they were
// answered before, a whole profile built per call, measured in the same run for comparison.
nnprof::Profiler& many_names_profiler() {
  static nnprof::Profiler& p = [] () -> nnprof::Profiler& {
    nnprof::ProfilerOptions o;
    o.record_spans = false;  // snapshot() then costs what the statistics-only snapshot did
    auto* profiler = new nnprof::Profiler(o);  // never destroyed: no teardown inside the timing
    for (int i = 0; i < 10'000; ++i) {
      const std::string name = "name " + std::to_string(i);
      profiler->start(name);
      profiler->stop(name);
    }
    return *profiler;
  }();
  return p;
}

void BM_CallCount10kNames(benchmark::State& state) {
  nnprof::Profiler& p = many_names_profiler();
  for (auto _ : state) benchmark::DoNotOptimize(p.call_count("name 5000"));
}
BENCHMARK(BM_CallCount10kNames);

void BM_TotalTime10kNames(benchmark::State& state) {
  nnprof::Profiler& p = many_names_profiler();
  for (auto _ : state) benchmark::DoNotOptimize(p.total_time("name 5000"));
}
BENCHMARK(BM_TotalTime10kNames);

void BM_Stats10kNames(benchmark::State& state) {
  nnprof::Profiler& p = many_names_profiler();
  for (auto _ : state) benchmark::DoNotOptimize(p.stats("name 5000"));
}
BENCHMARK(BM_Stats10kNames);

void BM_QueryBySnapshot10kNames(benchmark::State& state) {
  nnprof::Profiler& p = many_names_profiler();
  for (auto _ : state) benchmark::DoNotOptimize(p.snapshot().find_scope("name 5000")->time.count);
}
BENCHMARK(BM_QueryBySnapshot10kNames);

}  // namespace
