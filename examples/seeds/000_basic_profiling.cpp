// Seed 000 (axonml-profile), "Basic Profiling": time one forward pass with start/stop and
// read its total and average time back.
#include <nnprof/nnprof.hpp>

#include <iostream>

#include "workload.hpp"

int main() {
  // Create a profiler
  nnprof::Profiler profiler;
  const seeds::Model model(64);
  const seeds::Matrix input = seeds::Matrix::ramp(64);

  // Profile an operation
  profiler.start("forward_pass");
  const seeds::Matrix output = model.forward(input);
  profiler.stop("forward_pass");

  // Check timing
  const auto total = profiler.total_time("forward_pass");
  const auto avg = profiler.avg_time("forward_pass");
  std::cout << "Total: " << total.count() << "ns, Average: " << avg.count() << "ns\n";
  std::cout << "output checksum: " << seeds::checksum(output) << "\n";
}
