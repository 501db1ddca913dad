// Memory profiling in one object: heap tracking (nnprof/memory.hpp) between start() and stop(),
// which returns the peak, the number of allocations and the largest single allocation.
//
//   auto profiler = nnprof::MemoryProfilerBuilder().build();
//   profiler.start();
//   memory_intensive_operation();
//   nnprof::MemoryReport report = profiler.stop();
//   std::cout << "Peak usage: " << report.peak_mb << "MB\n";
//
// Heap tracking needs the allocation hooks: link the CMake target nnprof::memory (or run the
// program under `nnprof record --memory`). Without them start() throws nnprof::Error saying so.
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <string>

#include "nnprof/config.hpp"
#include "nnprof/memory.hpp"
#include "nnprof/profile.hpp"
#include "nnprof/profiler.hpp"

namespace nnprof {

/// The memory figures of a profile, in the units people read: of the heap when it was tracked
/// (HeapSummary), else of the program's named counters (record_alloc / record_free). MB are
/// MiB (1048576 bytes), as nnprof's reports count them.
struct MemoryReport {
  std::string source;                     ///< "heap tracking", "memory counters", or empty (neither)
  double peak_mb = 0.0;                   ///< highest heap in use
  std::uint64_t num_allocations = 0;      ///< malloc, calloc, realloc, new, ... calls tracked
  double largest_allocation_mb = 0.0;     ///< the largest single block requested
  std::uint64_t peak_bytes = 0;
  std::uint64_t largest_allocation_bytes = 0;
  std::uint64_t allocated_bytes = 0;      ///< every tracked allocation, summed
  std::uint64_t num_frees = 0;
  std::uint64_t current_bytes = 0;        ///< still allocated at stop()
  std::uint64_t leaked_bytes = 0;         ///< of those, unreachable (0 unless leaks were looked for)
  Profile profile;                        ///< everything recorded: top allocators, leaks, timeline
};

/// The memory figures of `profile`: its heap's when tracked, else its named counters' (peak of
/// their sum, allocations, the largest single record_alloc); all zero when it has neither.
NNPROF_API MemoryReport memory_report(const Profile& profile);

class MemoryProfiler;

/// Settings of a MemoryProfiler (those of MemoryTrackingOptions that matter to a report).
class NNPROF_API MemoryProfilerBuilder {
 public:
  /// Look for leaked blocks at stop() (a scan of globals and thread stacks); on by default.
  MemoryProfilerBuilder& find_leaks(bool on) noexcept;
  /// Period of the memory timeline (heap in use and RSS over time); 100 ms by default.
  MemoryProfilerBuilder& timeline_interval(std::chrono::milliseconds interval) noexcept;
  /// Every other setting of heap tracking.
  MemoryProfilerBuilder& options(const MemoryTrackingOptions& options);
  [[nodiscard]] MemoryProfiler build() const;

 private:
  MemoryTrackingOptions options_;
};

/// Tracks the heap between start() and stop(). One may track at a time per process.
class NNPROF_API MemoryProfiler {
 public:
  explicit MemoryProfiler(const MemoryTrackingOptions& options);
  ~MemoryProfiler();
  MemoryProfiler(MemoryProfiler&&) noexcept;
  MemoryProfiler& operator=(MemoryProfiler&&) noexcept;

  /// Starts tracking into a fresh profile. Throws nnprof::Error when the allocation hooks are
  /// not loaded (see heap_hooks_available), when it runs already or another tracker runs.
  void start();
  /// Stops tracking and returns the heap as tracked since start(). Throws nnprof::Error when
  /// it was not started.
  MemoryReport stop();
  [[nodiscard]] bool running() const noexcept { return tracking_ != nullptr; }
  /// The profiler that records this run (scopes of your own attribute the allocations);
  /// valid from start() until the next start().
  [[nodiscard]] Profiler& profiler();

 private:
  MemoryTrackingOptions options_;
  std::unique_ptr<Profiler> profiler_;
  std::unique_ptr<MemoryTracking> tracking_;
};

}  // namespace nnprof
