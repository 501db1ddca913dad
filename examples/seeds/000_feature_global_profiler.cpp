// Seed 000 (axonml-profile), Features: "Global Profiler: Singleton profiler instance for
// convenient access throughout codebase": functions that know no profiler record into the same
// one, from any thread.
#include <nnprof/nnprof.hpp>

#include <iostream>
#include <thread>

#include "workload.hpp"

namespace {
double attention() {
  NNPROF_SCOPE("attention");  // the global profiler, no object passed around
  return seeds::checksum(seeds::matmul(seeds::Matrix::ramp(32), seeds::Matrix::ramp(32)));
}

double feed_forward() {
  nnprof::start("feed_forward");
  seeds::Matrix x = seeds::Matrix::ramp(48);
  seeds::relu(x);
  nnprof::stop("feed_forward");
  return seeds::checksum(x);
}
}  // namespace

int main() {
  double sink = attention() + feed_forward();
  std::thread worker([&] { sink += attention(); });
  worker.join();

  nnprof::Profiler& profiler = nnprof::global_profiler();
  std::cout << "one instance: " << (&profiler == &nnprof::global_profiler() ? "yes" : "no") << "\n";
  std::cout << "attention: " << profiler.call_count("attention") << " calls\n";
  std::cout << "feed_forward: " << profiler.call_count("feed_forward") << " calls\n";
  std::cout << "checksum: " << sink << "\n";
}
