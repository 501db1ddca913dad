// Seed 002 (kitsune's profiler), Memory Tracking: the allocations of a block (x, and y = x·x)
// and their timeline (get_allocation_timeline). The program reports its tensors with
// record_alloc / record_free; every call is an event of the profile's memory timeline
// (Profile::memory_events), in order, with its time, counter and size. Device allocations of a
// traced GPU have the same timeline in gpu_memory_report(profile).timeline; the whole heap's
// is Profile::heap_samples under heap tracking.
#include <nnprof/nnprof.hpp>

#include <cstdint>
#include <cstdio>

#include "workload.hpp"

int main() {
  nnprof::Profiler tracker;
  constexpr std::size_t kN = 256;
  constexpr std::uint64_t kBytes = kN * kN * sizeof(float);
  double sum = 0.0;
  {
    NNPROF_SCOPE_IN(tracker, "tracked_block");  // with tracker:
    const seeds::Matrix x = seeds::Matrix::ramp(kN);
    tracker.record_alloc("x", kBytes);
    const seeds::Matrix y = seeds::matmul(x, x);
    tracker.record_alloc("y", kBytes);
    sum = seeds::checksum(y);
    tracker.record_free("y", kBytes);
    tracker.record_free("x", kBytes);
  }

  const nnprof::Profile profile = tracker.snapshot();
  const auto& timeline = profile.memory_events;  // timeline = tracker.get_allocation_timeline()
  std::printf("Allocation timeline (%zu events):\n", timeline.size());
  std::int64_t in_use = 0;
  for (const nnprof::MemoryEvent& event : timeline) {
    in_use += event.delta_bytes;
    const std::string& name = profile.str(profile.memory_counters[event.counter].name);
    std::printf("  %+.3f ms %s %+lld bytes, in use %lld bytes\n",
                static_cast<double>(event.time_ns - timeline.front().time_ns) / 1e6, name.c_str(),
                static_cast<long long>(event.delta_bytes), static_cast<long long>(in_use));
  }
  std::printf("peak %llu bytes\n", static_cast<unsigned long long>(profile.memory.peak_bytes));
  std::printf("checksum %g\n", sum);
}
