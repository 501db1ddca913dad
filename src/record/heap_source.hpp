// The seams between a recording session and its collectors: automatic heap tracking
// (src/collect/heap) and CPU sampling (src/collect/cpu). The session asks each source it has
// for its part of every snapshot.
#pragma once

#include "record/raw_snapshot.hpp"

namespace nnprof::detail {

class HeapSource {
 public:
  virtual ~HeapSource() = default;
  /// Fills `out` with the heap as it is now (or as it was when tracking stopped).
  virtual void snapshot_heap(RawHeap& out) = 0;
};

/// The same seam for CPU sampling (src/collect/cpu).
class CpuSource {
 public:
  virtual ~CpuSource() = default;
  /// Fills `out` with the samples taken so far (all of them once sampling stopped).
  virtual void snapshot_cpu(RawCpu& out) = 0;
};

}  // namespace nnprof::detail
