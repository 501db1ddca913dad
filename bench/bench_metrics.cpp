// The cost of recording a metric (issue 6, part 5), next to the cheapest shared counter there
// is: a relaxed atomic add. Results go to docs/PERFORMANCE.md, "Issue 6: metrics".
#include <benchmark/benchmark.h>

#include <atomic>
#include <cstdint>

#include "nnprof/nnprof.hpp"

namespace {

nnprof::Profiler& metrics_profiler() {
  // Flight recorder: a long run recycles chunks instead of reaching the cap, so the steady
  // state measured is the one a long training run sees (every point kept).
  static nnprof::Profiler p([] {
    nnprof::ProfilerOptions o;
    o.policy = nnprof::BufferPolicy::FlightRecorder;
    return o;
  }());
  return p;
}

nnprof::Profiler& statistics_only_profiler() {
  static nnprof::Profiler p([] {
    nnprof::ProfilerOptions o;
    o.record_spans = false;
    return o;
  }());
  return p;
}

std::atomic<std::uint64_t> g_shared{0};

// Baseline: one relaxed fetch_add on a counter shared by every benchmark thread.
void BM_MetricBaselineRelaxedAtomicAdd(benchmark::State& state) {
  for (auto _ : state) g_shared.fetch_add(1, std::memory_order_relaxed);
}
BENCHMARK(BM_MetricBaselineRelaxedAtomicAdd);
BENCHMARK(BM_MetricBaselineRelaxedAtomicAdd)->Threads(2);

void BM_MetricCounterHandle(benchmark::State& state) {
  static const nnprof::Counter c = metrics_profiler().metrics().counter("bench_counter");
  for (auto _ : state) c.increment();
}
BENCHMARK(BM_MetricCounterHandle);
BENCHMARK(BM_MetricCounterHandle)->Threads(2);

void BM_MetricHistogramHandle(benchmark::State& state) {
  static const nnprof::Histogram h = metrics_profiler().metrics().histogram("bench_histogram");
  double v = 0.0;
  for (auto _ : state) h.record(v += 0.5);
}
BENCHMARK(BM_MetricHistogramHandle);
BENCHMARK(BM_MetricHistogramHandle)->Threads(2);

void BM_MetricCounterHandleStatisticsOnly(benchmark::State& state) {
  static const nnprof::Counter c = statistics_only_profiler().metrics().counter("bench_counter");
  for (auto _ : state) c.increment();
}
BENCHMARK(BM_MetricCounterHandleStatisticsOnly);

void BM_MetricIncrementByName(benchmark::State& state) {
  const nnprof::Metrics m = metrics_profiler().metrics();
  for (auto _ : state) m.increment("bench_by_name");
}
BENCHMARK(BM_MetricIncrementByName);
BENCHMARK(BM_MetricIncrementByName)->Threads(2);

void BM_MetricMeasureTimeByName(benchmark::State& state) {
  const nnprof::Metrics m = metrics_profiler().metrics();
  for (auto _ : state) {
    auto t = m.measure_time("bench_timer");
  }
}
BENCHMARK(BM_MetricMeasureTimeByName);

}  // namespace
