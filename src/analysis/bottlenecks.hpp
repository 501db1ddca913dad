// Every bottleneck of a profile in one list: time (slow operations, frequent calls), compute
// (low throughput, far below the roofline), memory (hotspots, leaks; from heap tracking and
// from the named memory counters) and CPU samples (hot functions, a function that dominates a
// scope), each with its numbers and what to do.
#pragma once

#include <vector>

#include "analysis/bottleneck.hpp"
#include "nnprof/analysis.hpp"
#include "nnprof/profile.hpp"

namespace nnprof::analysis {

/// SlowOperation and HighCallCount findings.
std::vector<Bottleneck> time_bottlenecks(const Profile& profile, const BottleneckThresholds& thresholds = {});

/// LowThroughput and BelowRoofline findings (scopes with declared FLOPs).
std::vector<Bottleneck> compute_bottlenecks(const Profile& profile, const BottleneckThresholds& thresholds = {});

/// ScopeCpuHotspot findings: one function holds most of a busy scope's CPU samples.
std::vector<Bottleneck> scope_cpu_bottlenecks(const Profile& profile, const BottleneckThresholds& thresholds = {});

/// All of the above plus the memory (heap and counters, memory_findings.hpp), CPU and GPU
/// (gpu_findings.hpp) findings, most severe first, then by how far past its threshold each is.
std::vector<Bottleneck> all_bottlenecks(const Profile& profile, const BottleneckThresholds& thresholds = {});

/// What reports say when all_bottlenecks finds nothing: which thresholds were checked.
Sentence no_bottlenecks(const Profile& profile, const BottleneckThresholds& thresholds = {});

}  // namespace nnprof::analysis
