// Issue 7: tokens/s of the built-in transformer and what full instrumentation costs it.
//
// BM_TransformerTokens/<model>: inferences of 50 tokens, instrumented, recording into a
// profiler (timeline on): tokens/s.
// BM_InstrumentationOverhead/<model>: each iteration runs one inference of the compiled-out
// engine (NNPROF_ENABLED=0) and one of the instrumented engine, timing each, the order swapped
// every iteration, so that both see the same machine state (paired, ABBA): the counters are the two mean times
// and their ratio, which is the overhead of scopes down to kernel level with FLOPs declared.
// Results go to docs/PERFORMANCE.md ("Issue 7").
#include <benchmark/benchmark.h>

#include <chrono>
#include <string>

#include "bench_transformer.hpp"
#include "model.hpp"
#include "nnprof/nnprof.hpp"

namespace {

using Clock = std::chrono::steady_clock;
constexpr int kTokens = 50;

const char* model_name(std::int64_t arg) { return arg == 0 ? "small" : "medium"; }

nnprof::transformer::ModelConfig config_of(std::int64_t arg) {
  return arg == 0 ? nnprof::transformer::ModelConfig::small() : nnprof::transformer::ModelConfig::medium();
}

nnprof::ProfilerOptions recorder_options() {
  // Flight recorder: a long benchmark recycles the span chunks instead of reaching the cap, the
  // steady state of a long-running service.
  nnprof::ProfilerOptions o;
  o.policy = nnprof::BufferPolicy::FlightRecorder;
  return o;
}

void BM_TransformerTokens(benchmark::State& state) {
  nnprof::Profiler profiler(recorder_options());
  nnprof::transformer::Model model(config_of(state.range(0)), profiler);
  for (auto _ : state) benchmark::DoNotOptimize(model.generate(kTokens));
  state.SetLabel(model_name(state.range(0)));
  state.counters["tokens/s"] =
      benchmark::Counter(static_cast<double>(kTokens), benchmark::Counter::kIsIterationInvariantRate);
}
BENCHMARK(BM_TransformerTokens)->Arg(0)->Arg(1)->Unit(benchmark::kMillisecond)->UseRealTime();

void BM_InstrumentationOverhead(benchmark::State& state) {
  nnprof::Profiler profiler(recorder_options());
  nnprof::transformer::Model instrumented(config_of(state.range(0)), profiler);
  const auto bare = bench_transformer::make_bare_model(model_name(state.range(0)));
  double bare_s = 0.0, instrumented_s = 0.0;
  auto timed = [](auto&& run) {
    const Clock::time_point t0 = Clock::now();
    benchmark::DoNotOptimize(run());
    return std::chrono::duration<double>(Clock::now() - t0).count();
  };
  auto run_bare = [&] { return bench_transformer::run_bare_inference(*bare, kTokens); };
  auto run_instrumented = [&] { return instrumented.generate(kTokens); };
  bool bare_first = true;
  for (auto _ : state) {
    // Alternate which runs first, so that neither always finds the caches as the other left them.
    if (bare_first) {
      bare_s += timed(run_bare);
      instrumented_s += timed(run_instrumented);
    } else {
      instrumented_s += timed(run_instrumented);
      bare_s += timed(run_bare);
    }
    bare_first = !bare_first;
  }
  const auto n = static_cast<double>(state.iterations());
  state.SetLabel(model_name(state.range(0)));
  state.counters["bare_ms"] = bare_s / n * 1e3;
  state.counters["instrumented_ms"] = instrumented_s / n * 1e3;
  state.counters["overhead_pct"] = (instrumented_s / bare_s - 1.0) * 100.0;
  const nnprof::Profile p = profiler.snapshot();
  double scopes = 0;
  for (const auto& node : p.call_tree) scopes += static_cast<double>(node.time.count);
  state.counters["scopes_per_token"] = scopes / (n * kTokens);
}
BENCHMARK(BM_InstrumentationOverhead)->Arg(0)->Arg(1)->Unit(benchmark::kMillisecond)->UseRealTime()->MinTime(2.0);

}  // namespace

BENCHMARK_MAIN();
