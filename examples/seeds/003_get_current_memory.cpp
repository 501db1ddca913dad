// Seed 003 (cookbook's PerformanceProfiler), get_current_memory(): the process's RAM now, in
// bytes (the Python form gives megabytes), not the named counters of record_alloc.
#include <nnprof/nnprof.hpp>

#include <iostream>
#include <vector>

int main() {
  nnprof::Profiler profiler;
  const std::uint64_t before = nnprof::get_current_memory();
  std::vector<char> buffer(32U << 20);
  for (std::size_t i = 0; i < buffer.size(); i += 4096) buffer[i] = 1;  // resident now
  const std::uint64_t after = profiler.current_rss();
  std::cout << "current RAM: " << static_cast<double>(after) / 1e6 << " MB\n";
  std::cout << "grew by 32 MiB buffer: " << (after >= before + (24U << 20) ? "yes" : "no") << "\n";
  std::cout << "named counters (current_memory): " << profiler.current_memory() << " bytes\n";
  return buffer[4096] == 1 ? 0 : 1;
}
