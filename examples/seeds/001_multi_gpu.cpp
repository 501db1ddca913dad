// Seed 001 (Democratising, "Profiling"), GPU Profiling / Multi-GPU Analysis: one CUPTI
// collector traces every device of the process; stream_report() gives each device's compute
// and memory utilisation and the peer-to-peer bandwidth between devices. Where no GPU can be
// traced the collector says why and the program stops there.
#include <nnprof/nnprof.hpp>

#include <iostream>

#include "workload.hpp"

int main() {
  nnprof::Profiler profiler;
  nnprof::CudaProfilerOptions options;
  options.synchronize_at_stop = true;  // every device finishes its queued work before stop() returns
  nnprof::CudaProfiler gpu(profiler, options);  // all devices: CUPTI's subscriber is process-wide
  if (!gpu.status().tracing()) {
    std::cout << "multi-GPU profiling unavailable: " << gpu.status().message << "\n";
    return 0;
  }

  {
    // The training step here runs on the CPU; a distributed step's kernels and peer copies
    // on every device are traced.
    NNPROF_SCOPE_IN(profiler, "distributed_training_step");
    const seeds::Model model(64);
    std::cout << "checksum: " << seeds::checksum(model.forward(seeds::Matrix::ramp(64))) << "\n";
  }
  gpu.stop();
  const nnprof::StreamReport report = nnprof::stream_report(profiler.snapshot());
  std::cout << "devices with GPU work: " << report.devices.size() << "\n";

  for (const nnprof::DeviceStats& stats : report.devices) {
    std::cout << "Device " << stats.device << "\n";
    std::cout << "  Compute utilization: " << stats.kernel_busy_fraction * 100.0 << "%\n";
    std::cout << "  Memory utilization: " << stats.nvml_memory_utilization_mean << "%\n";  // < 0: no NVML sample
    for (const nnprof::PeerBandwidth& peer : report.peers)
      if (peer.src_device == stats.device)
        std::cout << "  P2P bandwidth to device " << peer.dst_device << ": " << peer.gbytes_per_s << "GB/s\n";
  }
}
