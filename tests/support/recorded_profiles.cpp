// The profiles of sample_profiles.hpp that a real Profiler records, and the million-span
// one. A separate object: a program that uses only the hand-built profiles does not pull in
// the Profiler.
#include <algorithm>
#include <chrono>
#include <cstdint>
#include <thread>

#include "nnprof/nnprof.hpp"
#include "sample_profiles.hpp"

namespace nnprof::testing {
namespace {

// Busy work rather than sleep: spans then last what they say on a loaded machine too.
void spin_for(std::chrono::microseconds duration) {
  const auto end = std::chrono::steady_clock::now() + duration;
  while (std::chrono::steady_clock::now() < end) {
  }
}

void record_training(Profiler& profiler, int steps) {
  for (int step = 0; step < steps; ++step) {
    NNPROF_SCOPE_IN(profiler, "train_step");
    {
      NNPROF_SCOPE_IN(profiler, "forward");
      for (int layer = 0; layer < 3; ++layer) {
        NNPROF_SCOPE_IN(profiler, "attention");
        profiler.record_alloc("activations", 256 * 1024);
        {
          NNPROF_SCOPE_IN(profiler, "matmul");
          spin_for(std::chrono::microseconds(300));
        }
        NNPROF_SCOPE_IN(profiler, "softmax");
        spin_for(std::chrono::microseconds(80));
      }
    }
    {
      NNPROF_SCOPE_IN(profiler, "backward");
      spin_for(std::chrono::microseconds(500));
      for (int layer = 0; layer < 3; ++layer) profiler.record_free("activations", 256 * 1024);
    }
    profiler.add_items("train_step", 32);
  }
}

}  // namespace

Profile recorded_profile() {
  Profiler profiler;
  std::thread loader([&] {
    set_thread_name("data <loader>");
    for (int batch = 0; batch < 10; ++batch) {
      NNPROF_SCOPE_IN(profiler, "load_batch");
      profiler.record_alloc("pinned buffers", 1 << 20);
      {
        NNPROF_SCOPE_IN(profiler, "<script>alert(1)</script>");
        spin_for(std::chrono::microseconds(400));
      }
      profiler.record_free("pinned buffers", 1 << 20);
    }
  });
  record_training(profiler, 12);
  loader.join();
  return profiler.snapshot();
}

Profile million_span_profile() {
  Profile p = synthetic_profile(kMillionSpans, 4);
  p.strings.push_back("activations");
  for (const Span& span : p.spans) {
    if (span.thread != 0) continue;
    if (span.depth == 3) p.memory_events.push_back(MemoryEvent{span.start_ns, 0, 0, 4096});
    if (span.depth == 1) p.memory_events.push_back(MemoryEvent{span.end_ns, 0, 0, -4 * 4096 + 512});
  }
  std::stable_sort(p.memory_events.begin(), p.memory_events.end(),
                   [](const MemoryEvent& a, const MemoryEvent& b) { return a.time_ns < b.time_ns; });
  MemoryCounter counter;
  counter.name = static_cast<StringId>(p.strings.size() - 1);
  for (const MemoryEvent& e : p.memory_events) {
    counter.current_bytes += e.delta_bytes;
    if (e.delta_bytes > 0) {
      counter.alloc_bytes += static_cast<std::uint64_t>(e.delta_bytes);
      ++counter.alloc_count;
    } else {
      counter.freed_bytes += static_cast<std::uint64_t>(-e.delta_bytes);
      ++counter.free_count;
    }
    if (counter.current_bytes > static_cast<std::int64_t>(counter.peak_bytes)) {
      counter.peak_bytes = static_cast<std::uint64_t>(counter.current_bytes);
      p.memory.peak_time_ns = e.time_ns;
    }
  }
  p.memory_counters = {counter};
  p.memory.current_bytes = counter.current_bytes;
  p.memory.peak_bytes = counter.peak_bytes;
  return p;
}

}  // namespace nnprof::testing
