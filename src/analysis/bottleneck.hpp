// A bottleneck: something in a profile worth fixing, with how bad it is, the numbers that
// show it and what to do. One list holds every kind, whichever analysis found it, so that
// reports render them all the same way.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "analysis/sentence.hpp"
#include "nnprof/analysis.hpp"
#include "nnprof/profile.hpp"

namespace nnprof::analysis {

// The kinds and severities are the public ones (nnprof/analysis.hpp); the analysis keeps its
// findings as sentences so that each report marks the names and numbers up its own way.
using BottleneckKind = nnprof::BottleneckType;
using nnprof::BottleneckSeverity;
using nnprof::to_string;

struct Bottleneck {
  BottleneckKind kind = BottleneckKind::MemoryHotspot;
  BottleneckSeverity severity = BottleneckSeverity::Medium;
  StringId scope = kNone;  ///< the scope it is about; kNone when it is about the whole run
  std::string function;    ///< the function it is about (the CPU kinds) or the kernel (LowOccupancy), demangled
  StringId counter = kNone; ///< the named memory counter (record_alloc) it is about (MemoryHotspot, MemoryLeak)
  double value = 0.0;      ///< what was measured, in the unit of `threshold`
  double threshold = 0.0;  ///< the limit `value` passed (a fraction for the memory kinds)
  Sentence description;    ///< one sentence with the numbers
  Sentence suggestion;     ///< a concrete thing to do
  double time_share = 0.0; ///< share of the run's time (or CPU samples) it concerns; 0 for the memory kinds

  bool operator==(const Bottleneck&) const = default;
};

/// "Slow operation", "Memory leak", "CPU hotspot": the title reports print.
constexpr std::string_view title(BottleneckKind kind) noexcept {
  switch (kind) {
    case BottleneckKind::SlowOperation: return "Slow operation";
    case BottleneckKind::HighCallCount: return "High call count";
    case BottleneckKind::MemoryHotspot: return "Memory hotspot";
    case BottleneckKind::MemoryLeak: return "Memory leak";
    case BottleneckKind::LowThroughput: return "Low throughput";
    case BottleneckKind::BelowRoofline: return "Below the roofline";
    case BottleneckKind::CpuHotspot: return "CPU hotspot";
    case BottleneckKind::ScopeCpuHotspot: return "CPU hotspot in a scope";
    case BottleneckKind::GpuIdle: return "GPU idle, waiting for the host";
    case BottleneckKind::GpuLaunchBound: return "GPU launch-bound";
    case BottleneckKind::PageableMemcpy: return "Pageable or synchronous GPU copies";
    case BottleneckKind::LowOccupancy: return "Low GPU occupancy";
    case BottleneckKind::GpuBelowRoofline: return "Below the GPU memory roof";
  }
  return "Bottleneck";
}

/// Medium past the threshold, High at twice the threshold or more.
constexpr BottleneckSeverity severity_for(double value, double threshold) noexcept {
  return value >= 2.0 * threshold ? BottleneckSeverity::High : BottleneckSeverity::Medium;
}

/// For a measure that is bad when low: Medium below the threshold, High at half of it or less.
constexpr BottleneckSeverity severity_below(double value, double threshold) noexcept {
  return value <= 0.5 * threshold ? BottleneckSeverity::High : BottleneckSeverity::Medium;
}

}  // namespace nnprof::analysis
