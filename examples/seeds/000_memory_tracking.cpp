// Seed 000 (axonml-profile), "Memory Tracking": named allocations reported by the program,
// current and peak memory, then a deallocation.
#include <nnprof/nnprof.hpp>

#include <iostream>
#include <vector>

int main() {
  nnprof::Profiler profiler;

  // Real buffers, so that the numbers recorded are the sizes of memory the program holds.
  std::vector<float> weights(1024 * 1024, 0.5f);   // 4 MB
  std::vector<float> activations(512 * 1024, 0.0f);  // 2 MB

  // Track allocations
  profiler.record_alloc("weights", weights.size() * sizeof(float));
  profiler.record_alloc("activations", activations.size() * sizeof(float));

  // Check memory usage
  std::cout << "Current: " << profiler.current_memory() << " bytes\n";
  std::cout << "Peak: " << profiler.peak_memory() << " bytes\n";

  // Record deallocation
  profiler.record_free("activations", activations.size() * sizeof(float));
  activations = std::vector<float>();  // the memory itself goes back too

  std::cout << "After freeing activations: current " << profiler.current_memory() << " bytes, peak "
            << profiler.peak_memory() << " bytes\n";
}
