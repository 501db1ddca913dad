// Seed 000 (axonml-profile), Features: "Bottleneck Detection: Automatically identify slow
// operations, memory hotspots, and throughput issues": one operation that takes most of the
// time and one that computes its declared FLOPs slowly.
#include <nnprof/nnprof.hpp>

#include <iostream>

#include "workload.hpp"

namespace {
// A chain of dependent divisions: each waits for the last, so it runs far below 1 GFLOP/s.
double dependent_divisions(int count) {
  double x = 1e300;
  for (int i = 0; i < count; ++i) x = x / 1.0000001 + 1e-300;
  return x;
}
}  // namespace

int main() {
  nnprof::Profiler profiler;
  const seeds::Matrix a = seeds::Matrix::ramp(128);

  profiler.start("matmul");
  const seeds::Matrix product = seeds::matmul(a, a);
  profiler.stop("matmul");

  constexpr int kDivisions = 50'000;
  profiler.start_with_flops("normalize", 2.0 * kDivisions);  // a division and an addition each
  const double x = dependent_divisions(kDivisions);
  profiler.stop("normalize");

  for (const nnprof::Bottleneck& b : profiler.analyze_bottlenecks())
    std::cout << "[" << nnprof::to_string(b.severity) << "] " << nnprof::to_string(b.type) << " " << b.name << ": "
              << b.description << "\n";
  std::cout << "checksum: " << seeds::checksum(product) + x << "\n";
}
