// Seed 002 (kitsune's profiler), CUDA Event Timing: timer.start / timer.stop around GPU work and
// get_elapsed. nnprof::CudaTimer records the CUDA events (GPU time between them); it throws,
// naming the reason, where no CUDA driver or device is usable. The same start/stop pair on the
// Profiler times the block on the host clock, which works everywhere.
#include <nnprof/nnprof.hpp>

#include <chrono>
#include <cstdio>

#include "workload.hpp"

int main() {
  const seeds::Model model(128);
  const seeds::Matrix input = seeds::Matrix::ramp(128);
  seeds::Matrix output;

  try {
    nnprof::CudaTimer timer;
    timer.start("kernel_launch");
    output = model.forward(input);  // a CUDA model's kernels here are what the events time
    timer.stop("kernel_launch");
    const nnprof::CudaTiming elapsed = timer.result("kernel_launch");
    std::printf("kernel_launch (CUDA events): %.3f ms over %u run\n", elapsed.total_ms, elapsed.count);
  } catch (const nnprof::Error& error) {
    std::printf("CUDA event timing unavailable: %s\n", error.what());
  }

  nnprof::Profiler profiler;
  profiler.start("kernel_launch");
  output = model.forward(input);
  profiler.stop("kernel_launch");
  const std::chrono::duration<double, std::milli> elapsed = profiler.total_time("kernel_launch");
  std::printf("kernel_launch (host clock): %.3f ms, %llu call\n", elapsed.count(),
              static_cast<unsigned long long>(profiler.call_count("kernel_launch")));
  std::printf("checksum %g\n", seeds::checksum(output));
}
