// Seed 000 (axonml-profile), Bottleneck Types: "LowThroughput: Low computational throughput
// (<1 GFLOPS)": an operation whose declared FLOPs take long.
#include <nnprof/nnprof.hpp>

#include <iostream>

namespace {
// A chain of dependent divisions: each waits for the one before, so the FLOP rate stays far
// below 1 GFLOP/s however fast the machine.
double dependent_divisions(int count) {
  double x = 1e300;
  for (int i = 0; i < count; ++i) x = x / 1.0000001 + 1e-300;
  return x;
}
}  // namespace

int main() {
  nnprof::Profiler profiler;
  constexpr int kDivisions = 100'000;
  profiler.start_with_flops("layer_norm", 2.0 * kDivisions);  // a division and an addition each
  const double x = dependent_divisions(kDivisions);
  profiler.stop("layer_norm");

  for (const nnprof::Bottleneck& b : profiler.analyze_bottlenecks())
    std::cout << "[" << nnprof::to_string(b.severity) << "] " << nnprof::to_string(b.type) << " " << b.name << ": "
              << b.description << " (measured " << b.value << ", threshold " << b.threshold << ")\n";
  std::cout << "result: " << x << "\n";
}
