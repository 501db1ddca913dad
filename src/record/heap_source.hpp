// The seams between a recording session and its collectors: automatic heap tracking
// (src/collect/heap), CPU sampling (src/collect/cpu), GPU tracing (src/collect/gpu) and the system monitor (src/collect/system). The session asks each source it has
// for its part of every snapshot.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <vector>

#include "record/raw_snapshot.hpp"
#include "record/raw_system.hpp"

namespace nnprof::detail {

/// A node's heap counts including those a thread has batched but not yet added to the node
/// (heap_fast_path.hpp), read together with the node at one moment: absolute values, so the
/// session may read the node again before or after and keep the larger value of each field.
struct BatchedNodeHeap {
  std::uint32_t thread = 0;  ///< session thread index of the node
  std::uint32_t node = 0;    ///< node index within that thread
  std::uint64_t alloc_bytes = 0, alloc_count = 0, free_bytes = 0, free_count = 0;
  std::uint64_t released_bytes = 0, released_count = 0;  ///< by the owning thread
};

/// `r` (the heap fields of `n`, as read_heap_fields read them) with `b` taken into account.
inline void merge_batched_heap(const Node& n, const BatchedNodeHeap& b, RawNodeHeap& r) noexcept {
  constexpr auto rx = std::memory_order_relaxed;
  r.alloc_bytes = std::max(n.heap_alloc_bytes.load(rx), b.alloc_bytes);
  r.alloc_count = std::max(n.heap_alloc_count.load(rx), b.alloc_count);
  r.free_bytes = std::max(n.heap_free_bytes.load(rx), b.free_bytes);
  r.free_count = std::max(n.heap_free_count.load(rx), b.free_count);
  const std::uint64_t released =
      std::max(n.heap_released_bytes.load(rx), b.released_bytes) + n.heap_released_remote_bytes.load(rx);
  const std::uint64_t released_n =
      std::max(n.heap_released_count.load(rx), b.released_count) + n.heap_released_remote_count.load(rx);
  r.retained_bytes = r.alloc_bytes > released ? r.alloc_bytes - released : 0;
  r.retained_blocks = r.alloc_count > released_n ? r.alloc_count - released_n : 0;
  r.peak_live = n.heap_peak_live.load(rx);
}

class HeapSource {
 public:
  virtual ~HeapSource() = default;
  /// Fills `out` with the heap as it is now (or as it was when tracking stopped).
  virtual void snapshot_heap(RawHeap& out) = 0;
  /// Appends the counts that threads batch and have not added to their nodes yet (cheap: no
  /// memory scan). Every snapshot merges them into the nodes it reads (merge_batched_heap).
  virtual void batched_heap(std::vector<BatchedNodeHeap>& out) { (void)out; }
  /// Forgets the first `points` points of the memory timeline (RawHeap::samples): continuous
  /// profiling calls it with the points a window's snapshot held, so that a run of any length
  /// keeps a bounded timeline (and the tracker's cap on points is never reached).
  virtual void discard_timeline(std::size_t points) noexcept { (void)points; }
};

/// The same seam for CPU sampling (src/collect/cpu).
class CpuSource {
 public:
  virtual ~CpuSource() = default;
  /// Fills `out` with the samples taken so far (all of them once sampling stopped).
  virtual void snapshot_cpu(RawCpu& out) = 0;
};

/// The same seam for GPU tracing (src/collect/gpu).
class GpuSource {
 public:
  virtual ~GpuSource() = default;
  /// Fills `out` with the GPU activity traced so far (flushing what CUPTI has completed).
  virtual void snapshot_gpu(RawGpu& out) = 0;
};

/// The same seam for the system monitor (src/collect/system).
class SystemSource {
 public:
  virtual ~SystemSource() = default;
  /// Fills `out` with the tracks and energy sampled so far.
  virtual void snapshot_system(RawSystem& out) = 0;
  /// Takes a sample now unless the last one is younger than the minimum interval (a region's
  /// start or end, so that a region shorter than the interval is covered).
  virtual void sample_at_boundary() noexcept {}
  /// Like snapshot_system, but only the samples whose interval (from the previous sample to
  /// theirs) overlaps [begin_ns, end_ns] (CLOCK_MONOTONIC), with the sample before them.
  virtual void snapshot_between(std::uint64_t begin_ns, std::uint64_t end_ns, RawSystem& out) = 0;
  /// Forgets the samples taken before `ns` (CLOCK_MONOTONIC) except the last of them, which the
  /// next sample's rates and snapshot_between still need; the energy totals stay whole.
  /// Continuous profiling calls it once a window holds them, so that a run of any length keeps
  /// a bounded number of samples.
  virtual void discard_before(std::uint64_t ns) noexcept { (void)ns; }
};

}  // namespace nnprof::detail
