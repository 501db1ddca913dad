// Seed 000 (axonml-profile), "Global Profiler": the free functions record into the process-wide
// profiler, which prints its summary.
#include <nnprof/nnprof.hpp>

#include <iostream>
#include <vector>

#include "workload.hpp"

int main() {
  // Use global profiler functions
  nnprof::start("global_operation");
  const seeds::Model model(48);
  const seeds::Matrix out = model.forward(seeds::Matrix::ramp(48));
  nnprof::stop("global_operation");

  const std::vector<float> tensor(256);  // 1024 bytes
  nnprof::record_alloc("global_tensor", tensor.size() * sizeof(float));

  // Access the global profiler instance
  nnprof::Profiler& profiler = nnprof::global_profiler();
  profiler.print_summary();
  std::cout << "checksum: " << seeds::checksum(out) << "\n";
}
