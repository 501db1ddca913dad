// Seed 002 (kitsune's profiler), Stream Profiling: tasks on several CUDA streams, then each
// stream's efficiency (print_stream_efficiency). nnprof's CUPTI collector traces every stream of
// the process; stream_report() gives per stream how busy it was between its first and last
// operation, its idle gaps and the longest one. Where no GPU can be traced the collector says
// why and the program stops there.
#include <nnprof/nnprof.hpp>

#include <cstdio>
#include <string>

#include "workload.hpp"

int main() {
  nnprof::Profiler profiler;
  nnprof::CudaProfiler gpu(profiler);  // with profiler:
  if (!gpu.status().tracing()) {
    std::printf("Stream profiling unavailable: %s\n", gpu.status().message.c_str());
    return 0;
  }

  double sum = 0.0;
  for (int stream_id = 0; stream_id < 4; ++stream_id) {
    // A task launched on streams[stream_id] is traced on that stream; these run on the host.
    NNPROF_SCOPE_IN(profiler, "execute_task");
    sum += seeds::checksum(seeds::Model(48).forward(seeds::Matrix::ramp(48)));
  }
  gpu.stop();

  // profiler.print_stream_efficiency()
  const nnprof::StreamReport report = nnprof::stream_report(profiler.snapshot());
  std::printf("Stream efficiency (%zu streams with GPU work):\n", report.streams.size());
  for (const nnprof::StreamStats& s : report.streams)
    std::printf("  device %u stream %u: %.1f%% busy, %llu ops, %llu idle gaps (longest %.3f ms)\n", s.device,
                s.stream_id, s.efficiency * 100.0, static_cast<unsigned long long>(s.ops),
                static_cast<unsigned long long>(s.idle_gaps), static_cast<double>(s.longest_gap_ns) / 1e6);
  std::printf("checksum %g\n", sum);
}
