// Seed 001 (Democratising, "Profiling"), Best Practices / Systematic profiling: computation
// (CPU samples), memory (heap tracking) and data loading (scopes) profiled one at a time, then
// analysed together into one order of action and one HTML report.
#include <nnprof/memory.hpp>
#include <nnprof/nnprof.hpp>

#include <iostream>
#include <sstream>
#include <vector>

#include "workload.hpp"

namespace {

[[gnu::noinline]] double forward_passes(int n) {
  const seeds::Model model(128);
  double sum = 0.0;
  for (int i = 0; i < n; ++i) sum += seeds::checksum(model.forward(seeds::Matrix::ramp(128)));
  return sum;
}

nnprof::Profile profile_computation() {
  auto profiler = nnprof::CpuProfilerBuilder().sample_rate(1000).build();
  profiler.start();
  const double sum = forward_passes(300);
  nnprof::CpuReport report = profiler.stop();
  std::cout << "computation: " << report.samples << " CPU samples (checksum " << sum << ")\n";
  return std::move(report.profile);
}

nnprof::Profile profile_memory_usage() {
  auto profiler = nnprof::MemoryProfilerBuilder().build();
  profiler.start();
  std::vector<std::vector<float>> activations;
  for (int layer = 0; layer < 8; ++layer) activations.emplace_back(64 * 1024 * (layer + 1), 1.0f);
  nnprof::MemoryReport report = profiler.stop();
  std::cout << "memory: peak " << report.peak_mb << "MB, " << report.num_allocations << " allocations\n";
  return std::move(report.profile);
}

nnprof::Profile profile_data_loading() {
  nnprof::Profiler profiler;
  double sum = 0.0;
  for (int batch = 0; batch < 20; ++batch) {
    NNPROF_SCOPE_IN(profiler, "load_batch");
    std::stringstream file;
    for (int i = 0; i < 2000; ++i) file << (i * batch) % 97 << ' ';
    float value = 0.0f;
    while (file >> value) sum += value;
    profiler.add_items("load_batch", 1);
  }
  std::cout << "data loading: 20 batches (checksum " << sum << ")\n";
  return profiler.snapshot();
}

}  // namespace

int main() {
  nnprof::PerformanceAnalysis analysis;
  analysis.add_profile(profile_computation(), "compute");
  if (std::string why; nnprof::heap_hooks_available(&why))
    analysis.add_profile(profile_memory_usage(), "memory");
  else
    std::cout << "memory: not profiled, heap tracking unavailable: " << why << "\n";
  analysis.add_profile(profile_data_loading(), "data loading");
  analysis.analyze();

  for (const nnprof::Recommendation& rec : analysis.recommendations())
    std::cout << "Priority " << rec.priority << ": " << rec.title << "\n";
  analysis.generate_report("profiling_report.html");
  std::cout << "wrote profiling_report.html (" << analysis.results().size() << " profiles)\n";
}
