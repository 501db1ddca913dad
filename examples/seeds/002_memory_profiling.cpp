// Seed 002 (kitsune's profiler), Memory Profiling: GPU memory tracked over a training loop and
// its peak. nnprof traces device memory with CUPTI; where no GPU can be traced (no driver, no
// device, no CUPTI) the collector says why and the program stops there.
#include <nnprof/nnprof.hpp>

#include <iostream>

#include "workload.hpp"

int main() {
  nnprof::Profiler profiler;
  nnprof::CudaProfilerOptions options;
  options.memory = true;
  nnprof::CudaProfiler tracker(profiler, options);
  if (!tracker.status().tracing()) {
    std::cout << "GPU memory tracking unavailable: " << tracker.status().message << "\n";
    return 0;
  }
  {
    NNPROF_SCOPE_IN(profiler, "train");
    const seeds::Model model(64);  // a CUDA model's allocations here are traced and attributed
    std::cout << "checksum: " << seeds::checksum(model.forward(seeds::Matrix::ramp(64))) << "\n";
  }
  tracker.stop();
  profiler.print_summary();
  for (const nnprof::GpuDeviceMemory& device : nnprof::gpu_memory_report(profiler.snapshot()).devices)
    std::cout << "Peak memory: " << static_cast<double>(device.peak_bytes) / 1e9 << " GB (device " << device.device
              << ")\n";
}
