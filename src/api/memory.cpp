#include "nnprof/memory.hpp"

#include "api/session_of.hpp"
#include "collect/heap/heap_tracker.hpp"

namespace nnprof {

MemoryTracking::MemoryTracking(Profiler& profiler, const MemoryTrackingOptions& options)
    : run_(detail::HeapTracker::instance().start(detail::session_of(profiler, "heap tracking"), options)) {}

MemoryTracking::~MemoryTracking() { stop(); }

void MemoryTracking::stop() noexcept {
  if (run_ == 0) return;
  detail::HeapTracker::instance().stop(run_);
  run_ = 0;
}

void MemoryTracking::stop_at_exit() noexcept {
  if (run_ == 0) return;
  detail::HeapTracker::instance().stop(run_, /*calling_thread_is_root=*/false);
  run_ = 0;
}

bool MemoryTracking::active() const noexcept { return run_ != 0 && detail::HeapTracker::instance().active(); }

HeapCounters MemoryTracking::counters() const noexcept { return detail::HeapTracker::instance().counters(); }

}  // namespace nnprof
