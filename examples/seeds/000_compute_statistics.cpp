// Seed 000 (axonml-profile), "Compute Statistics": operations with declared FLOPs, listed by time.
#include <nnprof/nnprof.hpp>

#include <iostream>

#include "workload.hpp"

int main() {
  nnprof::ComputeProfiler profiler;
  const seeds::Matrix a = seeds::Matrix::ramp(128);

  // Profile with FLOPS tracking: the FLOPs of the multiplication actually done, 2 * 128^3
  profiler.start_with_flops("matmul", 2.0 * 128.0 * 128.0 * 128.0);
  seeds::Matrix product = seeds::matmul(a, a);
  profiler.stop("matmul");

  profiler.start_with_flops("relu", 128.0 * 128.0);
  seeds::relu(product);
  profiler.stop("relu");

  // Get top operations
  for (const auto& op : profiler.top_by_time(5))
    std::cout << op.name << ": " << op.call_count << " calls, " << op.total_time().count() << "ns total, "
              << op.flops_per_second() / 1e9 << " GFLOP/s\n";
  std::cout << "checksum: " << seeds::checksum(product) << "\n";
}
