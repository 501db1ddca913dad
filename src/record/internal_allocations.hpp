// Marks nnprof's own work on a thread, so that automatic heap tracking reports the program's
// allocations and never nnprof's (its buffers, names, snapshots and reports).
#pragma once

#include <cstdint>

#include "nnprof/config.hpp"

namespace nnprof::detail {

struct HeapThreadTls {
  /// One word that the allocation hooks compare with the current tracking run: the run this
  /// thread joined (low 48 bits) plus kInternalUnit per InternalAllocations open on the
  /// thread, so one compare tells "joined this run, and not inside nnprof".
  std::uint64_t key = 0;
  void* thread = nullptr;  ///< the heap tracker's state for this thread (a HeapThread)
  // Copies of HeapThread::ts and HeapThread::cache, one dependent load closer for the hooks.
  void* ts = nullptr;      ///< the tracked profiler's ThreadState for this thread
  void* cache = nullptr;   ///< the thread's enlisted collect::ThreadCache; nullptr: none

  static constexpr unsigned kRunBits = 48;
  static constexpr std::uint64_t kRunMask = (std::uint64_t{1} << kRunBits) - 1;
  static constexpr std::uint64_t kInternalUnit = std::uint64_t{1} << kRunBits;

  [[nodiscard]] bool internal() const noexcept { return key >= kInternalUnit; }
  [[nodiscard]] std::uint64_t run() const noexcept { return key & kRunMask; }
  void join(std::uint64_t run) noexcept { key = (key & ~kRunMask) | (run & kRunMask); }
};

/// initial-exec: read on every malloc/free of the process, and never allocates itself.
/// Exported: the allocation hooks (a library of their own) read it inline.
NNPROF_API extern constinit thread_local HeapThreadTls tls_heap [[gnu::tls_model("initial-exec")]];

/// While one lives on a thread, allocations there are not tracked.
class InternalAllocations {
 public:
  InternalAllocations() noexcept { tls_heap.key += HeapThreadTls::kInternalUnit; }
  ~InternalAllocations() { tls_heap.key -= HeapThreadTls::kInternalUnit; }
  InternalAllocations(const InternalAllocations&) = delete;
  InternalAllocations& operator=(const InternalAllocations&) = delete;
};

}  // namespace nnprof::detail
