// Seed 000 (axonml-profile), Features: "Thread-Safe: All profilers are thread-safe": threads
// share one Profiler and one ComputeProfiler, and every call and byte is counted once.
#include <nnprof/nnprof.hpp>

#include <iostream>
#include <thread>
#include <vector>

#include "workload.hpp"

int main() {
  nnprof::Profiler profiler;
  nnprof::ComputeProfiler compute;
  constexpr int kThreads = 4;
  constexpr int kSteps = 500;
  std::vector<std::thread> threads;
  std::vector<double> sums(kThreads, 0.0);
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < kSteps; ++i) {
        seeds::Matrix x = seeds::Matrix::ramp(8);
        profiler.start("step");
        profiler.record_alloc("buffers", x.values.size() * sizeof(float));
        compute.start_with_flops("relu", static_cast<double>(x.values.size()));
        seeds::relu(x);
        compute.stop("relu");
        profiler.record_free("buffers", x.values.size() * sizeof(float));
        profiler.stop("step");
        sums[t] += seeds::checksum(x);
      }
    });
  }
  for (std::thread& t : threads) t.join();

  const auto relu = compute.stats("relu");
  std::cout << "step: " << profiler.call_count("step") << " calls\n";
  std::cout << "relu: " << (relu ? relu->call_count : 0) << " calls, " << (relu ? relu->flops : 0.0) << " FLOPs\n";
  std::cout << "buffers: current " << profiler.current_memory() << " bytes, peak " << profiler.peak_memory()
            << " bytes\n";
  std::cout << "checksum: " << sums[0] + sums[1] + sums[2] + sums[3] << "\n";
}
