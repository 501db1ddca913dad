// Seed 000 (axonml-profile), Bottleneck Types: "MemoryLeak: Memory not freed (>5% of
// allocations)", from the allocations the program records with record_alloc/record_free.
#include <nnprof/nnprof.hpp>

#include <iostream>
#include <memory>
#include <vector>

int main() {
  nnprof::Profiler profiler;
  std::vector<std::unique_ptr<std::vector<float>>> history;  // grows every step, never trimmed
  for (int step = 0; step < 10; ++step) {
    std::vector<float> activations(64 * 1024);  // freed: 256 KiB a step
    profiler.record_alloc("activations", activations.size() * sizeof(float));
    history.push_back(std::make_unique<std::vector<float>>(16 * 1024));  // kept: 64 KiB a step, 20% of all
    profiler.record_alloc("loss_history", history.back()->size() * sizeof(float));
    profiler.record_free("activations", activations.size() * sizeof(float));
  }

  for (const nnprof::Bottleneck& b : profiler.analyze_bottlenecks())
    std::cout << "[" << nnprof::to_string(b.severity) << "] " << nnprof::to_string(b.type) << " " << b.name << ": "
              << b.description << "\n";
  std::cout << "still held: " << profiler.current_memory() << " bytes\n";
}
