// Seed 003 (cookbook's PerformanceProfiler), Multi-Operation Profiling: three operations as
// regions, then each one's share of the total time (get_timing_breakdown).
#include <nnprof/nnprof.hpp>

#include <cstdio>

#include "workload.hpp"

int main() {
  nnprof::Profiler profiler;
  seeds::Matrix data;
  seeds::Matrix processed;
  {
    auto region = profiler.profile("data_loading");
    data = seeds::Matrix::ramp(64);
  }
  {
    auto region = profiler.profile("preprocessing");
    processed = data;
    seeds::relu(processed);
  }
  {
    auto region = profiler.profile("training");
    const seeds::Model model(128);
    processed = model.forward(seeds::Matrix::ramp(128));
  }
  std::printf("Operation breakdown:\n");
  for (const nnprof::RegionShare& op : profiler.get_timing_breakdown())
    std::printf("  %s: %.6fs (%.1f%%)\n", op.name.c_str(), static_cast<double>(op.wall_ns) / 1e9, op.share * 100.0);
  std::printf("checksum %g\n", seeds::checksum(processed));
}
