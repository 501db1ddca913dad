// Seed 002 (kitsune's profiler), Basic Profiling: a block timed under a name (CUDATimer's
// measure) and its elapsed time read back (get_elapsed). In nnprof the block is a scope of the
// profiler; total_time gives its time. This times the host's work: CUDA-event timing of GPU
// work is nnprof::CudaTimer (002_cuda_event_timing).
#include <nnprof/nnprof.hpp>

#include <chrono>
#include <cstdio>

#include "workload.hpp"

int main() {
  nnprof::Profiler timer;
  const seeds::Model model(128);
  const seeds::Matrix input = seeds::Matrix::ramp(128);
  seeds::Matrix output;

  {
    NNPROF_SCOPE_IN(timer, "forward_pass");  // with timer.measure('forward_pass'):
    output = model.forward(input);
  }

  const std::chrono::duration<double, std::milli> elapsed = timer.total_time("forward_pass");
  std::printf("Forward pass: %.3f ms\n", elapsed.count());
  std::printf("checksum %g\n", seeds::checksum(output));
}
