// The seam between a recording session and automatic heap tracking (src/collect/heap): the
// session asks its heap source, if any, for the heap part of every snapshot.
#pragma once

#include "record/raw_snapshot.hpp"

namespace nnprof::detail {

class HeapSource {
 public:
  virtual ~HeapSource() = default;
  /// Fills `out` with the heap as it is now (or as it was when tracking stopped).
  virtual void snapshot_heap(RawHeap& out) = 0;
};

}  // namespace nnprof::detail
