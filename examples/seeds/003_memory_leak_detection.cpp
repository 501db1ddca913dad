// Seed 003 (cookbook's PerformanceProfiler), Memory Leak Detection: a loop that allocates data
// on every iteration and never releases it, profiled as a region; then whether a leak was
// detected and how the process's memory grew. The program reports its buffers to nnprof's named
// memory counters (record_alloc / record_free); the bottleneck analysis flags a counter that
// still holds more than 5% of what it allocated (MemoryLeak). The region gives the process's
// RSS at its start and end. The loop's scratch buffer is freed every time and is not flagged.
#include <nnprof/nnprof.hpp>

#include <cstdint>
#include <cstdio>
#include <numeric>
#include <vector>

namespace {
constexpr std::size_t kFloats = 16 * 1024;  // 64 KiB per iteration
constexpr std::uint64_t kBytes = kFloats * sizeof(float);
}  // namespace

int main() {
  nnprof::Profiler profiler;
  std::vector<std::vector<float>> kept;  // where the forgotten data piles up
  double sink = 0.0;
  {
    auto region = profiler.profile("memory_leak_check");
    for (int i = 0; i < 100; ++i) {
      std::vector<float> data(kFloats, static_cast<float>(i));  // data = allocate_data()
      profiler.record_alloc("data", kBytes);
      std::vector<float> scratch(kFloats);  // process_data(data)
      profiler.record_alloc("scratch", kBytes);
      std::partial_sum(data.begin(), data.end(), scratch.begin());
      sink += scratch.back();
      profiler.record_free("scratch", kBytes);
      kept.push_back(std::move(data));  // Forgot to clean up data!
    }
  }

  bool memory_leak_detected = false;
  for (const nnprof::Bottleneck& b : profiler.analyze_bottlenecks())
    if (b.type == nnprof::BottleneckType::MemoryLeak) {
      memory_leak_detected = true;
      std::printf("[%s] memory_leak %s: %s\n", nnprof::to_string(b.severity), b.name.c_str(), b.description.c_str());
    }
  const nnprof::RegionMetrics metrics = *profiler.get_metrics("memory_leak_check");
  if (memory_leak_detected) {
    std::printf("Potential memory leak detected\n");
    std::printf("Memory grew from %.1fMB to %.1fMB\n", static_cast<double>(metrics.memory.rss_initial_bytes) / 1e6,
                static_cast<double>(metrics.memory.rss_final_bytes) / 1e6);
  } else {
    std::printf("no memory leak detected\n");
  }
  std::printf("still held: %llu bytes; checksum %g\n", static_cast<unsigned long long>(profiler.current_memory()),
              sink + static_cast<double>(kept.size()));
}
