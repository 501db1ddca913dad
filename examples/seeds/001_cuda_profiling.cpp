// Seed 001 (Democratising, "Profiling"), GPU Profiling / CUDA Profiling: CUPTI tracing of
// kernels, copies and device memory around a forward pass, then each kernel's time and
// occupancy. Where no GPU can be traced (no driver, no device, no CUPTI) the collector says
// why and the program stops there.
#include <nnprof/nnprof.hpp>

#include <iostream>

#include "workload.hpp"

int main() {
  nnprof::Profiler profiler;
  nnprof::CudaProfilerOptions options;
  options.memory = true;   // track_memory
  options.kernels = true;  // track_kernels
  options.memcpy = true;   // track_transfers
  nnprof::CudaProfiler gpu(profiler, options);  // never throws: status() says whether it traces
  if (!gpu.status().tracing()) {
    std::cout << "CUDA profiling unavailable: " << gpu.status().message << "\n";
    return 0;
  }

  {
    // The model here runs on the CPU; a CUDA model's kernels and copies launched in this scope
    // are traced and attributed to it.
    NNPROF_SCOPE_IN(profiler, "forward");
    const seeds::Model model(64);
    std::cout << "checksum: " << seeds::checksum(model.forward(seeds::Matrix::ramp(64))) << "\n";
  }
  gpu.stop();
  const nnprof::Profile report = profiler.snapshot();

  std::cout << "CUDA Kernel Profile:\n";
  for (const nnprof::GpuOp& op : report.gpu.ops) {
    if (op.kind != nnprof::GpuOpKind::Kernel) continue;
    const nnprof::GpuKernel& kernel = report.gpu.kernels.at(op.detail);
    std::cout << report.str(op.name) << ": " << static_cast<double>(op.duration_ns()) / 1e3 << "us, "
              << kernel.occupancy * 100.0 << "% occupancy\n";
  }
  for (const nnprof::GpuDeviceMemory& device : nnprof::gpu_memory_report(report).devices)
    std::cout << "device " << device.device << ": peak " << static_cast<double>(device.peak_bytes) / (1024.0 * 1024.0)
              << "MB allocated\n";
}
