// Seed 000 (axonml-profile), Features: "Compute Profiler: Measure operation times, FLOPS,
// throughput, and bandwidth". The work of each call (FLOPs, bytes moved) comes from
// nnprof::flops, which knows the cost of common operations.
#include <nnprof/nnprof.hpp>

#include <iostream>

#include "workload.hpp"

int main() {
  nnprof::ComputeProfiler profiler;
  const seeds::Matrix a = seeds::Matrix::ramp(64);
  double sink = 0.0;
  for (int i = 0; i < 5; ++i) {
    const nnprof::OpCost cost = nnprof::flops::matmul(64, 64, 64);
    profiler.start_with_flops("matmul", cost.flops, static_cast<std::uint64_t>(cost.bytes));
    seeds::Matrix c = seeds::matmul(a, a);
    profiler.stop("matmul");

    profiler.start_with_flops("relu", 64.0 * 64.0, 2 * 64 * 64 * sizeof(float));
    seeds::relu(c);
    profiler.stop("relu");
    sink += seeds::checksum(c);
  }

  for (const nnprof::OperationStats& op : profiler.all_stats())
    std::cout << op.name << ": " << op.call_count << " calls, avg " << op.avg_time().count() << "ns, "
              << op.flops_per_second() / 1e9 << " GFLOP/s, " << op.bytes_per_second() / 1e9 << " GB/s, "
              << op.arithmetic_intensity() << " FLOP/byte\n";
  std::cout << "checksum: " << sink << "\n";
}
