// Stream, device, peer-to-peer and device-memory views of a profile's GPU part (the seeds'
// StreamProfiler and MultiGpuProfiler): pure functions of a Profile, so that every number can
// be checked on a profile built by hand. Nothing here applies when !gpu.summary.traced; the
// views are then empty.
#pragma once

#include <cstdint>
#include <string_view>
#include <vector>

#include "nnprof/gpu.hpp"
#include "nnprof/gpu_profile.hpp"
#include "nnprof/profile.hpp"

namespace nnprof::analysis {

/// A half-open time interval [start_ns, end_ns).
struct Interval {
  std::uint64_t start_ns = 0;
  std::uint64_t end_ns = 0;

  [[nodiscard]] std::uint64_t length() const noexcept { return end_ns > start_ns ? end_ns - start_ns : 0; }
  bool operator==(const Interval&) const = default;
};

/// The union of `intervals`: sorted by start, disjoint, touching intervals merged.
std::vector<Interval> interval_union(std::vector<Interval> intervals);

/// Summed length of disjoint intervals (interval_union's result).
std::uint64_t total_length(const std::vector<Interval>& disjoint);

/// Time covered by at least `at_least` of `tracks` at once (each track disjoint, as
/// interval_union returns it), by a sweep over their ends.
std::uint64_t covered_by(const std::vector<std::vector<Interval>>& tracks, std::size_t at_least);

/// An op's interval; an op whose end precedes its start (a broken record) lasts nothing.
Interval op_interval(const GpuOp& op) noexcept;

/// Indices in GpuProfile::ops of the ops on streams of `device` (CUDA ordinal), in ops order.
std::vector<std::uint32_t> device_ops(const GpuProfile& gpu, std::uint32_t device);

/// Every device ordinal the GPU part mentions (devices, streams, memory events, counters),
/// ascending.
std::vector<std::uint32_t> gpu_device_ids(const GpuProfile& gpu);

/// The busy union of `ops` (indices in gpu.ops); `kernels_only` keeps kernels alone.
std::vector<Interval> busy_union(const GpuProfile& gpu, const std::vector<std::uint32_t>& ops,
                                 bool kernels_only = false);

/// See nnprof::stream_report.
StreamReport stream_report(const Profile& profile, std::uint64_t gap_threshold_ns);

/// See nnprof::gpu_memory_report. Releases are matched to allocations by (device, address)
/// and subtract the bytes of the allocation they release. A release of an address the replay
/// never saw allocated counts as untracked (report.untracked_frees is the larger of that count
/// and GpuSummary::untracked_frees: the builder may have counted such releases and dropped
/// them before the replay could see them; adding the two would count kept ones twice) and
/// changes nothing; free_count counts matched releases only, so alloc_count - free_count is
/// the number of blocks live at the end. An allocation at an address already live replaces
/// the old block (its release was lost).
GpuMemoryReport gpu_memory_report(const Profile& profile);

/// See nnprof::timing_statistics.
CudaTiming timing_statistics(std::string_view name, const std::vector<double>& ms);

}  // namespace nnprof::analysis
