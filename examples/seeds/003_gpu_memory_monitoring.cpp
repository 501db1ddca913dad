// Seed 003 (cookbook's PerformanceProfiler), GPU Memory Monitoring: a region profiled with GPU
// and detailed memory tracking, the share of GPU memory in use checked during the loop
// (get_current_gpu_memory() > 0.9), then the peak GPU memory. nnprof's CUPTI collector traces
// device allocations and samples NVML; a snapshot taken during the loop holds NVML's latest
// sample of memory in use. Where no GPU can be traced the collector says why and the program
// stops there.
#include <nnprof/nnprof.hpp>

#include <cstdint>
#include <cstdio>

#include "workload.hpp"

namespace {
// NVML's latest sample of memory in use on `device` over the device's memory, 0..1; 0 before
// the first sample.
double gpu_memory_fraction(const nnprof::Profile& profile, std::uint32_t device) {
  const nnprof::GpuDevice* info = profile.gpu.device(device);
  if (info == nullptr || info->memory_bytes == 0) return 0.0;
  for (const nnprof::GpuCounter& counter : profile.gpu.counters)
    if (counter.device == device && counter.name == "nvml_memory_used" && !counter.points.empty())
      return counter.points.back().second / static_cast<double>(info->memory_bytes);
  return 0.0;
}
}  // namespace

int main() {
  nnprof::Profiler profiler;
  nnprof::CudaProfilerOptions options;
  options.memory = true;  // detailed_memory: every device allocation and release
  options.nvml = true;
  nnprof::CudaProfiler gpu(profiler, options);  // track_gpu=True
  if (!gpu.status().tracing()) {
    std::printf("GPU memory monitoring unavailable: %s\n", gpu.status().message.c_str());
    return 0;
  }

  double sum = 0.0;
  {
    auto region = profiler.profile("gpu_intensive_task");
    const seeds::Model model(64);  // LargeModel().cuda(): its allocations are traced
    for (int batch = 0; batch < 4; ++batch) {
      sum += seeds::checksum(model.forward(seeds::Matrix::ramp(64)));
      if (gpu_memory_fraction(profiler.snapshot(), 0) > 0.9) std::printf("Warning: High GPU memory usage\n");
    }
  }
  gpu.stop();

  const nnprof::GpuMemoryReport memory = nnprof::gpu_memory_report(profiler.snapshot());
  std::printf("GPU memory report: %zu devices\n", memory.devices.size());
  for (const nnprof::GpuDeviceMemory& device : memory.devices)
    std::printf("Peak GPU memory: %.1f MB (device %u; NVML in use at most %.1f MB)\n",
                static_cast<double>(device.peak_bytes) / 1e6, device.device,
                static_cast<double>(device.nvml_used_max) / 1e6);
  std::printf("checksum %g\n", sum);
}
