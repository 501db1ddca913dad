// Seed 002 (kitsune's profiler), JSON Report: timing per phase, memory peaks and throughput.
// In nnprof's JSON report: timing.<scope> (mean_ns, std_ns, min_ns, max_ns); memory.peak_bytes
// (the named counters; heap.peak with heap tracking); throughput.<iteration scope>.items_per_second
// (samples/s) and calls_per_second (iterations/s), from add_items on the iteration's scope.
#include <nnprof/nnprof.hpp>

#include <iostream>

#include "workload.hpp"

int main() {
  nnprof::Profiler profiler;
  const seeds::Model model(48);
  constexpr std::uint64_t kBatch = 32;
  double sum = 0.0;
  for (int i = 0; i < 10; ++i) {
    NNPROF_SCOPE_IN(profiler, "iteration");
    seeds::Matrix activations;
    {
      NNPROF_SCOPE_IN(profiler, "forward_pass");
      activations = model.forward(seeds::Matrix::ramp(48));
      profiler.record_alloc("activations", activations.values.size() * sizeof(float));
    }
    {
      NNPROF_SCOPE_IN(profiler, "backward_pass");
      seeds::relu(activations);
      profiler.record_free("activations", activations.values.size() * sizeof(float));
    }
    sum += seeds::checksum(activations);
    profiler.add_items("iteration", kBatch);
  }
  profiler.save("profile.json");
  std::cout << "peak allocated: " << profiler.peak_memory() << " bytes\n";
  std::cout << "wrote profile.json; checksum " << sum << "\n";
}
