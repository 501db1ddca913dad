// From numbers to answers: what in a profile is a bottleneck, why, and what to do about it,
// with the speedup of the whole run a fix can be expected to give.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "nnprof/config.hpp"
#include "nnprof/profile.hpp"

namespace nnprof {

/// The kinds of bottleneck nnprof detects.
enum class BottleneckType : std::uint8_t {
  SlowOperation,   ///< one scope's own (self) time is a large share of the instrumented time
  HighCallCount,   ///< a scope is called so often that per-call costs add up
  MemoryHotspot,   ///< one scope holds a large share of the heap peak, or one memory counter of the counters' peak
  MemoryLeak,      ///< a large share of the allocated heap bytes, or of a memory counter's bytes, was never freed
  LowThroughput,   ///< a scope with declared FLOPs computes slowly
  BelowRoofline,   ///< a scope runs far below the roof of this machine for its arithmetic intensity
  CpuHotspot,      ///< one function was running in a large share of the CPU samples
  ScopeCpuHotspot, ///< one function takes most of a busy scope's CPU samples
  GpuIdle,          ///< a GPU sat idle waiting for the host to launch its next work
  GpuLaunchBound,   ///< most kernels are so short that launching them costs more than running them
  PageableMemcpy,   ///< pageable or synchronous host copies take a large share of a GPU's busy time
  LowOccupancy,     ///< a kernel launch configuration keeps few warps resident per SM
  GpuBelowRoofline, ///< a scope's GPU kernels move its declared bytes far below the memory bandwidth
};

/// "slow_operation", "high_call_count", ...: the names the JSON report uses.
NNPROF_API const char* to_string(BottleneckType type) noexcept;

enum class BottleneckSeverity : std::uint8_t {
  Low,     ///< worth knowing
  Medium,  ///< past the threshold
  High,    ///< twice as far past the threshold or more
};

NNPROF_API const char* to_string(BottleneckSeverity severity) noexcept;

/// When each kind of bottleneck is reported. The defaults are those of the axonml profiler,
/// plus the roofline and sampling ones.
struct BottleneckThresholds {
  double slow_operation_share = 0.20;     ///< SlowOperation: self time above this share of instrumented time
  std::uint64_t high_call_count = 10'000; ///< HighCallCount: more calls than this
  /// MemoryHotspot: a scope's peak live heap bytes above this share of the heap peak; a memory
  /// counter's bytes at the counters' peak (record_alloc minus record_free) above this share of that peak.
  double memory_hotspot_share = 0.30;
  /// MemoryLeak: unfreed heap bytes above this share of all heap bytes allocated; a memory
  /// counter's bytes allocated minus freed above this share of the bytes it allocated.
  double memory_leak_share = 0.05;
  double low_throughput_gflops = 1.0;     ///< LowThroughput: below this many GFLOP/s (scopes with FLOPs)
  double roofline_fraction = 0.10;        ///< BelowRoofline: below this fraction of the attainable roof ...
  double roofline_min_share = 0.01;       ///< ... and LowThroughput: only scopes with at least this share of instrumented time
  double cpu_hotspot_share = 0.40;        ///< CpuHotspot: a function's self samples above this share ...
  std::uint64_t cpu_min_samples = 20;     ///< ... judged (as ScopeCpuHotspot) only from this many samples on
  double scope_hotspot_share = 0.50;      ///< ScopeCpuHotspot: a function above this share of a scope's samples ...
  double scope_hotspot_min_share = 0.10;  ///< ... in a scope with at least this share of all samples
  /// GpuIdle: host-bound gaps (the next work launched only after the GPU went idle) longer than
  /// gpu_idle_gap_ns sum to more than this share of a device's active window.
  double gpu_idle_share = 0.20;
  std::uint64_t gpu_idle_gap_ns = 20'000;  ///< ... only gaps longer than this count (shorter ones are launch latency)
  /// GpuLaunchBound: at least gpu_launch_bound_kernels kernels, and more than tiny_kernel_share
  /// of them shorter than tiny_kernel_ns (about a kernel's launch cost).
  std::uint64_t gpu_launch_bound_kernels = 1'000;
  std::uint64_t tiny_kernel_ns = 10'000;
  double tiny_kernel_share = 0.50;
  /// PageableMemcpy: pageable or synchronous host copies above this share of a device's busy time.
  double memcpy_share = 0.05;
  /// LowOccupancy: a kernel launch configuration with theoretical occupancy below this ...
  double low_occupancy = 0.25;
  double low_occupancy_min_share = 0.05;  ///< ... and at least this share of its device's kernel time
  /// GpuBelowRoofline: a scope's declared bytes over its GPU kernel time below this fraction of
  /// the device's memory bandwidth (scopes with at least roofline_min_share of all kernel time).
  double gpu_roofline_fraction = 0.10;
};

/// One bottleneck: what, how bad, the numbers that triggered it and what to do.
struct Bottleneck {
  BottleneckType type = BottleneckType::SlowOperation;
  BottleneckSeverity severity = BottleneckSeverity::Medium;
  std::string name;         ///< the scope, function or memory counter it is about; empty when about the whole run
  double value = 0.0;       ///< what was measured, in the unit of `threshold`
  double threshold = 0.0;   ///< the limit `value` passed
  std::string description;  ///< one sentence with the numbers
  std::string suggestion;   ///< a concrete thing to do
  /// Deprecated: the former spelling of `name`, filled with the same value by
  /// analyze_bottlenecks for code written before `name` existed. A second field rather than an
  /// accessor, because old code reads it as a field; last, so that brace-initialisation by
  /// position still compiles (and fills `name`). New code reads `name`.
  std::string scope;
};

/// Every bottleneck of `profile`, the most severe first.
NNPROF_API std::vector<Bottleneck> analyze_bottlenecks(const Profile& profile,
                                                       const BottleneckThresholds& thresholds = {});

/// One recommendation of the optimization advisor.
struct Recommendation {
  std::string title;        ///< "Bring matmul closer to the compute roof"
  std::string scope;        ///< what to change (a scope, a function or a memory counter); empty for the whole run
  std::string evidence;     ///< the measurements it rests on
  std::vector<std::string> steps;  ///< what to do, in order
  double time_share = 0.0;  ///< share of the run's time the fix acts on (Amdahl's p)
  /// How much faster the part itself can get (Amdahl's s), from its place on the roofline;
  /// 0 when nothing measured says (the fix's gain is then unknown, only its limit).
  double part_speedup = 0.0;
  /// Whole-run speedup 1 / ((1 − p) + p / s); 0 when part_speedup is unknown.
  double expected_speedup = 0.0;
  /// Whole-run speedup if the part took no time at all, 1 / (1 − p): no fix can beat it
  /// (infinite when the part is the whole run).
  double max_speedup = 1.0;
  /// The order to act in: 1 = do first, then 2, ... (the advisor's order, largest expected
  /// gain first); 0 only in a Recommendation that recommend() did not make. Last, so that
  /// brace-initialisation by position still compiles.
  std::uint32_t priority = 0;
};

struct AdvisorOptions {
  /// The fraction of the attainable roof a well-tuned kernel reaches; the part speedup of a
  /// scope at fraction f of its roof is target / f (never below 1).
  double roof_target = 0.80;
  BottleneckThresholds thresholds;
};

/// The advisor's recommendations for `profile`, the largest expected gain first (those whose
/// gain is unknown rank by half their limit: as if the part were made twice as fast).
NNPROF_API std::vector<Recommendation> recommend(const Profile& profile, const AdvisorOptions& options = {});

/// Amdahl's law: the whole-run speedup when a part taking `share` of the time gets
/// `part_speedup` times faster.
constexpr double amdahl_speedup(double share, double part_speedup) noexcept {
  if (part_speedup <= 0.0) return 0.0;
  const double rest = 1.0 - share + share / part_speedup;
  return rest > 0.0 ? 1.0 / rest : 0.0;
}

}  // namespace nnprof
