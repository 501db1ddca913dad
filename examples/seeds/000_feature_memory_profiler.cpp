// Seed 000 (axonml-profile), Features: "Memory Profiler: Track allocations, deallocations, peak
// usage, and detect memory leaks", with the named counters of a Profiler. A leak here is a
// counter whose bytes were never all freed: the counters of a snapshot say which.
#include <nnprof/nnprof.hpp>

#include <iostream>
#include <memory>
#include <vector>

int main() {
  nnprof::Profiler profiler;
  std::vector<std::unique_ptr<std::vector<float>>> kept;  // what the "leaky" cache holds on to

  for (int step = 0; step < 4; ++step) {
    std::vector<float> activations(64 * 1024);  // 256 KiB, freed every step
    profiler.record_alloc("activations", activations.size() * sizeof(float));
    auto cache_entry = std::make_unique<std::vector<float>>(16 * 1024);  // 64 KiB, never freed
    profiler.record_alloc("kv_cache", cache_entry->size() * sizeof(float));
    kept.push_back(std::move(cache_entry));
    profiler.record_free("activations", activations.size() * sizeof(float));
  }

  const nnprof::Profile profile = profiler.snapshot();
  for (const nnprof::MemoryCounter& c : profile.memory_counters) {
    std::cout << profile.str(c.name) << ": " << c.alloc_count << " allocations (" << c.alloc_bytes << " bytes), "
              << c.free_count << " frees (" << c.freed_bytes << " bytes), peak " << c.peak_bytes << " bytes\n";
    if (c.current_bytes > 0) std::cout << "leak: " << profile.str(c.name) << " holds " << c.current_bytes << " bytes never freed\n";
  }
  std::cout << "Current: " << profiler.current_memory() << " bytes, Peak: " << profiler.peak_memory() << " bytes\n";
}
