// Seed 001 (Democratising, "Profiling"), Basic Profiling / CPU Profiling: a sampling profiler
// built with a rate and a call graph, started and stopped around compute-heavy work, and the
// hot functions of what it sampled.
#include <nnprof/nnprof.hpp>

#include <chrono>
#include <iostream>

#include "workload.hpp"

namespace {

// Kept out of line so that it shows as a function of its own in the samples.
[[gnu::noinline]] double compute_intensive_operation() {
  const seeds::Matrix a = seeds::Matrix::ramp(160);
  double sum = 0.0;
  const auto until = std::chrono::steady_clock::now() + std::chrono::milliseconds(150);
  while (std::chrono::steady_clock::now() < until) sum += seeds::checksum(seeds::matmul(a, a));
  return sum;
}

}  // namespace

int main() {
  auto profiler = nnprof::CpuProfilerBuilder()
                      .sample_rate(1000)  // 1000 Hz
                      .enable_call_graph(true)
                      .build();

  profiler.start();
  const double result = compute_intensive_operation();
  const nnprof::CpuReport report = profiler.stop();

  std::cout << "CPU Profile:\n";
  std::cout << "Total time: " << report.total_time_ms << "ms\n";
  std::cout << "Hot functions:\n";
  std::size_t shown = 0;
  for (const nnprof::FunctionStats& func : report.function_stats) {
    if (++shown > 5) break;
    std::cout << func.name << ": " << func.total_time_ms << "ms (" << func.percentage << "% of total time)\n";
  }
  std::cout << "samples: " << report.samples << ", checksum: " << result << "\n";
}
