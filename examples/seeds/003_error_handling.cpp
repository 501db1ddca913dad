// Seed 003 (cookbook's PerformanceProfiler), Error Handling: an operation that throws inside a
// profiled region; the exception reaches the caller, and the region's partial results are
// still there (has_results, get_metrics). nnprof ends the region as the exception leaves it and
// marks its metrics incomplete (RegionMetrics::completed is false).
#include <nnprof/nnprof.hpp>

#include <cstdio>
#include <stdexcept>

#include "workload.hpp"

namespace {
// Some work, then a failure.
double risky_operation() {
  const seeds::Model model(96);
  const double sum = seeds::checksum(model.forward(seeds::Matrix::ramp(96)));
  if (sum != 0.0) throw std::runtime_error("the data source went away after the first batch");
  return sum;
}
}  // namespace

int main() {
  nnprof::Profiler profiler;
  try {
    auto region = profiler.profile("potentially_failing_operation");
    risky_operation();
  } catch (const std::exception& e) {
    std::printf("Operation failed: %s\n", e.what());
  }

  if (profiler.has_results()) {
    const nnprof::RegionMetrics partial_metrics = *profiler.get_metrics();
    std::printf("Partial timing: %.6fs (%s, completed: %s)\n", static_cast<double>(partial_metrics.timing.wall_ns) / 1e9,
                partial_metrics.name.c_str(), partial_metrics.completed ? "yes" : "no");
  }
  std::printf("scope calls: %llu\n",
              static_cast<unsigned long long>(profiler.call_count("potentially_failing_operation")));
}
