#include "io/json_report.hpp"

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <ostream>
#include <string>
#include <utility>
#include <vector>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "io/critical_path_report.hpp"
#include "report/gpu_data.hpp"
#include "io/metrics_json.hpp"
#include "render/sentence_markup.hpp"
#include "nnprof/error.hpp"
#include "nnprof/operators.hpp"
#include "report/report_data.hpp"

namespace nnprof::io {
namespace {

// Every value below is a field of report::ReportData or of the profile itself, serialised:
// nothing is computed here, so the JSON states what the other formats state.

// Keys in the order the schema documents them: a person reading the file finds "schema"
// and "metadata" first, and per-scope tables keep the profile's order (longest first).
using Json = nlohmann::ordered_json;

// One element per item, in order.
template <typename Range, typename ToJson>
Json array_of(const Range& items, ToJson to_json) {
  Json j = Json::array();
  for (const auto& item : items) j.push_back(to_json(item));
  return j;
}

// One member per item that `keep` accepts, named after the item, in the profile's order.
template <typename Range, typename Keep, typename ToJson>
Json by_name(const Profile& profile, const Range& items, Keep keep, ToJson to_json) {
  Json j = Json::object();
  for (const auto& item : items) {
    if (keep(item)) j[profile.str(item.name)] = to_json(item);
  }
  return j;
}

constexpr auto kEvery = [](const auto&) { return true; };

Json memory_attribution(const MemoryAttribution& m) {
  Json j = Json::object();
  j["alloc_bytes"] = m.alloc_bytes;
  j["alloc_count"] = m.alloc_count;
  j["free_bytes"] = m.free_bytes;
  j["free_count"] = m.free_count;
  return j;
}

Json heap_attribution(const HeapAttribution& h) {
  Json j = Json::object();
  j["alloc_bytes"] = h.alloc_bytes;
  j["alloc_count"] = h.alloc_count;
  j["free_bytes"] = h.free_bytes;
  j["free_count"] = h.free_count;
  j["retained_bytes"] = h.retained_bytes;
  j["retained_blocks"] = h.retained_blocks;
  j["peak_live_bytes"] = h.peak_live_bytes;
  return j;
}

Json metadata(const report::ReportData& data) {
  const Profile& profile = *data.profile;
  const Metadata& meta = profile.meta;
  const ClockCalibration& clock = meta.clock;
  Json j = Json::object();
  j["nnprof_version"] = meta.nnprof_version;
  j["hostname"] = meta.hostname;
  j["os"] = meta.os;
  j["cpu_model"] = meta.cpu_model;
  j["logical_cpus"] = meta.logical_cpus;
  j["compiler"] = meta.compiler;
  j["command_line"] = meta.command_line;
  j["pid"] = meta.pid;
  j["duration_ns"] = meta.duration_ns;
  j["instrumented_ns"] = data.instrumented_ns;
  Json c = Json::object();
  c["source"] = clock.source;
  c["ns_per_tick"] = clock.ns_per_tick;
  c["tick_origin"] = clock.tick_origin;
  c["monotonic_origin_ns"] = clock.monotonic_origin_ns;
  c["unix_origin_ns"] = clock.unix_origin_ns;
  c["relative_error"] = clock.relative_error;
  j["clock"] = std::move(c);
  return j;
}

Json scope_timing(const Profile& profile, const ScopeStats& scope) {
  const DurationStats& t = scope.time;
  Json j = Json::object();
  j["count"] = t.count;
  j["total_ns"] = scope.total_ns;
  j["self_ns"] = scope.self_ns;
  j["mean_ns"] = t.mean_ns;
  j["std_ns"] = t.stddev_ns;
  j["min_ns"] = t.min_ns;
  j["max_ns"] = t.max_ns;
  j["p50_ns"] = t.p50_ns;
  j["p95_ns"] = t.p95_ns;
  j["p99_ns"] = t.p99_ns;
  j["threads"] = scope.thread_count;
  j["items"] = scope.items;
  j["items_per_second"] = scope.items_per_second();
  j["memory"] = memory_attribution(scope.memory);
  if (profile.heap.tracked) j["heap"] = heap_attribution(scope.heap);
  return j;
}

Json memory_counter(const MemoryCounter& counter) {
  Json c = Json::object();
  c["current_bytes"] = counter.current_bytes;
  c["peak_bytes"] = counter.peak_bytes;
  c["alloc_bytes"] = counter.alloc_bytes;
  c["freed_bytes"] = counter.freed_bytes;
  c["alloc_count"] = counter.alloc_count;
  c["free_count"] = counter.free_count;
  return c;
}

Json memory(const Profile& profile) {
  Json j = Json::object();
  j["current_bytes"] = profile.memory.current_bytes;
  j["peak_bytes"] = profile.memory.peak_bytes;
  j["peak_time_ns"] = profile.memory.peak_time_ns;
  j["counters"] = by_name(profile, profile.memory_counters, kEvery, memory_counter);
  return j;
}

Json scope_throughput(const report::ScopeThroughput& t) {
  Json s = Json::object();
  s["items"] = t.scope->items;
  s["total_ns"] = t.scope->total_ns;
  s["items_per_second"] = t.items_per_second;
  s["calls"] = t.scope->time.count;
  s["calls_per_second"] = t.calls_per_second;
  return s;
}

Json tree_node(const Profile& profile, const CallTreeNode& node) {
  Json j = Json::object();
  j["name"] = profile.str(node.name);
  j["count"] = node.time.count;
  j["total_ns"] = node.time.sum_ns;
  j["self_ns"] = node.self_ns;
  j["mean_ns"] = node.time.mean_ns;
  j["std_ns"] = node.time.stddev_ns;
  j["min_ns"] = node.time.min_ns;
  j["max_ns"] = node.time.max_ns;
  j["threads"] = node.thread_count;
  j["flops"] = node.flops;
  j["bytes"] = node.bytes;
  j["memory"] = memory_attribution(node.memory);
  if (profile.heap.tracked) j["heap"] = heap_attribution(node.heap);
  j["children"] = Json::array();
  return j;
}

// The root's children as nested objects. Built with an explicit stack, children before
// their parent, so a deep tree costs heap rather than call stack; `visited` keeps a
// malformed tree (read from a file) whose child links form a cycle from looping forever.
Json call_tree(const Profile& profile) {
  const std::vector<CallTreeNode>& nodes = profile.call_tree;
  if (nodes.empty()) return Json::array();
  struct Pending {
    std::uint32_t node;
    Json json;
    std::size_t next_child = 0;
  };
  std::vector<bool> visited(nodes.size(), false);
  visited[0] = true;
  std::vector<Pending> stack;
  stack.push_back({0, Json{{"children", Json::array()}}});
  for (;;) {
    Pending& top = stack.back();
    const std::vector<std::uint32_t>& children = nodes[top.node].children;
    if (top.next_child < children.size()) {
      const std::uint32_t child = children[top.next_child++];
      if (child >= nodes.size() || visited[child]) continue;
      visited[child] = true;
      stack.push_back({child, tree_node(profile, nodes[child])});  // `top` is invalid now
      continue;
    }
    if (stack.size() == 1) return std::move(top.json["children"]);
    Json done = std::move(top.json);
    stack.pop_back();
    stack.back().json["children"].push_back(std::move(done));
  }
}

Json thread(const ThreadInfo& t) {
  Json j = Json::object();
  j["id"] = t.id;
  j["os_tid"] = t.os_tid;
  j["name"] = t.name;
  j["exited"] = t.exited;
  j["scopes_recorded"] = t.scopes_recorded;
  j["top_level_ns"] = t.top_level_ns;
  return j;
}

Json completeness(const Completeness& c) {
  Json j = Json::object();
  j["scopes_recorded"] = c.scopes_recorded;
  j["spans_enabled"] = c.spans_enabled;
  j["spans_kept"] = c.spans_kept;
  j["spans_dropped"] = c.spans_dropped;
  j["spans_overwritten"] = c.spans_overwritten;
  j["events_dropped"] = c.events_dropped;
  j["buffer_policy"] = c.buffer_policy;
  j["memory_cap_bytes"] = c.memory_cap_bytes;
  j["hot_path_allocations"] = c.hot_path_allocations;
  j["overhead_per_scope_ns"] = c.overhead_per_scope_ns;
  j["overhead_total_ns"] = c.overhead_total_ns;
  return j;
}

Json diagnostic(const Profile& profile, const Diagnostic& d) {
  Json j = Json::object();
  j["kind"] = to_string(d.kind);
  j["severity"] = to_string(d.severity);
  j["thread"] = d.thread == kNone ? Json(nullptr) : Json(d.thread);
  j["name"] = d.name == kNone ? Json(nullptr) : Json(profile.str(d.name));
  j["count"] = d.count;
  j["message"] = d.message;
  return j;
}

// ---- heap ---------------------------------------------------------------------------

Json string_or_null(const Profile& profile, StringId id) {
  return id == kNone ? Json(nullptr) : Json(profile.str(id));
}

Json frame(const Profile& profile, std::uint32_t index) {
  if (index >= profile.frames.size()) return nullptr;
  const StackFrame& f = profile.frames[index];
  Json j = Json::object();
  j["address"] = f.address;
  j["function"] = string_or_null(profile, f.function);
  j["file"] = string_or_null(profile, f.file);
  j["line"] = f.line;
  j["module"] = string_or_null(profile, f.module);
  return j;
}

// The scope path of a call-tree node, null outside any scope.
Json scope_path(const Profile& profile, std::uint32_t node) {
  return node == 0 || node >= profile.call_tree.size() ? Json(nullptr) : Json(profile.node_path(node));
}

Json peak(const Profile& profile) {
  const HeapSummary& h = profile.heap;
  Json j = Json::object();
  j["bytes"] = h.peak_bytes;
  j["time_ns"] = h.peak_time_ns;
  j["thread"] = h.peak_thread == kNone ? Json(nullptr) : Json(h.peak_thread);
  j["scope_path"] = scope_path(profile, h.peak_node);
  j["resolution_bytes"] = h.peak_resolution_bytes;
  return j;
}

Json growth(const analysis::MemoryGrowth& g) {
  Json j = Json::object();
  j["assessed"] = g.assessed;
  j["steady"] = g.steady;
  j["samples"] = g.samples;
  j["from_ns"] = g.from_ns;
  j["to_ns"] = g.to_ns;
  j["start_bytes"] = g.start_bytes;
  j["bytes_per_second"] = g.bytes_per_second;
  j["total_bytes"] = g.total_bytes;
  j["fit"] = g.fit;
  return j;
}

Json leak_verdict(const Profile& profile, const analysis::LeakVerdict& v) {
  Json j = Json::object();
  j["memory_leak_detected"] = v.memory_leak_detected;
  j["unfreed_bytes"] = v.unfreed.bytes;
  j["unfreed_blocks"] = v.unfreed.blocks;
  j["unfreed_unreachable"] = v.unfreed.confirmed;
  j["heap_growth"] = growth(v.heap);
  j["rss_growth"] = growth(v.rss);
  j["explanation"] = render::text_of(profile, v.explanation);
  return j;
}

Json top_allocator(const Profile& profile, const analysis::HeapAllocator& a) {
  Json j = Json::object();
  j["scope"] = profile.str(a.scope->name);
  j["alloc_bytes"] = a.alloc_bytes;
  j["alloc_count"] = a.alloc_count;
  j["bytes_per_call"] = a.bytes_per_call ? Json(*a.bytes_per_call) : Json(nullptr);
  j["retained_bytes"] = a.retained_bytes;
  j["retained_blocks"] = a.retained_blocks;
  j["peak_live_bytes"] = a.peak_live_bytes;
  j["share"] = a.share;
  return j;
}

Json leak_site(const Profile& profile, const LeakSite& site) {
  Json j = Json::object();
  j["scope_path"] = scope_path(profile, site.node);
  j["reachable"] = site.reachable;
  j["blocks"] = site.blocks;
  j["bytes"] = site.bytes;
  j["caller"] = frame(profile, site.caller);
  if (site.stack < profile.stacks.size()) {
    j["stack"] = array_of(profile.stacks[site.stack].frames, [&](std::uint32_t f) { return frame(profile, f); });
  } else {
    j["stack"] = nullptr;
  }
  return j;
}

Json heap_sample(const HeapSample& s) {
  Json j = Json::object();
  j["time_ns"] = s.time_ns;
  j["heap_bytes"] = s.heap_bytes;
  j["rss_bytes"] = s.rss_bytes;
  j["rss_peak_bytes"] = s.rss_peak_bytes;
  return j;
}

Json heap(const report::ReportData& data) {
  const Profile& profile = *data.profile;
  const HeapSummary& h = profile.heap;
  Json j = Json::object();
  j["source"] = h.source;
  j["alloc_bytes"] = h.alloc_bytes;
  j["alloc_count"] = h.alloc_count;
  j["free_bytes"] = h.free_bytes;
  j["free_count"] = h.free_count;
  j["current_bytes"] = h.current_bytes;
  j["current_blocks"] = h.current_blocks;
  j["peak"] = peak(profile);
  j["reachability_checked"] = h.reachability_checked;
  j["leaked_bytes"] = h.leaked_bytes;
  j["leaked_blocks"] = h.leaked_blocks;
  j["reachable_bytes"] = h.reachable_bytes;
  j["reachable_blocks"] = h.reachable_blocks;
  j["untracked_frees"] = h.untracked_frees;
  j["untracked_allocs"] = h.untracked_allocs;
  j["stack_sample_bytes"] = h.stack_sample_bytes;
  j["sample_interval_ns"] = h.sample_interval_ns;
  j["rss"] = Json{{"initial_bytes", h.rss_initial_bytes}, {"peak_bytes", h.rss_peak_bytes},
                  {"final_bytes", h.rss_final_bytes}};
  j["leak_verdict"] = leak_verdict(profile, data.heap.verdict);
  j["top_allocators"] = array_of(data.heap.allocators,
                                 [&](const analysis::HeapAllocator& a) { return top_allocator(profile, a); });
  j["leaks"] = array_of(profile.leaks, [&](const LeakSite& site) { return leak_site(profile, site); });
  j["timeline"] = array_of(profile.heap_samples, heap_sample);
  return j;
}

// ---- CPU samples ----------------------------------------------------------------------

Json cpu_function(const analysis::CpuFunction& f) {
  Json j = Json::object();
  j["name"] = f.name;
  j["module"] = f.module.empty() ? Json(nullptr) : Json(f.module);
  j["address"] = f.function == kNone && !f.module.empty() ? Json(f.address) : Json(nullptr);
  j["self_samples"] = f.self.samples;
  j["self_ns"] = f.self.ns;
  j["self_share"] = f.self_share;
  j["total_samples"] = f.total.samples;
  j["total_ns"] = f.total.ns;
  j["total_share"] = f.total_share;
  return j;
}

Json cpu_edge(const analysis::CpuEdge& e) {
  Json j = Json::object();
  j["function"] = e.function;
  j["samples"] = e.weight.samples;
  j["ns"] = e.weight.ns;
  j["share"] = e.share;
  return j;
}

Json cpu_callers(const analysis::CpuCallers& c) {
  Json j = Json::object();
  j["function"] = c.function;
  j["self_samples"] = c.self.samples;
  j["total_samples"] = c.total.samples;
  j["outermost_samples"] = c.outermost.samples;
  j["callers"] = array_of(c.callers, cpu_edge);
  j["callees"] = array_of(c.callees, cpu_edge);
  return j;
}

Json cpu_line(const analysis::CpuLine& l) {
  Json j = Json::object();
  j["file"] = l.file;
  j["line"] = l.line;
  j["function"] = l.function;
  j["samples"] = l.self.samples;
  j["ns"] = l.self.ns;
  j["share"] = l.share;
  return j;
}

Json cpu_scope(const analysis::CpuScope& s) {
  Json j = Json::object();
  j["scope_path"] = s.node == 0 ? Json(nullptr) : Json(s.path);
  j["samples"] = s.samples.samples;
  j["ns"] = s.samples.ns;
  j["share"] = s.share;
  j["self_samples"] = s.self.samples;
  j["top_functions"] = array_of(s.top, cpu_function);
  return j;
}

// Every list as ReportData keeps it: the whole list of functions and scopes, and the call
// graph and hot lines to the bounds ReportLimits gives (10 and 50 by default, as documented).
Json cpu(const report::ReportData& data) {
  const CpuProfileSummary& c = data.profile->cpu;
  const report::CpuData& samples = data.cpu;
  Json j = Json::object();
  j["mode"] = c.mode;
  j["mechanism"] = c.mechanism;
  j["unwinder"] = c.unwinder;
  j["requested_hz"] = c.requested_hz;
  j["period_ns"] = c.period_ns;
  j["samples"] = c.samples;
  j["sampled_ns"] = samples.total.ns;
  j["samples_dropped"] = c.samples_dropped;
  j["truncated_stacks"] = c.truncated_stacks;
  j["samples_without_stack"] = samples.samples_without_stack;
  j["threads_sampled"] = c.threads_sampled;
  j["functions"] = array_of(samples.functions, cpu_function);
  j["call_graph"] = array_of(samples.callers, cpu_callers);
  j["hot_lines"] = array_of(samples.hot_lines, cpu_line);
  j["scopes"] = array_of(samples.scopes, cpu_scope);
  return j;
}

// ---- GPU ----------------------------------------------------------------------------

// An NVML percentage, null where no sample was taken (the views say so with a negative value).
Json nvml_or_null(double percent) { return percent < 0.0 ? Json(nullptr) : Json(percent); }

Json gpu_summary(const GpuSummary& s) {
  Json j = Json::object();
  j["status"] = s.status;
  j["clock_source"] = s.clock_source;
  j["cupti_version"] = s.cupti_version;
  j["driver_version"] = s.driver_version;
  j["clock_offset_ns"] = s.clock_offset_ns;
  j["clock_slope"] = s.clock_slope;
  j["clock_uncertainty_ns"] = s.clock_uncertainty_ns;
  j["records_dropped"] = s.records_dropped;
  j["records_refused"] = s.records_refused;
  j["records_incomplete"] = s.records_incomplete;
  j["records_untimed"] = s.records_untimed;
  j["unmatched_correlations"] = s.unmatched_correlations;
  j["untracked_frees"] = s.untracked_frees;
  j["nvml"] = s.nvml;
  return j;
}

// A device as the driver describes it, with its utilisation from stream_report.
Json gpu_device(const Profile& profile, const DeviceStats& d) {
  const GpuDevice* info = profile.gpu.device(d.device);
  Json j = Json::object();
  j["id"] = d.device;
  j["name"] = d.name;
  j["pci_bus_id"] = info != nullptr ? Json(info->pci_bus_id) : Json(nullptr);
  j["compute_capability"] =
      info != nullptr ? Json(fmt::format("{}.{}", info->cc_major, info->cc_minor)) : Json(nullptr);
  j["sms"] = info != nullptr ? info->sms : 0;
  j["memory_bytes"] = info != nullptr ? info->memory_bytes : 0;
  j["bandwidth_bytes_per_s"] = info != nullptr ? info->bandwidth_bytes_per_s : 0;
  j["core_clock_khz"] = info != nullptr ? info->core_clock_khz : 0;
  j["kernels"] = d.kernels;
  j["busy_ns"] = d.busy_ns;
  j["kernel_busy_ns"] = d.kernel_busy_ns;
  j["kernel_busy_fraction"] = d.kernel_busy_fraction;
  j["active_ns"] = d.active_ns;
  j["overlap_ns"] = d.overlap_ns;
  j["memcpy_bytes"] = d.memcpy_bytes;
  j["nvml_gpu_utilization_mean"] = nvml_or_null(d.nvml_gpu_utilization_mean);
  j["nvml_gpu_utilization_max"] = nvml_or_null(d.nvml_gpu_utilization_max);
  j["nvml_memory_utilization_mean"] = nvml_or_null(d.nvml_memory_utilization_mean);
  j["nvml_memory_used_max_bytes"] = d.nvml_memory_used_max;
  return j;
}

Json gpu_stream(const Profile& profile, const StreamStats& s) {
  Json j = Json::object();
  j["device"] = s.device;
  j["stream_id"] = s.stream_id;
  j["default"] = s.stream < profile.gpu.streams.size() && profile.gpu.streams[s.stream].is_default;
  j["ops"] = s.ops;
  j["kernels"] = s.kernels;
  j["first_ns"] = s.first_ns;
  j["last_ns"] = s.last_ns;
  j["busy_ns"] = s.busy_ns;
  j["idle_ns"] = s.idle_ns;
  j["idle_gaps"] = s.idle_gaps;
  j["longest_gap_ns"] = s.longest_gap_ns;
  j["efficiency"] = s.efficiency;
  return j;
}

Json gpu_peer(const PeerBandwidth& p) {
  Json j = Json::object();
  j["src_device"] = p.src_device;
  j["dst_device"] = p.dst_device;
  j["copies"] = p.copies;
  j["bytes"] = p.bytes;
  j["busy_ns"] = p.busy_ns;
  j["gbytes_per_s"] = p.gbytes_per_s;
  return j;
}

Json gpu_kernel(const Profile& profile, const report::GpuKernelSummary& k) {
  const bool config = k.config_calls > 0;
  Json j = Json::object();
  j["name"] = string_or_null(profile, k.name);
  j["calls"] = k.calls;
  j["total_ns"] = k.total_ns;
  j["mean_ns"] = k.mean_ns;
  j["min_ns"] = k.min_ns;
  j["max_ns"] = k.max_ns;
  j["share"] = k.share;
  j["grid"] = config ? Json(k.grid) : Json(nullptr);
  j["block"] = config ? Json(k.block) : Json(nullptr);
  j["config_calls"] = k.config_calls;
  j["configs"] = k.configs;
  j["registers_per_thread"] = config ? Json(k.registers_per_thread) : Json(nullptr);
  j["occupancy"] = config && k.occupancy >= 0.0 ? Json(k.occupancy) : Json(nullptr);
  j["occupancy_estimated"] = k.occupancy_estimated;
  return j;
}

Json gpu_transfer(const report::GpuTransferSummary& t) {
  Json j = Json::object();
  if (!t.memset) j["kind"] = to_string(t.kind);
  j["count"] = t.count;
  j["bytes"] = t.bytes;
  j["total_ns"] = t.total_ns;
  if (!t.memset) j["pageable"] = t.pageable;
  j["gbytes_per_s"] = t.gbytes_per_s();
  return j;
}

Json gpu_memory(const Profile& profile, const GpuMemoryReport& m) {
  Json j = Json::object();
  j["untracked_frees"] = m.untracked_frees;
  j["devices"] = array_of(m.devices, [](const GpuDeviceMemory& d) {
    Json e = Json::object();
    e["device"] = d.device;
    e["peak_bytes"] = d.peak_bytes;
    e["peak_time_ns"] = d.peak_time_ns;
    e["live_bytes"] = d.live_bytes;
    e["alloc_count"] = d.alloc_count;
    e["free_count"] = d.free_count;
    e["nvml_used_max_bytes"] = d.nvml_used_max;
    e["unexplained_bytes"] = d.unexplained_bytes;
    return e;
  });
  j["leaks"] = array_of(m.leaks, [&](const GpuLeak& l) {
    Json e = Json::object();
    e["device"] = l.device;
    e["scope_path"] = scope_path(profile, l.node);
    e["blocks"] = l.blocks;
    e["bytes"] = l.bytes;
    return e;
  });
  return j;
}

Json gpu_scope(const Profile& profile, const GpuScopeStats& s) {
  const ScopeStats* cpu = s.name == kNone ? nullptr : profile.find_scope(profile.str(s.name));
  Json j = Json::object();
  j["name"] = string_or_null(profile, s.name);
  j["kernels"] = s.kernels;
  j["kernel_ns"] = s.kernel_ns;
  j["memcpys"] = s.memcpys;
  j["memcpy_ns"] = s.memcpy_ns;
  j["memcpy_bytes"] = s.memcpy_bytes;
  j["memsets"] = s.memsets;
  j["memset_ns"] = s.memset_ns;
  j["gpu_ns"] = s.gpu_ns();
  j["alloc_bytes"] = s.alloc_bytes;
  j["alloc_count"] = s.alloc_count;
  j["free_bytes"] = s.free_bytes;
  j["cpu_total_ns"] = cpu != nullptr ? Json(cpu->total_ns) : Json(nullptr);
  j["gpu_per_cpu_time"] = cpu != nullptr && cpu->total_ns > 0
                              ? Json(static_cast<double>(s.gpu_ns()) / static_cast<double>(cpu->total_ns))
                              : Json(nullptr);
  return j;
}

Json gpu(const Profile& profile, const report::GpuReportData& data) {
  Json j = Json::object();
  j["summary"] = gpu_summary(profile.gpu.summary);
  j["devices"] = array_of(data.streams.devices, [&](const DeviceStats& d) { return gpu_device(profile, d); });
  j["idle_gap_threshold_ns"] = data.streams.gap_threshold_ns;
  j["streams"] = array_of(data.streams.streams, [&](const StreamStats& s) { return gpu_stream(profile, s); });
  j["peers"] = array_of(data.streams.peers, gpu_peer);
  Json kernels = Json::object();
  kernels["count"] = data.kernel_count;
  kernels["total_ns"] = data.kernel_ns;
  kernels["by_name"] = array_of(data.kernels, [&](const report::GpuKernelSummary& k) { return gpu_kernel(profile, k); });
  j["kernels"] = std::move(kernels);
  Json copies = Json::object();
  copies["count"] = data.memcpy_count;
  copies["bytes"] = data.memcpy_bytes;
  copies["total_ns"] = data.memcpy_ns;
  copies["pageable"] = data.memcpy_pageable;
  Json by_kind = Json::array();
  report::GpuTransferSummary memsets;  // zeros when no memset was traced
  memsets.memset = true;
  for (const report::GpuTransferSummary& t : data.transfers) {
    if (t.memset) {
      memsets = t;
    } else {
      by_kind.push_back(gpu_transfer(t));
    }
  }
  copies["by_kind"] = std::move(by_kind);
  j["memcpy"] = std::move(copies);
  j["memset"] = gpu_transfer(memsets);
  j["gpu_ns"] = data.gpu_ns();
  j["memory"] = gpu_memory(profile, data.memory);
  j["scopes"] = array_of(profile.gpu.scopes, [&](const GpuScopeStats& s) { return gpu_scope(profile, s); });
  return j;
}

Json bottleneck(const Profile& profile, const analysis::Bottleneck& b) {
  Json j = Json::object();
  // The names of the kind and severity: to_string of their (analysis) namespace, by argument-dependent lookup.
  j["kind"] = to_string(b.kind);
  j["severity"] = to_string(b.severity);
  j["scope"] = string_or_null(profile, b.scope);
  if (!b.function.empty()) j["function"] = b.function;
  if (b.counter != kNone) j["counter"] = profile.str(b.counter);
  j["value"] = b.value;
  j["threshold"] = b.threshold;
  j["time_share"] = b.time_share;
  j["description"] = render::text_of(profile, b.description);
  j["suggestion"] = render::text_of(profile, b.suggestion);
  return j;
}

// A number that may be unknown (0 by convention) or unbounded: null then.
Json known_or_null(double v) { return v > 0.0 && std::isfinite(v) ? Json(v) : Json(nullptr); }

Json recommendation(const Profile& profile, const analysis::Advice& a) {
  Json j = Json::object();
  j["title"] = render::text_of(profile, a.title);
  j["scope"] = string_or_null(profile, a.scope);
  if (!a.function.empty()) j["function"] = a.function;
  if (a.counter != kNone) j["counter"] = profile.str(a.counter);
  j["evidence"] = render::text_of(profile, a.evidence);
  j["steps"] = array_of(a.steps, [&](const analysis::Sentence& s) { return Json(render::text_of(profile, s)); });
  j["time_share"] = a.time_share;
  j["part_speedup"] = known_or_null(a.part_speedup);
  j["expected_speedup"] = known_or_null(a.expected_speedup);
  j["max_speedup"] = known_or_null(a.max_speedup);
  return j;
}

Json machine(const MachinePeaks& m) {
  return Json{{"cpu_model", m.cpu_model},
              {"threads", m.threads},
              {"isa", m.isa},
              {"fp32_flops", m.fp32_flops},
              {"fp64_flops", m.fp64_flops},
              {"fp32_flops_one_core", m.fp32_flops_one_core},
              {"fp64_flops_one_core", m.fp64_flops_one_core},
              {"bandwidth_bytes_per_s", m.bandwidth},
              {"bandwidth_one_core_bytes_per_s", m.bandwidth_one_core},
              {"measured_unix", m.measured_unix}};
}

// A rank by its number in the job (RankInfo::rank), from its index in Profile::ranks.
Json rank_number(const Profile& profile, std::uint32_t index) {
  return index < profile.ranks.size() ? Json(profile.ranks[index].rank) : Json(nullptr);
}

Json ranks_json(const Profile& profile, const RankAnalysis& a) {
  Json j = Json::object();
  j["world_size"] = profile.ranks.empty() ? 0 : profile.ranks.front().world_size;
  j["step"] = string_or_null(profile, a.step_name);
  j["steps"] = a.steps;
  j["straggler"] = a.straggler == kNone ? Json(nullptr) : rank_number(profile, a.straggler);
  j["clock_residual_ns"] = a.clock_residual_ns;
  j["median_spread_ns"] = a.median_spread_ns;
  j["incomplete_collectives"] = a.incomplete_collectives;
  j["ranks"] = array_of(a.ranks, [&](const RankSummary& r) {
    const RankInfo& info = profile.ranks[r.rank];
    Json x = Json::object();
    x["rank"] = info.rank;
    x["local_rank"] = info.local_rank;
    x["host"] = info.hostname;
    x["pid"] = info.pid;
    x["launcher"] = info.launcher;
    x["clock"] = Json{{"aligned", info.clock.aligned},       {"method", info.clock.method},
                      {"offset_ns", info.clock.offset_ns},   {"drift_ppb", info.clock.drift_ppb},
                      {"residual_ns", info.clock.residual_ns}, {"exchanges", info.clock.exchanges}};
    x["steps"] = array_of(r.steps, [](const RankStep& s) {
      return Json{{"start_ns", s.start_ns}, {"end_ns", s.end_ns}, {"wait_ns", s.wait_ns}};
    });
    x["mean_step_ns"] = r.mean_step_ns;
    x["best_step_ns"] = r.best_step_ns;
    x["worst_step_ns"] = r.worst_step_ns;
    x["mean_busy_ns"] = r.mean_busy_ns;
    x["best_busy_ns"] = r.best_busy_ns;
    x["straggler_vs_fastest"] = r.straggler_vs_fastest;
    x["straggler_vs_own_best"] = r.straggler_vs_own_best;
    x["wait_ns"] = r.wait_ns;
    x["caused_wait_ns"] = r.caused_wait_ns;
    x["communication_ns"] = r.communication_ns;
    x["computation_ns"] = r.computation_ns;
    x["overlap_ns"] = r.overlap_ns;
    return x;
  });
  j["waits"] = array_of(a.waits, [&](const RankWait& w) {
    return Json{{"rank", rank_number(profile, w.waiter)}, {"waited_for", rank_number(profile, w.waited_for)},
                {"operation", w.operation},              {"group", w.group},
                {"calls", w.calls},                      {"total_ns", w.total_ns},
                {"max_ns", w.max_ns}};
  });
  j["collectives"] = array_of(a.collectives, [&](const CollectiveCall& c) {
    Json x = Json{{"operation", c.operation},
                  {"group", c.group},
                  {"seq", c.seq},
                  {"bytes", c.bytes},
                  {"group_size", c.group_size},
                  {"first_arrival_ns", c.first_arrival_ns},
                  {"last_arrival_ns", c.last_arrival_ns},
                  {"last_rank", rank_number(profile, c.last_rank)},
                  {"nonblocking", c.nonblocking}};
    x["arrivals"] = array_of(c.arrivals, [&](const CollectiveArrival& r) {
      return Json{{"rank", rank_number(profile, r.rank)}, {"arrival_ns", r.arrival_ns}, {"end_ns", r.end_ns},
                  {"wait_ns", r.wait_ns},                 {"nonblocking", r.nonblocking},
                  {"blocked_ns", r.blocked_ns}};
    });
    return x;
  });
  const RankCriticalPath& path = a.critical_path;
  if (path.empty()) {
    j["critical_path"] = nullptr;
  } else {
    Json p = Json::object();
    p["step"] = path.step;
    p["start_ns"] = path.start_ns;
    p["end_ns"] = path.end_ns;
    p["compute_ns"] = path.compute_ns;
    p["collective_ns"] = path.collective_ns;
    p["segments"] = array_of(path.segments, [&](const RankPathSegment& s) {
      return Json{{"kind", to_string(s.kind)},
                  {"rank", rank_number(profile, s.rank)},
                  {"start_ns", s.start_ns},
                  {"end_ns", s.end_ns},
                  {"scope", string_or_null(profile, s.name)},
                  {"collective", s.collective == kNone ? Json(nullptr) : Json(s.collective)}};
    });
    j["critical_path"] = std::move(p);
  }
  return j;
}

Json compute(const report::ReportData& data) {
  const Profile& profile = *data.profile;
  Json j = Json::object();
  j["machine"] = data.machine_known ? machine(profile.machine) : Json(nullptr);
  j["scopes"] = array_of(data.compute, [&](const analysis::ScopeCompute& c) {
    Json s = Json::object();
    s["name"] = profile.str(c.scope->name);
    s["calls"] = c.scope->time.count;
    s["total_ns"] = c.scope->total_ns;
    s["flops"] = c.scope->flops;
    s["bytes"] = c.scope->bytes;
    s["flops_per_second"] = c.flops_per_second;
    s["bytes_per_second"] = c.bytes_per_second;
    s["arithmetic_intensity"] = c.intensity;
    if (c.roofline) {
      const RooflinePoint& p = *c.roofline;
      s["roofline"] = Json{{"bound", p.bound == RooflineBound::Memory ? "memory" : "compute"},
                           {"roofs", c.one_core ? "one_core" : "all_cores"},
                           {"attainable_flops_per_second", p.attainable},
                           {"fraction_of_roof", p.fraction},
                           {"ridge_flops_per_byte", p.ridge}};
    } else {
      s["roofline"] = nullptr;
    }
    return s;
  });
  return j;
}

// Every operator group (not only the rows the section shows), most self time first.
Json operators(const Profile& profile, const OperatorTable& table) {
  Json j = Json::object();
  j["calls"] = table.calls;
  j["recorded_calls"] = table.recorded_calls;
  j["self_ns"] = table.self_ns;
  j["operator_ns"] = table.operator_ns;
  j["covered_ns"] = table.covered_ns;
  j["fraction_of_run"] = table.fraction_of_run();
  j["groups"] = array_of(table.groups, [&](const OperatorGroup& g) {
    Json o = Json::object();
    o["name"] = profile.str(g.name);
    o["input_shapes"] = g.input_shapes.empty() ? Json(nullptr) : Json(g.input_shapes);
    o["input_dtypes"] = g.input_dtypes;
    o["scope"] = to_string(g.scope);
    o["calls"] = g.calls;
    o["total_ns"] = g.total_ns;
    o["self_ns"] = g.self_ns;
    o["mean_ns"] = g.mean_ns();
    o["flops"] = g.flops;
    o["flops_calls"] = g.flops_calls;
    o["flops_per_second"] = g.flops_per_second();
    o["bytes"] = g.bytes;
    if (table.heap_tracked) {
      o["heap"] = Json{{"alloc_bytes", g.heap_alloc_bytes},
                       {"path_calls", g.heap_path_calls},
                       {"bytes_per_call", g.heap_bytes_per_call()}};
    }
    o["forward"] = array_of(g.forward, [](const OperatorLink& l) { return Json{{"group", l.group}, {"calls", l.calls}}; });
    o["unlinked_calls"] = g.unlinked_calls;
    return o;
  });
  return j;
}

// The system monitor's part (ReportData::system): tracks summarised, energy per domain with its
// method and band, energy per scope and per step, carbon. A value not read is null.
Json finite_or_null(double v) { return std::isfinite(v) ? Json(v) : Json(nullptr); }

Json system_json(const Profile& profile, const report::SystemData& data) {
  const SystemProfile& system = profile.system;
  Json j = Json::object();
  j["interval_ms"] = system.interval_ms;
  j["samples"] = system.sample_ns.size();
  j["duration_ns"] = system.sample_ns.size() < 2 ? std::uint64_t{0} : system.sample_ns.back() - system.sample_ns.front();
  Json limits = Json::object();
  limits["logical_cpus"] = system.limits.logical_cpus;
  limits["host_memory_bytes"] = system.limits.host_memory_bytes;
  limits["cgroup"] = system.limits.cgroup;
  limits["cgroup_cpu_cores"] = system.limits.cgroup_cpu_cores;
  limits["cgroup_memory_bytes"] = system.limits.cgroup_memory_bytes;
  j["limits"] = std::move(limits);
  j["tracks"] = array_of(data.tracks, [](const analysis::TrackSummary& t) {
    Json o = Json::object();
    o["name"] = t.name;
    o["unit"] = t.unit;
    o["samples"] = t.samples;
    o["min"] = finite_or_null(t.min);
    o["mean"] = finite_or_null(t.mean);
    o["p95"] = finite_or_null(t.p95);
    o["max"] = finite_or_null(t.max);
    o["last"] = finite_or_null(t.last);
    return o;
  });
  Json energy = Json::object();
  energy["domains"] = array_of(data.domains, [](const analysis::DomainSummary& d) {
    Json o = Json::object();
    o["name"] = d.domain->name;
    o["kind"] = d.domain->kind;
    o["method"] = to_string(d.domain->method);
    o["measured"] = d.measured;
    o["counted"] = d.counted;
    o["joules"] = d.domain->joules;
    o["uncertainty"] = d.domain->uncertainty;
    o["mean_watts"] = d.mean_watts;
    o["track"] = d.domain->track;
    o["note"] = d.domain->note;
    return o;
  });
  const analysis::EnergyAttribution& a = data.energy;
  energy["total_joules"] = data.carbon ? data.carbon->energy_joules : 0.0;
  energy["measured_joules"] = data.carbon ? data.carbon->measured_joules : 0.0;
  energy["attribution"] = a.basis == analysis::EnergyBasis::Spans     ? "spans"
                          : a.basis == analysis::EnergyBasis::Samples ? "samples"
                                                                      : "none";
  energy["thread"] = a.thread == kNone ? Json(nullptr) : Json(a.thread);
  energy["timeline_joules"] = a.total_joules;
  energy["attributed_joules"] = a.attributed_joules;
  energy["domains_without_track"] = a.domains_without_track;
  energy["steps"] = array_of(a.steps, [&](const analysis::StepEnergy& s) {
    Json o = Json::object();
    o["name"] = profile.str(s.name);
    o["calls"] = s.calls;
    o["items"] = s.items;
    o["joules"] = s.joules;
    o["joules_per_call"] = s.joules_per_call;
    o["joules_per_item"] = s.joules_per_item;
    o["measured"] = s.measured;
    return o;
  });
  energy["scopes"] = array_of(a.scopes, [&](const analysis::ScopeEnergy& s) {
    Json o = Json::object();
    o["name"] = profile.str(s.name);
    o["joules"] = s.joules;
    o["share"] = s.share;
    o["seconds"] = s.seconds;
    o["mean_watts"] = s.mean_watts;
    o["measured"] = s.measured;
    return o;
  });
  j["energy"] = std::move(energy);
  if (data.carbon) {
    const CarbonEstimate& c = *data.carbon;
    Json carbon = Json::object();
    carbon["grams_co2e"] = c.grams_co2;
    carbon["grams_low"] = c.grams_low;
    carbon["grams_high"] = c.grams_high;
    carbon["energy_joules"] = c.energy_joules;
    carbon["measured_joules"] = c.measured_joules;
    carbon["pue"] = c.pue;
    carbon["region"] = c.intensity.region;
    carbon["region_name"] = c.intensity.name;
    carbon["grams_per_kwh"] = c.intensity.grams_per_kwh;
    carbon["source"] = c.intensity.source;
    carbon["defaulted_region"] = c.defaulted_region;
    j["carbon"] = std::move(carbon);
  } else {
    j["carbon"] = nullptr;
  }
  j["notes"] = system.notes;
  return j;
}

// A continuous run (ReportData::continuous): its windows, the events found over them with the
// window where each began, and the slopes. A figure that was not measured is null.
Json measured(double v) { return std::isnan(v) ? Json(nullptr) : Json(v); }

Json continuous_json(const ContinuousProfile& c, const PerformanceTrends& t) {
  Json j = Json::object();
  j["interval_ns"] = c.interval_ns;
  j["step_scope"] = c.step_scope;
  j["finished"] = c.finished;
  j["windows"] = array_of(c.windows, [](const ProfileWindow& w) {
    Json x = Json::object();
    x["start_ns"] = w.start_ns;
    x["end_ns"] = w.end_ns;
    x["raw_windows"] = w.raw_windows;
    x["step_aligned"] = w.step_aligned;
    x["steps"] = w.steps;
    x["step_ns"] = w.step_ns;
    x["items"] = w.items;
    x["scope_calls"] = w.scope_calls;
    x["cpu_samples"] = w.cpu_samples;
    x["cpu_sample_ns"] = w.cpu_sample_ns;
    x["rss_bytes"] = w.rss_bytes;
    x["rss_peak_bytes"] = w.rss_peak_bytes;
    x["heap_live_bytes"] = w.heap_live_bytes;
    x["heap_alloc_bytes"] = w.heap_alloc_bytes;
    x["heap_free_bytes"] = w.heap_free_bytes;
    x["gpu_memory_bytes"] = measured(w.gpu_memory_bytes);
    x["energy_joules"] = measured(w.energy_joules);
    x["cpu_percent"] = measured(w.cpu_percent);
    x["scopes"] = array_of(w.scopes, [](const WindowScope& s) {
      Json e = Json::object();
      e["name"] = s.name;
      e["calls"] = s.calls;
      e["total_ns"] = s.total_ns;
      e["self_ns"] = s.self_ns;
      e["items"] = s.items;
      return e;
    });
    x["functions"] = array_of(w.functions, [](const WindowFunction& f) {
      Json e = Json::object();
      e["name"] = f.name;
      e["samples"] = f.samples;
      e["weight_ns"] = f.weight_ns;
      return e;
    });
    return x;
  });
  j["anomalies"] = array_of(t.anomalies, [](const Anomaly& a) {
    Json x = Json::object();
    x["kind"] = to_string(a.kind);
    x["metric"] = a.metric;
    x["unit"] = a.unit;
    x["window"] = a.window;
    x["window_start_ns"] = a.window_start_ns;
    x["before"] = a.before;
    x["after"] = a.after;
    x["magnitude"] = a.magnitude;
    x["score"] = a.score;
    x["worse"] = a.worse;
    x["description"] = a.description;
    return x;
  });
  j["trends"] = array_of(t.trends, [](const Trend& tr) {
    Json x = Json::object();
    x["metric"] = tr.metric;
    x["unit"] = tr.unit;
    x["slope_per_hour"] = tr.slope_per_hour;
    x["relative_slope_per_hour"] = tr.relative_slope_per_hour;
    x["low"] = tr.low;
    x["high"] = tr.high;
    x["significant"] = tr.significant;
    x["windows"] = tr.windows;
    return x;
  });
  return j;
}

Json report(const report::ReportData& data) {
  const Profile& profile = *data.profile;
  Json j = Json::object();
  j["schema"] = kJsonSchemaName;
  j["schema_version"] = kJsonSchemaVersion;
  j["metadata"] = metadata(data);
  // Only when the program annotated the run (Profiler::annotate), like heap and cpu below.
  if (!profile.annotations.empty()) {
    Json a = Json::object();
    for (const auto& [key, value] : profile.annotations) a[key] = value;
    j["annotations"] = std::move(a);
  }
  j["timing"] = by_name(profile, profile.scopes, kEvery,
                        [&](const ScopeStats& scope) { return scope_timing(profile, scope); });
  j["memory"] = memory(profile);
  // Only with heap tracking or CPU sampling, so that a profile without them reads exactly as before.
  if (profile.heap.tracked) j["heap"] = heap(data);
  if (profile.cpu.sampled) j["cpu"] = cpu(data);
  // Only with GPU tracing, like heap and cpu.
  if (data.gpu) j["gpu"] = gpu(profile, *data.gpu);
  if (!data.compute.empty()) j["compute"] = compute(data);
  // Only with framework operator calls (spans with "op_scope"), like compute.
  if (!data.operators.empty()) j["operators"] = operators(profile, data.operators);
  j["bottlenecks"] = array_of(data.bottlenecks, [&](const analysis::Bottleneck& b) { return bottleneck(profile, b); });
  j["recommendations"] =
      array_of(data.advice, [&](const analysis::Advice& a) { return recommendation(profile, a); });
  Json throughput = Json::object();
  for (const report::ScopeThroughput& t : data.throughput) throughput[profile.str(t.scope->name)] = scope_throughput(t);
  j["throughput"] = std::move(throughput);
  // Only with metrics (nnprof/metrics.hpp): series and summaries as save_metrics writes them.
  if (!profile.metrics.empty()) j["metrics"] = metrics_json(profile);
  // Only when the system monitor ran, like metrics.
  if (data.system) j["system"] = system_json(profile, *data.system);
  // Only for a continuous run (Profile::continuous.enabled), like system.
  if (data.continuous) j["continuous"] = continuous_json(profile.continuous, *data.continuous);
  j["call_tree"] = call_tree(profile);
  j["threads"] = array_of(profile.threads, [&](const ThreadInfo& t) {
    Json x = thread(t);
    if (profile.ranks.size() >= 2) x["rank"] = rank_number(profile, t.rank);  // a merged job: the rank it ran in
    return x;
  });
  j["completeness"] = completeness(profile.completeness);
  // Only with flows, so that a profile without them reads exactly as before.
  if (data.critical_path) j["critical_path"] = critical_path_json(profile, *data.critical_path);
  // Only for a merged distributed profile (two or more ranks).
  if (data.ranks) j["ranks"] = ranks_json(profile, *data.ranks);
  j["diagnostics"] =
      array_of(profile.diagnostics, [&](const Diagnostic& d) { return diagnostic(profile, d); });
  return j;
}

}  // namespace

void write_json_report(const report::ReportData& data, std::ostream& out) {
  // Scope names and command lines come from the program and may hold any bytes; `replace`
  // turns invalid UTF-8 into U+FFFD instead of throwing, so the document is always valid.
  out << report(data).dump(2, ' ', false, Json::error_handler_t::replace) << '\n';
}

void write_json_report(const Profile& profile, std::ostream& out) { write_json_report(report::analyse(profile), out); }

void JsonExporter::do_write(const Profile& profile, std::ostream& out, const ReportOptions& options) const {
  // Names are data here (both forms are written) and lists are whole: only the carbon settings apply.
  report::ReportLimits limits;
  limits.carbon = options.carbon;
  write_json_report(report::analyse(profile, limits), out);
  if (!out) throw Error("could not write the JSON report: the output stream failed");
}

}  // namespace nnprof::io
