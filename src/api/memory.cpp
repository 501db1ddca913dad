#include "nnprof/memory.hpp"

#include "api/session_of.hpp"
#include "collect/heap/heap_tracker.hpp"
#include "collect/heap/reachability.hpp"

namespace nnprof {

MemoryTracking::MemoryTracking(Profiler& profiler, const MemoryTrackingOptions& options)
    : run_(detail::HeapTracker::instance().start(detail::session_of(profiler, "heap tracking"), options)) {}

MemoryTracking::~MemoryTracking() { stop(); }

void MemoryTracking::stop() noexcept {
  if (run_ == 0) return;
  // The leak scan reads this thread's live frames, and HeapTracker::stop's frames will lie
  // where the program's own calls (malloc's among them) left addresses: clear them first,
  // or a block the program dropped still looks reachable.
  collect::clear_dead_stack(64 * 1024);
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
