// Bottlenecks of a profile's GPU part, in the one list every report shows (bottlenecks.hpp):
// a GPU waiting for its host (GpuIdle), kernels too short to pay for their launch
// (GpuLaunchBound), pageable or synchronous copies (PageableMemcpy), launch configurations
// with few resident warps (LowOccupancy) and scopes whose kernels move their declared bytes
// far below the memory bandwidth (GpuBelowRoofline). Pure functions of a Profile; nothing
// here applies when !gpu.summary.traced.
#pragma once

#include <vector>

#include "analysis/bottleneck.hpp"
#include "analysis/sentence.hpp"
#include "nnprof/analysis.hpp"
#include "nnprof/profile.hpp"

namespace nnprof::analysis {

/// Every GPU finding of `profile` past `thresholds`, grouped by kind (the caller orders them
/// by severity). Empty without GPU tracing.
///
///  - GpuIdle, per device: gaps of the device's busy union (every stream) longer than
///    gpu_idle_gap_ns after which the next op was launched only after the gap began (so the
///    GPU waited for the host, not for a dependency), summing to more than gpu_idle_share of
///    the device's active window. Ops whose launch time is unknown (0) never count.
///  - GpuLaunchBound, over the run: at least gpu_launch_bound_kernels kernels and more than
///    tiny_kernel_share of them shorter than tiny_kernel_ns.
///  - PageableMemcpy, per device: copies with a pageable end, or synchronous copies with a host
///    end, whose summed duration passes memcpy_share of the device's busy union.
///  - LowOccupancy, per device and kernel launch configuration (name, block, registers, shared
///    memory): known theoretical occupancy below low_occupancy, with at least
///    low_occupancy_min_share of the device's summed kernel time.
///  - GpuBelowRoofline, per scope with declared bytes and GPU kernel time (GpuScopeStats):
///    bytes over kernel time below gpu_roofline_fraction of the memory bandwidth of the device
///    that ran most of its kernels; only scopes with roofline_min_share of all kernel time, and
///    not wrappers (less than half their bytes declared in the scope itself).
std::vector<Bottleneck> gpu_bottlenecks(const Profile& profile, const BottleneckThresholds& thresholds = {});

/// What reports add to "No bottleneck: ..." for a profile with GPU tracing: the GPU
/// thresholds that were checked; empty without GPU tracing.
Sentence no_gpu_bottlenecks(const Profile& profile, const BottleneckThresholds& thresholds = {});

}  // namespace nnprof::analysis
