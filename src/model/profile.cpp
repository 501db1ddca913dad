// Lookups on the Profile model.
#include "nnprof/profile.hpp"

#include "nnprof/error.hpp"
#include "model/enum_parse.hpp"

namespace nnprof {

const std::string& Profile::str(StringId id) const {
  static const std::string& kUnknown = *new std::string("[unknown]");  // valid after main, too
  return id < strings.size() ? strings[id] : kUnknown;
}

const ScopeStats* Profile::find_scope(std::string_view name) const {
  for (const ScopeStats& s : scopes)
    if (str(s.name) == name) return &s;
  return nullptr;
}

std::uint64_t Profile::instrumented_ns() const {
  if (call_tree.empty()) return 0;
  std::uint64_t total = 0;
  for (std::uint32_t child : call_tree.front().children) total += call_tree[child].time.sum_ns;
  return total;
}

std::string Profile::node_path(std::uint32_t node) const {
  std::string path;
  while (node != 0 && node < call_tree.size()) {
    path = path.empty() ? str(call_tree[node].name) : str(call_tree[node].name) + " > " + path;
    node = call_tree[node].parent;
  }
  return path;
}

const char* to_string(DiagnosticKind kind) noexcept {
  switch (kind) {
    case DiagnosticKind::SpansDropped: return "spans_dropped";
    case DiagnosticKind::SpansOverwritten: return "spans_overwritten";
    case DiagnosticKind::EventsDropped: return "events_dropped";
    case DiagnosticKind::StopWithoutStart: return "stop_without_start";
    case DiagnosticKind::StopOnOtherThread: return "stop_on_other_thread";
    case DiagnosticKind::ImplicitlyClosed: return "implicitly_closed";
    case DiagnosticKind::UnclosedScope: return "unclosed_scope";
    case DiagnosticKind::TooDeep: return "too_deep";
    case DiagnosticKind::CallTreeFull: return "call_tree_full";
    case DiagnosticKind::NegativeMemory: return "negative_memory";
    case DiagnosticKind::HeapTracking: return "heap_tracking";
    case DiagnosticKind::CpuSampling: return "cpu_sampling";
    case DiagnosticKind::InstrumentationOverhead: return "instrumentation_overhead";
    case DiagnosticKind::Roofline: return "roofline";
    case DiagnosticKind::FlowsDropped: return "flows_dropped";
    case DiagnosticKind::FlowUnmatched: return "flow_unmatched";
    case DiagnosticKind::MetricsIncomplete: return "metrics_incomplete";
    case DiagnosticKind::GpuTracing: return "gpu_tracing";
    case DiagnosticKind::SpanArgsDropped: return "span_args_dropped";
    case DiagnosticKind::Distributed: return "distributed";
  }
  return "unknown";
}

std::optional<DiagnosticKind> parse_diagnostic_kind(std::string_view s) noexcept {
  // Kinds are numbered from 0 without gaps; the first number with no name ends them.
  for (int k = 0; k < 256; ++k) {
    const std::string_view name = to_string(static_cast<DiagnosticKind>(k));
    if (name == "unknown") break;
    if (s == name) return static_cast<DiagnosticKind>(k);
  }
  return std::nullopt;
}

std::optional<Severity> parse_severity(std::string_view s) noexcept {
  for (int k = 0; k <= static_cast<int>(Severity::Error); ++k)
    if (s == to_string(static_cast<Severity>(k))) return static_cast<Severity>(k);
  return std::nullopt;
}

const char* to_string(EnergyMethod method) noexcept {
  switch (method) {
    case EnergyMethod::Rapl: return "rapl";
    case EnergyMethod::NvmlEnergy: return "nvml_energy";
    case EnergyMethod::NvmlPower: return "nvml_power";
    case EnergyMethod::Modelled: return "modelled";
  }
  return "modelled";
}

const char* to_string(Severity severity) noexcept {
  switch (severity) {
    case Severity::Info: return "info";
    case Severity::Warning: return "warning";
    case Severity::Error: return "error";
  }
  return "unknown";
}

}  // namespace nnprof
