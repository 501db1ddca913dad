// Seed 000 (axonml-profile), Bottleneck Types: "SlowOperation: Operation taking
// disproportionate time (>20% of total time)".
#include <nnprof/nnprof.hpp>

#include <iostream>

#include "workload.hpp"

int main() {
  nnprof::Profiler profiler;
  seeds::Matrix x = seeds::Matrix::ramp(64);
  for (int step = 0; step < 3; ++step) {
    profiler.start("embedding");
    seeds::relu(x);
    profiler.stop("embedding");
    profiler.start("attention");  // a matmul: far more than 20% of the time
    x = seeds::matmul(x, x);
    seeds::relu(x);
    profiler.stop("attention");
  }
  for (const nnprof::Bottleneck& b : profiler.analyze_bottlenecks())
    std::cout << "[" << nnprof::to_string(b.severity) << "] " << nnprof::to_string(b.type) << " " << b.name << ": "
              << b.description << " (measured " << b.value << ", threshold " << b.threshold << ")\n";
  std::cout << "checksum: " << seeds::checksum(x) << "\n";
}
