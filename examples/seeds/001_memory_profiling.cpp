// Seed 001 (Democratising, "Profiling"), Basic Profiling / Memory Profiling: heap tracking
// started and stopped around allocation-heavy work; the peak, the number of allocations and
// the largest single allocation. Needs the allocation hooks (linked: nnprof::memory).
#include <nnprof/memory.hpp>
#include <nnprof/nnprof.hpp>

#include <iostream>
#include <memory>
#include <vector>

#include "workload.hpp"

namespace {

// Activations of three sizes live at once (1, 4 and 2 MiB), then a batch of small buffers.
[[gnu::noinline]] double memory_intensive_operation() {
  std::vector<float> small(256 * 1024, 1.0f);        // 1 MiB
  std::vector<float> large(1024 * 1024, 2.0f);       // 4 MiB: the largest
  std::vector<float> medium(512 * 1024, 3.0f);       // 2 MiB
  double sum = small[7] + large[7] + medium[7];
  for (int i = 0; i < 100; ++i) {
    auto buffer = std::make_unique<float[]>(1024);  // 4 KiB each
    buffer[0] = static_cast<float>(i);
    sum += buffer[0];
  }
  const seeds::Model model(32);
  sum += seeds::checksum(model.forward(seeds::Matrix::ramp(32)));
  return sum;
}

}  // namespace

int main() {
  std::string why;
  if (!nnprof::heap_hooks_available(&why)) {
    std::cout << "heap tracking unavailable: " << why << "\n";
    return 0;
  }
  auto profiler = nnprof::MemoryProfilerBuilder().build();

  profiler.start();
  const double result = memory_intensive_operation();
  const nnprof::MemoryReport report = profiler.stop();

  std::cout << "Memory Profile:\n";
  std::cout << "Peak usage: " << report.peak_mb << "MB\n";
  std::cout << "Total allocations: " << report.num_allocations << "\n";
  std::cout << "Largest allocation: " << report.largest_allocation_mb << "MB\n";
  std::cout << "checksum: " << result << "\n";
}
