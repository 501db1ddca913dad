// Seed 000 (axonml-profile), Features: "RAII Profiling: Scope-based profiling with automatic
// start/stop via guards" -- the guard stops its scope however the block is left, an exception
// included.
#include <nnprof/nnprof.hpp>

#include <iostream>
#include <stdexcept>

#include "workload.hpp"

namespace {
double load_batch(nnprof::Profiler& profiler, int index) {
  const nnprof::ProfileGuard guard(profiler, "load_batch");
  seeds::Matrix batch = seeds::Matrix::ramp(32);
  seeds::relu(batch);
  if (index == 2) throw std::runtime_error("corrupt batch 2");
  return seeds::checksum(batch);
}
}  // namespace

int main() {
  nnprof::Profiler profiler;
  double sink = 0.0;
  int failed = 0;
  for (int i = 0; i < 4; ++i) {
    try {
      sink += load_batch(profiler, i);
    } catch (const std::runtime_error& e) {
      ++failed;
      std::cout << "caught: " << e.what() << "\n";
    }
  }
  // All four calls closed their scope, the one that threw too.
  std::cout << "load_batch: " << profiler.call_count("load_batch") << " calls (" << failed << " threw), total "
            << profiler.total_time("load_batch").count() << "ns\n";
  std::cout << "checksum: " << sink << "\n";
}
