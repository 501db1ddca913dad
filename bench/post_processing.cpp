// Issue 21, goal 5: post-processing at most 1 µs per event. Two threads run a training loop's
// shape of nested scopes (step > forward/backward > 4 layers > 8 operators, 82 distinct
// names) while the CPU sampler takes each thread's stack at a high rate; then the snapshot
// (building the profile, the samples' symbols included) and the save are timed, per event
// (spans kept plus samples kept).
//
//   nnprof_bench_post_processing [OUT.nnprof] [SPANS] [SAMPLES] [unwinder: kernel|dwarf]
//
// Defaults: one million spans and 100,000 samples, the figures. The operators' work is
// sized so that the sampler, at 10 kHz of each thread's CPU time, takes about SAMPLES samples
// while the threads record SPANS spans (a first short run measures the work's speed).
#include <sys/resource.h>

#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <iostream>
#include <string>
#include <thread>
#include <vector>

#include "nnprof/cpu_profiler.hpp"
#include "nnprof/error.hpp"
#include "nnprof/profile.hpp"
#include "nnprof/profiler.hpp"
#include "nnprof/scope.hpp"

namespace {

constexpr double kSampleHz = 10'000.0;
constexpr int kLayers = 4;
constexpr int kOperators = 8;  // per layer and pass
// Spans per step: the step, forward and backward, 4 layers in each pass, 8 operators in each.
constexpr long kSpansPerStep = 1 + 2 + 2 * kLayers + 2 * kLayers * kOperators;

volatile double g_sink = 0.0;

// An operator's work: `iterations` rounds of arithmetic the compiler cannot drop, so that
// samples land in real frames of this program, which the build must symbolise.
__attribute__((noinline)) void work(long iterations) {
  double x = g_sink + 1.0;
  for (long i = 0; i < iterations; ++i) x = x * 0.999999 + std::sqrt(static_cast<double>(i & 1023));
  g_sink = x;
}

// Eight operators with names of their own, as a layer's distinct operators have.
#define NNPROF_BENCH_OP(n)                  \
  {                                         \
    NNPROF_SCOPE_IN(profiler, "operator_" #n); \
    work(iterations);                       \
  }
__attribute__((noinline)) void layer_operators(nnprof::Profiler& profiler, long iterations) {
  NNPROF_BENCH_OP(0) NNPROF_BENCH_OP(1) NNPROF_BENCH_OP(2) NNPROF_BENCH_OP(3)
  NNPROF_BENCH_OP(4) NNPROF_BENCH_OP(5) NNPROF_BENCH_OP(6) NNPROF_BENCH_OP(7)
}
#undef NNPROF_BENCH_OP

__attribute__((noinline)) void pass(nnprof::Profiler& profiler, long iterations) {
  for (int l = 0; l < kLayers; ++l) {
    switch (l) {
      case 0: { NNPROF_SCOPE_IN(profiler, "layer_0"); layer_operators(profiler, iterations); break; }
      case 1: { NNPROF_SCOPE_IN(profiler, "layer_1"); layer_operators(profiler, iterations); break; }
      case 2: { NNPROF_SCOPE_IN(profiler, "layer_2"); layer_operators(profiler, iterations); break; }
      default: { NNPROF_SCOPE_IN(profiler, "layer_3"); layer_operators(profiler, iterations); break; }
    }
  }
}

void train(nnprof::Profiler& profiler, long steps, long iterations) {
  for (long s = 0; s < steps; ++s) {
    NNPROF_SCOPE_IN(profiler, "train_step");
    {
      NNPROF_SCOPE_IN(profiler, "forward");
      pass(profiler, iterations);
    }
    {
      NNPROF_SCOPE_IN(profiler, "backward");
      pass(profiler, iterations);
    }
  }
}

double seconds(std::chrono::steady_clock::duration d) { return std::chrono::duration<double>(d).count(); }

}  // namespace

int main(int argc, char** argv) {
  const std::string out = argc > 1 ? argv[1] : "post_processing.nnprof";
  const long spans = argc > 2 ? std::atol(argv[2]) : 1'000'000;
  const long samples = argc > 3 ? std::atol(argv[3]) : 100'000;
  const std::string unwinder = argc > 4 ? argv[4] : "kernel";
  if (spans < kSpansPerStep * 2 || samples <= 0 || (unwinder != "kernel" && unwinder != "dwarf")) {
    std::cerr << "usage: " << argv[0] << " [OUT.nnprof] [SPANS >= " << kSpansPerStep * 2
              << "] [SAMPLES > 0] [kernel|dwarf]\n";
    return 2;
  }
  // The work per operator that makes the threads' CPU time SAMPLES / kSampleHz in all.
  constexpr long kProbe = 2'000'000;
  const auto p0 = std::chrono::steady_clock::now();
  work(kProbe);
  const double per_iteration = seconds(std::chrono::steady_clock::now() - p0) / kProbe;
  const long steps_per_thread = spans / kSpansPerStep / 2;
  const double operators = 2.0 * static_cast<double>(steps_per_thread) * 2 * kLayers * kOperators;
  const long iterations =
      std::max(1L, std::lround(static_cast<double>(samples) / kSampleHz / operators / per_iteration));

  try {
    nnprof::ProfilerOptions options;
    options.memory_cap_bytes = std::size_t{1} << 30;  // every span kept: the cost of all of them is measured
    nnprof::Profiler profiler(options);
    nnprof::CpuProfilerOptions sampling;
    sampling.hz = kSampleHz;
    sampling.unwinder = unwinder == "dwarf" ? nnprof::Unwinder::Dwarf : nnprof::Unwinder::Kernel;
    const auto t0 = std::chrono::steady_clock::now();
    {
      nnprof::CpuProfiler sampler(profiler, sampling);
      std::thread other([&] { train(profiler, steps_per_thread, iterations); });
      train(profiler, steps_per_thread, iterations);
      other.join();
      sampler.stop();
      std::cout << "sampler:               " << sampler.stats().mechanism << ", " << sampler.stats().unwinder << ", "
                << sampler.stats().effective_hz << " Hz\n";
    }
    const auto t1 = std::chrono::steady_clock::now();
    const nnprof::Profile profile = profiler.snapshot();
    const auto t2 = std::chrono::steady_clock::now();
    profile.save(out);
    const auto t3 = std::chrono::steady_clock::now();
    rusage usage{};
    getrusage(RUSAGE_SELF, &usage);
    const double events = static_cast<double>(profile.spans.size() + profile.cpu_samples.size());
    const auto per_event = [&](double s) { return s / events * 1e6; };
    std::cout << "recorded:              " << seconds(t1 - t0) << " s (" << iterations << " iterations per operator)\n"
              << "spans kept:            " << profile.spans.size() << "\n"
              << "CPU samples kept:      " << profile.cpu_samples.size() << "\n"
              << "build (snapshot):      " << seconds(t2 - t1) << " s, " << per_event(seconds(t2 - t1))
              << " us per event\n"
              << "save:                  " << seconds(t3 - t2) << " s, " << per_event(seconds(t3 - t2))
              << " us per event\n"
              << "post-processing:       " << per_event(seconds(t3 - t1)) << " us per event\n"
              << "file:                  " << std::filesystem::file_size(out) / (1 << 20) << " MiB\n"
              << "peak RSS:              " << usage.ru_maxrss / 1024 << " MiB\n";
    for (const auto& d : profile.diagnostics) std::cout << "diagnostic: " << d.message << "\n";
  } catch (const nnprof::Error& e) {
    std::cerr << "nnprof_bench_post_processing: " << e.what() << "\n";
    return 1;
  }
  return 0;
}
