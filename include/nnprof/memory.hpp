// Automatic heap tracking: every malloc/calloc/realloc/free/posix_memalign/aligned_alloc and
// every operator new/delete of the process, attributed to the innermost open scope of the
// allocating thread.
//
// The allocation hooks live in their own library so that they are opt-in: link the CMake
// target nnprof::memory (libnnprof_memory.so), or run an unmodified program under
// `nnprof record --memory`, which preloads libnnprof_preload.so. Then
//
//   nnprof::MemoryTracking tracking;   // tracks into the global profiler until destroyed
//   ... run the workload ...
//   nnprof::global_profiler().save("run.nnprof");  // heap summary, top allocators, leaks
#pragma once

#include <chrono>
#include <cstdint>
#include <string>

#include "nnprof/config.hpp"
#include "nnprof/profiler.hpp"

namespace nnprof {

struct MemoryTrackingOptions {
  /// Mean number of allocated bytes between allocations whose full call stack is kept
  /// (sampled like tcmalloc: large blocks almost always, small ones in proportion).
  /// 1 keeps a stack for every allocation; 0 keeps none. The calling site of every
  /// allocation is kept regardless.
  std::uint64_t stack_sample_bytes = 512 * 1024;
  /// Period of the memory timeline: heap in use, RSS and VmHWM.
  std::chrono::milliseconds interval{100};
  /// Deepest call stack kept for a sampled allocation.
  std::uint32_t max_stack_depth = 64;
  /// At each snapshot, tell leaked blocks (nothing points to them) from still reachable ones
  /// by scanning global data and thread stacks for pointers, as LeakSanitizer does.
  bool find_leaks = true;
  /// Recorded in the profile: "in-process" or "preload".
  std::string source = "in-process";
  /// Start even when another allocator takes precedence over the hooks for some calls (an
  /// executable that defines its own malloc): track what the hooks see, and say in the profile
  /// what is missed. The preload agent uses this; by default such a start throws.
  bool partial_ok = false;
};

/// Current figures of a running tracker. current_bytes and peak_bytes are this tracking run's;
/// alloc_bytes, alloc_count, free_count and current_blocks sum the profiler's call-tree nodes,
/// so they include earlier tracking runs into the same profiler.
struct HeapCounters {
  std::uint64_t current_bytes = 0;
  std::uint64_t current_blocks = 0;
  std::uint64_t peak_bytes = 0;
  std::uint64_t alloc_bytes = 0;
  std::uint64_t alloc_count = 0;
  std::uint64_t free_count = 0;
};

/// True when the allocation hooks are loaded and really receive the process's malloc calls;
/// otherwise false, with the reason in `why` (hooks not linked, or another allocator such as
/// a sanitizer's takes precedence).
NNPROF_API bool heap_hooks_available(std::string* why = nullptr);

/// Tracks the heap while it lives. One at a time per process.
class NNPROF_API MemoryTracking {
 public:
  /// Starts tracking into `profiler`, which must outlive this object. Throws nnprof::Error
  /// when the hooks are unavailable (see heap_hooks_available) or tracking is already on.
  explicit MemoryTracking(Profiler& profiler, const MemoryTrackingOptions& options = {});
  MemoryTracking() : MemoryTracking(global_profiler()) {}
  ~MemoryTracking();
  MemoryTracking(const MemoryTracking&) = delete;
  MemoryTracking& operator=(const MemoryTracking&) = delete;

  /// Stops tracking; later snapshots of the profiler still contain what was tracked.
  void stop() noexcept;
  /// stop() for an atexit handler or a crash handler's helper thread: the calling thread's
  /// stack then holds no live frames of the program, only stale values of returned calls, so
  /// the leak check does not take it as a root.
  void stop_at_exit() noexcept;
  [[nodiscard]] bool active() const noexcept;
  [[nodiscard]] HeapCounters counters() const noexcept;

 private:
  std::uint64_t run_ = 0;  // the tracking run this object started
};

}  // namespace nnprof
