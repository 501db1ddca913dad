// GPU: how CUPTI tracing ran and what it lost, copies, kernels, streams, devices, peer copies,
// device memory and what was still allocated; then "GPU time per scope": what each scope's CPU
// time paid for on the GPU. From ReportData::gpu (GPU-traced profiles only).
#include <algorithm>
#include <array>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "analysis/memory_findings.hpp"
#include "report/gpu_data.hpp"
#include "report/html_escape.hpp"
#include "report/charts/html_charts.hpp"
#include "report/cells.hpp"
#include "report/sections.hpp"

namespace nnprof::report::sections {
namespace {

using report::GpuReportData;

std::string kernel_name(const Profile& profile, const report::GpuKernelSummary& k) {
  return k.name == kNone ? std::string("[unnamed]") : profile.str(k.name);
}

std::string device_label(const GpuReportData& data, std::uint32_t device) {
  for (const DeviceStats& d : data.streams.devices)
    if (d.device == device && !d.name.empty()) return fmt::format("{}: {}", device, d.name);
  return std::to_string(device);
}

Cell device_cell(const GpuReportData& data, std::uint32_t device) {
  return Cell::number(device_label(data, device), static_cast<double>(device));
}

std::string dims(const std::array<std::int32_t, 3>& d) { return fmt::format("{}×{}×{}", d[0], d[1], d[2]); }

// Bytes per second from bytes and nanoseconds, "n/a" when no time was measured.
Cell bandwidth_cell(double gbytes_per_s, bool measured) {
  if (!measured) return not_known();
  return Cell::number(report::format_si(gbytes_per_s * 1e9, "B/s"), gbytes_per_s * 1e9);
}

// NVML percentages (0..100, negative when no sample was taken) as a share.
Cell nvml_cell(double percent) { return percent < 0.0 ? not_known() : fraction_cell(percent / 100.0); }

Table table_of(std::string id, std::vector<Column> columns) {
  Table table;
  table.id = std::move(id);
  table.columns = std::move(columns);
  return table;
}

// The top kernels by total time as horizontal bars, each as long as its time relative to the
// longest: where the GPU time went, at a glance.
Picture kernel_bars(const Profile& profile, const GpuReportData& data, std::size_t shown) {
  const double longest = static_cast<double>(data.kernels.front().total_ns);
  std::string out;
  out += "<div class=\"kbars\" id=\"gpu-kernel-chart\">";
  for (std::size_t i = 0; i < shown; ++i) {
    const report::GpuKernelSummary& k = data.kernels[i];
    const std::string name = kernel_name(profile, k);
    out += "<div class=\"kb\"><span class=\"kn\" title=\"";
    report::html::append_escaped(out, name);
    out += "\">";
    report::html::append_escaped(out, name);
    report::html::append(out,
                     "</span><span class=\"kt\"><i style=\"width:{:.1f}%\"></i></span><span class=\"kv\">{} ({})</span></div>",
                     std::clamp(static_cast<double>(k.total_ns) / longest * 100.0, 0.0, 100.0),
                     report::format_duration(k.total_ns), report::format_percent(k.share));
  }
  out += "</div>";
  return Picture::of(std::move(out), report::html::kKernelBarsStyle);
}

void add_transfers(const GpuReportData& data, Section& section) {
  if (data.transfers.empty()) return;
  section.subheading("Copies and memsets");
  section.say(Sentence().words(
      "Achieved bandwidth: bytes over the summed time of the copies. Copies from or to pageable host memory go "
      "through a staging buffer and cannot overlap with host work."));
  Table table = table_of("gpu-transfers-table",
                         {left("Kind", "kind"), right("Count", "count"), right("Bytes", "bytes"), right("Time", "ns"),
                          right("Achieved bandwidth", "bandwidth"), right("Pageable host memory", "pageable")});
  for (const report::GpuTransferSummary& t : data.transfers) {
    table.row({Cell::words(t.memset ? std::string("Memset") : fmt::format("Memcpy {}", to_string(t.kind))),
               count_cell(t.count), bytes_cell(t.bytes), duration_cell(t.total_ns),
               bandwidth_cell(t.gbytes_per_s(), t.total_ns > 0),
               t.memset ? Cell::words("-") : count_cell(t.pageable)});
  }
  section.add(std::move(table));
}

void add_kernels(const ReportData& report, Section& section) {
  const Profile& profile = *report.profile;
  const GpuReportData& data = *report.gpu;
  if (data.kernels.empty()) return;
  const std::size_t shown = std::min(data.kernels.size(), report.limits.kernels);
  section.subheading("Top kernels");
  say_top_of(section, shown, data.kernels.size(), "kernels");
  section.say(Sentence().words(
      "By total time; % is of the GPU time (kernels, copies and memsets summed). Grid, block, registers and "
      "theoretical occupancy are those of the configuration launched most often; (est.) marks an occupancy nnprof "
      "computed from the device limits."));
  if (data.kernels.front().total_ns > 0) section.add(kernel_bars(profile, data, shown));
  Table table = table_of("gpu-kernels-table",
                         {right("#", "rank"), left("Kernel", "kernel"), right("Calls", "calls"), right("Total", "total"),
                          right("Mean", "mean"), right("Min", "min"), right("Max", "max"),
                          right("% of GPU time", "pct"), right("Grid", "grid"), right("Block", "block"),
                          right("Registers per thread", "registers"), right("Theoretical occupancy", "occupancy")});
  table.style = Table::Style::Sortable;
  table.filter_label = "Filter kernels by name";
  for (std::size_t i = 0; i < shown; ++i) {
    const report::GpuKernelSummary& k = data.kernels[i];
    const bool config = k.config_calls > 0;
    Cell occupancy = not_known();
    if (config && k.occupancy >= 0.0) {
      occupancy = Cell::share(report::format_percent(k.occupancy) + (k.occupancy_estimated ? " (est.)" : ""), k.occupancy);
    }
    table.row({rank_cell(i), name_cell(kernel_name(profile, k)), count_cell(k.calls), duration_cell(k.total_ns),
               duration_cell(k.mean_ns), duration_cell(k.min_ns), duration_cell(k.max_ns), fraction_cell(k.share),
               config ? Cell::words(dims(k.grid)) : not_known(), config ? Cell::words(dims(k.block)) : not_known(),
               config ? count_cell(k.registers_per_thread) : not_known(), std::move(occupancy)});
  }
  section.add(std::move(table));
}

void add_streams(const Profile& profile, const GpuReportData& data, Section& section) {
  if (data.streams.streams.empty()) return;
  section.subheading("Streams");
  section.say(Sentence()
                  .words("Idle: time between a stream's first op and its last with nothing running on it; idle gaps: "
                         "idle stretches longer than ")
                  .duration(data.streams.gap_threshold_ns)
                  .words("; efficiency: busy over that span."));
  Table table = table_of("gpu-streams-table",
                         {left("Device", "device"), right("Stream", "stream"), right("Ops", "ops"),
                          right("Kernels", "kernels"), right("Busy", "busy"), right("Idle", "idle"),
                          right("Idle gaps", "gaps"), right("Longest gap", "longest"),
                          right("Efficiency (busy / active)", "efficiency")});
  for (const StreamStats& s : data.streams.streams) {
    const bool is_default = s.stream < profile.gpu.streams.size() && profile.gpu.streams[s.stream].is_default;
    table.row({device_cell(data, s.device),
               Cell::number(fmt::format("{}{}", s.stream_id, is_default ? " (default)" : ""), s.stream_id),
               count_cell(s.ops), count_cell(s.kernels), duration_cell(s.busy_ns), duration_cell(s.idle_ns),
               count_cell(s.idle_gaps), duration_cell(s.longest_gap_ns),
               s.ops == 0 ? not_known() : fraction_cell(s.efficiency)});
  }
  section.add(std::move(table));
}

void add_devices(const GpuReportData& data, Section& section) {
  if (data.streams.devices.empty()) return;
  section.subheading("Devices");
  section.say(Sentence().words(
      "Kernel busy: time with at least one kernel running, and its share of the session; overlap: time with two or "
      "more streams of the device busy at once."));
  Table table = table_of("gpu-devices-table",
                         {left("Device", "device"), right("Kernels", "kernels"), right("Kernel busy", "kernel-busy"),
                          right("% of session", "pct"), right("Busy (any op)", "busy"),
                          right("Overlap (2+ streams busy)", "overlap"), right("Copied", "copied"),
                          right("NVML GPU utilisation (mean)", "nvml-mean"),
                          right("NVML GPU utilisation (max)", "nvml-max"),
                          right("NVML memory utilisation (mean)", "nvml-memory")});
  for (const DeviceStats& d : data.streams.devices) {
    table.row({device_cell(data, d.device), count_cell(d.kernels), duration_cell(d.kernel_busy_ns),
               fraction_cell(d.kernel_busy_fraction), duration_cell(d.busy_ns), duration_cell(d.overlap_ns),
               bytes_cell(d.memcpy_bytes), nvml_cell(d.nvml_gpu_utilization_mean),
               nvml_cell(d.nvml_gpu_utilization_max), nvml_cell(d.nvml_memory_utilization_mean)});
  }
  section.add(std::move(table));
}

void add_peers(const GpuReportData& data, Section& section) {
  if (data.streams.peers.empty()) return;
  section.subheading("Peer-to-peer copies");
  Table table = table_of("gpu-peers-table",
                         {left("From device", "from"), left("To device", "to"), right("Copies", "copies"),
                          right("Bytes", "bytes"), right("Time", "ns"), right("Achieved bandwidth", "bandwidth")});
  for (const PeerBandwidth& p : data.streams.peers) {
    table.row({device_cell(data, p.src_device), device_cell(data, p.dst_device), count_cell(p.copies),
               bytes_cell(p.bytes), duration_cell(p.busy_ns), bandwidth_cell(p.gbytes_per_s, p.busy_ns > 0)});
  }
  section.add(std::move(table));
}

void add_memory(const GpuReportData& data, Section& section) {
  if (data.memory.devices.empty()) return;
  section.subheading("Device memory");
  section.say(Sentence().words(
      "Allocations CUPTI traced (cudaMalloc, stream-ordered and managed); NVML: memory in use on the device, by "
      "every process."));
  Table table = table_of("gpu-memory-table",
                         {left("Device", "device"), right("Peak allocated", "peak"),
                          right("Peak at (since start)", "peak-at"), right("Live at end", "live"),
                          right("Allocations", "allocs"), right("Releases", "frees"),
                          right("NVML max in use", "nvml-max"),
                          right("Not allocations (context, driver, other)", "unexplained")});
  for (const GpuDeviceMemory& m : data.memory.devices) {
    const bool nvml = m.nvml_used_max > 0;
    table.row({device_cell(data, m.device), bytes_cell(m.peak_bytes),
               m.alloc_count == 0 ? not_known() : duration_cell(m.peak_time_ns), bytes_cell(m.live_bytes),
               count_cell(m.alloc_count), count_cell(m.free_count),
               nvml ? bytes_cell(m.nvml_used_max) : not_known(), nvml ? bytes_cell(m.unexplained_bytes) : not_known()});
  }
  section.add(std::move(table));
  for (const std::string& note : report::gpu_memory_notes(data)) section.say(Sentence().words(note), true);
}

void add_leaks(const ReportData& report, Section& section) {
  const Profile& profile = *report.profile;
  const GpuReportData& data = *report.gpu;
  if (data.memory.leaks.empty()) return;
  const std::size_t shown = std::min(data.memory.leaks.size(), report.limits.gpu_leaks);
  section.subheading("Device memory still allocated at the end");
  say_top_of(section, shown, data.memory.leaks.size(), "allocating scopes");
  section.say(Sentence().words("By device and allocating scope, largest first."));
  Table table = table_of("gpu-leaks-table", {left("Device", "device"), left("Allocating scope", "scope"),
                                             right("Blocks", "blocks"), right("Bytes", "bytes")});
  for (std::size_t i = 0; i < shown; ++i) {
    const GpuLeak& leak = data.memory.leaks[i];
    table.row({device_cell(data, leak.device), name_cell(analysis::scope_path_label(profile, leak.node)),
               count_cell(leak.blocks), bytes_cell(leak.bytes)});
  }
  section.add(std::move(table));
}

Section gpu_scopes(const Profile& profile) {
  Section section{"gpu-scopes", "GPU time per scope", {}};
  if (profile.gpu.scopes.empty()) {
    section.say(Sentence().words("No GPU work was launched inside a scope."));
    return section;
  }
  section.say(Sentence().words(
      "GPU work launched while the scope was open (nested calls of the same name counted once). GPU time / CPU time "
      "is over the scope's inclusive CPU time; above 100% the GPU worked longer than the CPU spent in the scope."));
  Table table = table_of("gpu-scopes-table",
                         {left("Scope", "scope"), right("Kernels", "kernels"), right("Kernel time", "kernel-ns"),
                          right("Copies", "copies"), right("Copy time", "copy-ns"), right("Bytes copied", "copied"),
                          right("Device memory allocated", "allocated"), right("GPU time", "gpu-ns"),
                          right("GPU time / CPU time", "pct")});
  table.style = Table::Style::Sortable;
  table.filter_label = "Filter scopes by name";
  for (const GpuScopeStats& s : profile.gpu.scopes) {
    const std::string name = s.name == kNone ? std::string("[outside any scope]") : profile.str(s.name);
    const ScopeStats* cpu = s.name == kNone ? nullptr : profile.find_scope(name);
    // GPU work runs beside its launching scope, so the share may pass 100%: the GPU was busy
    // longer than the CPU spent in the scope. No bar: it is not a part of a whole.
    Cell share = not_known();
    if (cpu != nullptr && cpu->total_ns > 0) {
      const double fraction = static_cast<double>(s.gpu_ns()) / static_cast<double>(cpu->total_ns);
      share = Cell::number(report::format_percent(fraction), fraction);
    }
    table.row({name_cell(name), count_cell(s.kernels), duration_cell(s.kernel_ns), count_cell(s.memcpys),
               duration_cell(s.memcpy_ns), bytes_cell(s.memcpy_bytes), bytes_cell(s.alloc_bytes),
               duration_cell(s.gpu_ns()), std::move(share)});
  }
  section.add(std::move(table));
  return section;
}

}  // namespace

void gpu(const ReportData& data, std::vector<Section>& out) {
  if (!data.gpu) return;
  const Profile& profile = *data.profile;
  const GpuReportData& gpu = *data.gpu;
  Section section{"gpu", "GPU", {}};
  section.say(Sentence().words(
      "What CUPTI traced on the GPUs: kernels, copies and memsets on each stream, device memory, and the scope that "
      "launched each. Times are since the session start, on the CPU spans' clock."));
  Facts facts;
  for (const report::GpuFact& fact : report::gpu_facts(profile, gpu)) facts.items.push_back({fact.label, Sentence().words(fact.value)});
  section.add(std::move(facts));
  add_transfers(gpu, section);
  add_kernels(data, section);
  add_streams(profile, gpu, section);
  add_devices(gpu, section);
  add_peers(gpu, section);
  add_memory(gpu, section);
  add_leaks(data, section);
  out.push_back(std::move(section));
  out.push_back(gpu_scopes(profile));
}

}  // namespace nnprof::report::sections
