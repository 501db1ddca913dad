// Seed 000 (axonml-profile), "Bottleneck Analysis": profile a matmul and a ReLU, then ask which
// of them is a bottleneck and what to do about it.
#include <nnprof/nnprof.hpp>

#include <iostream>

#include "workload.hpp"

int main() {
  nnprof::Profiler profiler;
  const seeds::Matrix a = seeds::Matrix::ramp(96);

  // Profile various operations
  profiler.start("matmul");
  seeds::Matrix product = seeds::matmul(a, a);
  profiler.stop("matmul");

  profiler.start("relu");
  seeds::relu(product);
  profiler.stop("relu");

  // Analyze for bottlenecks
  const auto bottlenecks = profiler.analyze_bottlenecks();
  for (const auto& b : bottlenecks) {
    std::cout << "[" << nnprof::to_string(b.severity) << "] " << b.name << ": " << b.description << "\n";
    std::cout << "  Suggestion: " << b.suggestion << "\n";
  }
  std::cout << "checksum: " << seeds::checksum(product) << "\n";
}
