// Seed 000 (axonml-profile), "RAII Scope Profiling": a guard object and a macro that time the
// rest of their block.
#include <nnprof/nnprof.hpp>

#include <iostream>

#include "workload.hpp"

namespace {
double perform_computation() { return seeds::checksum(seeds::matmul(seeds::Matrix::ramp(48), seeds::Matrix::ramp(48))); }
double perform_another_computation() {
  seeds::Matrix m = seeds::Matrix::ramp(96);
  seeds::relu(m);
  return seeds::checksum(m);
}
}  // namespace

int main() {
  nnprof::Profiler profiler;
  double sink = 0.0;

  // Using ProfileGuard directly
  {
    const nnprof::ProfileGuard guard(profiler, "expensive_operation");
    // Operation automatically timed from guard creation to the end of the block
    sink += perform_computation();
  }

  // Or using the macro
  {
    NNPROF_SCOPE_IN(profiler, "another_operation");
    sink += perform_another_computation();
  }

  for (const char* name : {"expensive_operation", "another_operation"})
    std::cout << name << ": " << profiler.call_count(name) << " call, " << profiler.total_time(name).count()
              << "ns\n";
  std::cout << "checksum: " << sink << "\n";
}
