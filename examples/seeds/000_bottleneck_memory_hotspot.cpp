// Seed 000 (axonml-profile), Bottleneck Types: "MemoryHotspot: Large memory allocation (>30% of
// peak memory)", from the allocations the program records with record_alloc.
#include <nnprof/nnprof.hpp>

#include <iostream>
#include <vector>

int main() {
  nnprof::Profiler profiler;
  std::vector<float> scores(768 * 1024);  // 3 MiB: 75% of the peak
  std::vector<float> bias(256 * 1024);    // 1 MiB
  profiler.record_alloc("attention_scores", scores.size() * sizeof(float));
  profiler.record_alloc("bias", bias.size() * sizeof(float));
  profiler.record_free("attention_scores", scores.size() * sizeof(float));
  profiler.record_free("bias", bias.size() * sizeof(float));

  for (const nnprof::Bottleneck& b : profiler.analyze_bottlenecks())
    std::cout << "[" << nnprof::to_string(b.severity) << "] " << nnprof::to_string(b.type) << " " << b.name << ": "
              << b.description << "\n";
  std::cout << "peak: " << profiler.peak_memory() << " bytes\n";
}
