// Marks nnprof's own work on a thread, so that automatic heap tracking reports the program's
// allocations and never nnprof's (its buffers, names, snapshots and reports).
#pragma once

#include <cstdint>

#include "nnprof/config.hpp"

namespace nnprof::detail {

struct HeapThreadTls {
  std::uint32_t internal = 0;  ///< > 0 while nnprof's own code runs on this thread
  std::uint64_t epoch = 0;     ///< tracking run that `thread` belongs to
  void* thread = nullptr;      ///< the heap tracker's state for this thread (a HeapThread)
};

/// initial-exec: read on every malloc/free of the process, and never allocates itself.
/// Exported: the allocation hooks (a library of their own) read it inline.
NNPROF_API extern constinit thread_local HeapThreadTls tls_heap [[gnu::tls_model("initial-exec")]];

/// While one lives on a thread, allocations there are not tracked.
class InternalAllocations {
 public:
  InternalAllocations() noexcept { ++tls_heap.internal; }
  ~InternalAllocations() { --tls_heap.internal; }
  InternalAllocations(const InternalAllocations&) = delete;
  InternalAllocations& operator=(const InternalAllocations&) = delete;
};

}  // namespace nnprof::detail
