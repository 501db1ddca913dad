// A bottleneck: something in a profile worth fixing, with how bad it is, the numbers that
// show it and what to do. One list holds every kind, whichever analysis found it, so that
// reports render them all the same way.
#pragma once

#include <cstdint>
#include <string_view>

#include "analysis/sentence.hpp"
#include "nnprof/profile.hpp"

namespace nnprof::analysis {

enum class BottleneckKind : std::uint8_t {
  MemoryHotspot,  ///< one scope holds a large share of the heap peak
  MemoryLeak,     ///< a large share of the allocated heap bytes was never freed
  CpuHotspot,     ///< one function was running in a large share of the CPU samples (self)
};

/// How much fixing it may gain, judged from how far the measure passes its threshold.
enum class BottleneckSeverity : std::uint8_t {
  Low,     ///< worth knowing (no memory kind is this low: it passed a threshold, it matters)
  Medium,  ///< past the threshold
  High,    ///< at twice the threshold or more
};

struct Bottleneck {
  BottleneckKind kind = BottleneckKind::MemoryHotspot;
  BottleneckSeverity severity = BottleneckSeverity::Medium;
  StringId scope = kNone;  ///< the scope it is about; kNone when it is about the whole run
  double value = 0.0;      ///< what was measured, in the unit of `threshold`
  double threshold = 0.0;  ///< the limit `value` passed (a fraction for the memory kinds)
  Sentence description;    ///< one sentence with the numbers
  Sentence suggestion;     ///< a concrete thing to do

  bool operator==(const Bottleneck&) const = default;
};

/// "memory_hotspot", "memory_leak", "cpu_hotspot": the names the JSON report uses.
constexpr std::string_view to_string(BottleneckKind kind) noexcept {
  switch (kind) {
    case BottleneckKind::MemoryHotspot: return "memory_hotspot";
    case BottleneckKind::MemoryLeak: return "memory_leak";
    case BottleneckKind::CpuHotspot: return "cpu_hotspot";
  }
  return "unknown";
}

/// "Memory hotspot", "Memory leak", "CPU hotspot": the title reports print.
constexpr std::string_view title(BottleneckKind kind) noexcept {
  switch (kind) {
    case BottleneckKind::MemoryHotspot: return "Memory hotspot";
    case BottleneckKind::MemoryLeak: return "Memory leak";
    case BottleneckKind::CpuHotspot: return "CPU hotspot";
  }
  return "Bottleneck";
}

constexpr std::string_view to_string(BottleneckSeverity severity) noexcept {
  switch (severity) {
    case BottleneckSeverity::Low: return "low";
    case BottleneckSeverity::Medium: return "medium";
    case BottleneckSeverity::High: return "high";
  }
  return "unknown";
}

/// Medium past the threshold, High at twice the threshold or more.
constexpr BottleneckSeverity severity_for(double value, double threshold) noexcept {
  return value >= 2.0 * threshold ? BottleneckSeverity::High : BottleneckSeverity::Medium;
}

}  // namespace nnprof::analysis
