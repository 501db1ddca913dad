// Seed 000 (axonml-profile), Bottleneck Types: "HighCallCount: Operation called too frequently
// (>10,000 calls)".
#include <nnprof/nnprof.hpp>

#include <iostream>

int main() {
  nnprof::Profiler profiler;
  float value = 0.5f;
  for (int i = 0; i < 10'001; ++i) {  // one element at a time: one call per element
    profiler.start("elementwise_add");
    value = value * 0.999f + 0.001f;
    profiler.stop("elementwise_add");
  }
  for (const nnprof::Bottleneck& b : profiler.analyze_bottlenecks())
    std::cout << "[" << nnprof::to_string(b.severity) << "] " << nnprof::to_string(b.type) << " " << b.name << ": "
              << b.description << " (measured " << b.value << ", threshold " << b.threshold << ")\n";
  std::cout << "value: " << value << "\n";
}
