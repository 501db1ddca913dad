#include "io/gpu_report_tables.hpp"

#include <algorithm>
#include <limits>
#include <map>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include "analysis/memory_findings.hpp"

namespace nnprof::io {
namespace {

using Config = std::array<std::int32_t, 6>;  // grid x, y, z, block x, y, z

struct KernelAccumulator {
  GpuKernelSummary summary;
  // Per configuration: calls and the kernel record of its first call (registers, occupancy).
  std::map<Config, std::pair<std::uint64_t, std::uint32_t>> configs;
};

std::string dims(const std::array<std::int32_t, 3>& d) { return fmt::format("{}×{}×{}", d[0], d[1], d[2]); }

// "NVIDIA H100 (132 SMs, 80.0 GiB, compute capability 9.0, 3.35 TB/s memory bandwidth)", with
// the parts the driver did not report left out.
std::string device_description(const GpuDevice& d) {
  std::vector<std::string> parts;
  if (d.sms > 0) parts.push_back(format_count(d.sms, "SM", "SMs"));
  if (d.memory_bytes > 0) parts.push_back(format_bytes(d.memory_bytes));
  if (d.cc_major > 0) parts.push_back(fmt::format("compute capability {}.{}", d.cc_major, d.cc_minor));
  if (d.bandwidth_bytes_per_s > 0)
    parts.push_back(format_si(static_cast<double>(d.bandwidth_bytes_per_s), "B/s") + " memory bandwidth");
  std::string out = d.name.empty() ? std::string("unnamed device") : d.name;
  if (!parts.empty()) out += fmt::format(" ({})", fmt::join(parts, ", "));
  return out;
}

std::string device_label(const GpuReportData& data, std::uint32_t device) {
  for (const DeviceStats& d : data.streams.devices)
    if (d.device == device && !d.name.empty()) return fmt::format("{}: {}", device, d.name);
  return std::to_string(device);
}

// "1.00 MiB in 10.0 µs (105 GB/s)": what moved, how long it took and the rate it achieved.
std::string moved(std::uint64_t bytes, std::uint64_t ns) {
  std::string out = fmt::format("{} in {}", format_bytes(bytes), format_duration(ns));
  if (ns > 0) out += fmt::format(" ({})", format_si(static_cast<double>(bytes) / static_cast<double>(ns) * 1e9, "B/s"));
  return out;
}

// NVML percentages; "n/a" where no sample was taken (the views say so with a negative value).
std::string nvml_percent(double percent) { return percent < 0.0 ? "n/a" : format_percent(percent / 100.0); }

}  // namespace


std::string driver_version_name(std::int32_t version) {
  if (version <= 0) return "unknown";
  return fmt::format("{}.{}", version / 1000, version % 1000 / 10);
}

std::string gpu_records_lost(const GpuSummary& s) {
  std::vector<std::string> parts;
  if (s.records_dropped > 0)
    parts.push_back(format_count(s.records_dropped, "record", "records") + " dropped (CUPTI had no buffer)");
  if (s.records_refused > 0)
    parts.push_back(format_count(s.records_refused, "record", "records") + " refused (past the GPU record budget)");
  if (s.records_incomplete > 0)
    parts.push_back(format_count(s.records_incomplete, "record", "records") + " unreadable");
  if (s.records_untimed > 0)
    parts.push_back(format_count(s.records_untimed, "kernel", "kernels") + " without timestamps");
  if (s.unmatched_correlations > 0)
    parts.push_back(format_count(s.unmatched_correlations, "op", "ops") + " whose launching call was not seen");
  if (parts.empty()) return "none lost";
  return fmt::format("{}", fmt::join(parts, ", "));
}

GpuReportData gpu_report_data(const Profile& profile) {
  GpuReportData data;
  const GpuProfile& gpu = profile.gpu;
  if (!gpu.summary.traced) return data;
  data.streams = stream_report(profile);
  data.memory = gpu_memory_report(profile);

  std::map<StringId, KernelAccumulator> kernels;
  std::map<MemcpyKind, GpuTransferSummary> copies;
  GpuTransferSummary memsets;
  memsets.memset = true;
  for (const GpuOp& op : gpu.ops) {
    const std::uint64_t ns = op.duration_ns();
    switch (op.kind) {
      case GpuOpKind::Kernel: {
        ++data.kernel_count;
        data.kernel_ns += ns;
        KernelAccumulator& k = kernels[op.name];
        GpuKernelSummary& s = k.summary;
        s.name = op.name;
        s.min_ns = s.calls == 0 ? ns : std::min(s.min_ns, ns);
        s.max_ns = std::max(s.max_ns, ns);
        ++s.calls;
        s.total_ns += ns;
        if (op.detail < gpu.kernels.size()) {
          const GpuKernel& r = gpu.kernels[op.detail];
          const Config config{r.grid[0], r.grid[1], r.grid[2], r.block[0], r.block[1], r.block[2]};
          auto [it, inserted] = k.configs.try_emplace(config, 0, op.detail);
          ++it->second.first;
        }
        break;
      }
      case GpuOpKind::Memcpy: {
        ++data.memcpy_count;
        data.memcpy_ns += ns;
        const GpuMemcpy* m = op.detail < gpu.memcpys.size() ? &gpu.memcpys[op.detail] : nullptr;
        GpuTransferSummary& t = copies[m != nullptr ? m->kind : MemcpyKind::Unknown];
        t.kind = m != nullptr ? m->kind : MemcpyKind::Unknown;
        ++t.count;
        t.total_ns += ns;
        if (m != nullptr) {
          t.bytes += m->bytes;
          data.memcpy_bytes += m->bytes;
          if (m->pageable()) {
            ++t.pageable;
            ++data.memcpy_pageable;
          }
        }
        break;
      }
      case GpuOpKind::Memset: {
        ++data.memset_count;
        data.memset_ns += ns;
        ++memsets.count;
        memsets.total_ns += ns;
        if (op.detail < gpu.memsets.size()) {
          memsets.bytes += gpu.memsets[op.detail].bytes;
          data.memset_bytes += gpu.memsets[op.detail].bytes;
        }
        break;
      }
    }
  }
  for (const auto& entry : copies) data.transfers.push_back(entry.second);
  if (memsets.count > 0) data.transfers.push_back(memsets);

  const PercentOf of_gpu(data.gpu_ns());
  for (auto& [name, k] : kernels) {
    GpuKernelSummary s = k.summary;
    s.mean_ns = static_cast<double>(s.total_ns) / static_cast<double>(s.calls);
    s.share = of_gpu.fraction(s.total_ns);
    s.configs = k.configs.size();
    // The configuration launched most often; on a tie the smaller one, so the choice does not
    // depend on the order of the ops.
    const auto most = std::max_element(k.configs.begin(), k.configs.end(), [](const auto& a, const auto& b) {
      return a.second.first < b.second.first;
    });
    if (most != k.configs.end()) {
      const Config& c = most->first;
      s.grid = {c[0], c[1], c[2]};
      s.block = {c[3], c[4], c[5]};
      s.config_calls = most->second.first;
      const GpuKernel& r = gpu.kernels[most->second.second];
      s.registers_per_thread = r.registers_per_thread;
      s.occupancy = r.occupancy;
      s.occupancy_estimated = r.occupancy_estimated;
    }
    data.kernels.push_back(s);
  }
  std::stable_sort(data.kernels.begin(), data.kernels.end(),
                   [](const GpuKernelSummary& a, const GpuKernelSummary& b) { return a.total_ns > b.total_ns; });
  return data;
}

std::vector<GpuFact> gpu_facts(const Profile& profile, const GpuReportData& data) {
  const GpuSummary& s = profile.gpu.summary;
  std::vector<GpuFact> facts;
  facts.push_back({"Status", s.status.empty() ? std::string("traced") : s.status});
  for (const GpuDevice& d : profile.gpu.devices)
    facts.push_back({fmt::format("Device {}", d.id), device_description(d)});
  facts.push_back({"CUPTI and driver",
                   fmt::format("CUPTI API version {}, CUDA driver {}",
                               s.cupti_version == 0 ? std::string("unknown") : std::to_string(s.cupti_version),
                               driver_version_name(s.driver_version))});
  std::string clock = s.clock_source.empty() ? std::string("unknown") : s.clock_source;
  // Only a mapped clock has an offset and an uncertainty worth stating.
  if (s.clock_offset_ns != 0 || s.clock_uncertainty_ns > 0) {
    clock += fmt::format(" (offset {}, slope {:.9g}, uncertainty ±{})", format_duration(s.clock_offset_ns),
                         s.clock_slope, format_duration(s.clock_uncertainty_ns));
  }
  facts.push_back({"Clock source", clock});
  facts.push_back({"Kernels", data.kernel_count == 0 ? std::string("none")
                                                     : fmt::format("{}, {} of kernel time",
                                                                   format_count(data.kernel_count, "kernel", "kernels"),
                                                                   format_duration(data.kernel_ns))});
  std::string copies = "none";
  if (data.memcpy_count > 0) {
    copies = fmt::format("{}, {}, {} pageable", format_count(data.memcpy_count, "copy", "copies"),
                         moved(data.memcpy_bytes, data.memcpy_ns), format_count(data.memcpy_pageable));
  }
  facts.push_back({"Copies", copies});
  facts.push_back({"Memsets", data.memset_count == 0
                                  ? std::string("none")
                                  : fmt::format("{}, {}", format_count(data.memset_count, "memset", "memsets"),
                                                moved(data.memset_bytes, data.memset_ns))});
  facts.push_back({"GPU time", fmt::format("{}: the durations of every kernel, copy and memset summed (ops that "
                                           "ran at once on different streams each count)",
                                           format_duration(data.gpu_ns()))});
  facts.push_back({"Records lost", gpu_records_lost(s)});
  return facts;
}

TextTable gpu_transfers_table(const GpuReportData& data, Headers headers) {
  const bool doc = headers == Headers::Document;
  TextTable table({{"Kind", Align::Left},
                   {"Count", Align::Right},
                   {"Bytes", Align::Right},
                   {"Time", Align::Right},
                   {doc ? "Achieved bandwidth" : "Bandwidth", Align::Right},
                   {doc ? "Pageable host memory" : "Pageable", Align::Right}});
  for (const GpuTransferSummary& t : data.transfers) {
    table.add_row({t.memset ? std::string("Memset") : fmt::format("Memcpy {}", to_string(t.kind)),
                   format_count(t.count), format_bytes(t.bytes), format_duration(t.total_ns),
                   t.total_ns == 0 ? std::string("n/a") : format_si(t.gbytes_per_s() * 1e9, "B/s"),
                   t.memset ? std::string("-") : format_count(t.pageable)});
  }
  return table;
}

TextTable gpu_kernels_table(const Profile& profile, const GpuReportData& data, std::size_t max_rows,
                            Headers headers) {
  const bool doc = headers == Headers::Document;
  TextTable table({{"#", Align::Right},
                   {"Kernel", Align::Left},
                   {"Calls", Align::Right},
                   {"Total", Align::Right},
                   {"Mean", Align::Right},
                   {"Min", Align::Right},
                   {"Max", Align::Right},
                   {doc ? "% of GPU time" : "% GPU", Align::Right},
                   {"Grid", Align::Right},
                   {"Block", Align::Right},
                   {doc ? "Registers per thread" : "Regs", Align::Right},
                   {doc ? "Theoretical occupancy" : "Occupancy", Align::Right}});
  for (std::size_t i = 0; i < data.kernels.size() && i < max_rows; ++i) {
    const GpuKernelSummary& k = data.kernels[i];
    const bool config = k.config_calls > 0;
    std::string occupancy = "n/a";
    if (config && k.occupancy >= 0.0)
      occupancy = format_percent(k.occupancy) + (k.occupancy_estimated ? " (est.)" : "");
    table.add_row({std::to_string(i + 1), k.name == kNone ? std::string("[unnamed]") : profile.str(k.name),
                   format_count(k.calls), format_duration(k.total_ns), format_duration(k.mean_ns),
                   format_duration(k.min_ns), format_duration(k.max_ns), format_percent(k.share),
                   config ? dims(k.grid) : std::string("n/a"), config ? dims(k.block) : std::string("n/a"),
                   config ? std::to_string(k.registers_per_thread) : std::string("n/a"), occupancy});
  }
  return table;
}

TextTable gpu_streams_table(const Profile& profile, const GpuReportData& data, Headers headers) {
  const bool doc = headers == Headers::Document;
  TextTable table({{"Device", Align::Left},
                   {"Stream", Align::Right},
                   {"Ops", Align::Right},
                   {"Kernels", Align::Right},
                   {"Busy", Align::Right},
                   {"Idle", Align::Right},
                   {doc ? "Idle gaps" : "Gaps", Align::Right},
                   {doc ? "Longest gap" : "Longest", Align::Right},
                   {doc ? "Efficiency (busy / active)" : "Efficiency", Align::Right}});
  for (const StreamStats& s : data.streams.streams) {
    const bool is_default = s.stream < profile.gpu.streams.size() && profile.gpu.streams[s.stream].is_default;
    table.add_row({device_label(data, s.device), fmt::format("{}{}", s.stream_id, is_default ? " (default)" : ""),
                   format_count(s.ops), format_count(s.kernels), format_duration(s.busy_ns),
                   format_duration(s.idle_ns), format_count(s.idle_gaps), format_duration(s.longest_gap_ns),
                   s.ops == 0 ? std::string("n/a") : format_percent(s.efficiency)});
  }
  return table;
}

TextTable gpu_devices_table(const GpuReportData& data, Headers headers) {
  const bool doc = headers == Headers::Document;
  TextTable table({{"Device", Align::Left},
                   {"Kernels", Align::Right},
                   {"Kernel busy", Align::Right},
                   {doc ? "% of session" : "% session", Align::Right},
                   {doc ? "Busy (any op)" : "Busy", Align::Right},
                   {doc ? "Overlap (2+ streams busy)" : "Overlap", Align::Right},
                   {"Copied", Align::Right},
                   {doc ? "NVML GPU utilisation (mean / max)" : "NVML util mean/max", Align::Right},
                   {doc ? "NVML memory utilisation (mean)" : "NVML mem util", Align::Right}});
  for (const DeviceStats& d : data.streams.devices) {
    const bool nvml = d.nvml_gpu_utilization_mean >= 0.0;
    table.add_row({device_label(data, d.device), format_count(d.kernels), format_duration(d.kernel_busy_ns),
                   format_percent(d.kernel_busy_fraction), format_duration(d.busy_ns), format_duration(d.overlap_ns),
                   format_bytes(d.memcpy_bytes),
                   nvml ? fmt::format("{} / {}", nvml_percent(d.nvml_gpu_utilization_mean),
                                      nvml_percent(d.nvml_gpu_utilization_max))
                        : std::string("n/a"),
                   nvml_percent(d.nvml_memory_utilization_mean)});
  }
  return table;
}

TextTable gpu_peers_table(const GpuReportData& data, Headers headers) {
  const bool doc = headers == Headers::Document;
  TextTable table({{doc ? "From device" : "From", Align::Left},
                   {doc ? "To device" : "To", Align::Left},
                   {"Copies", Align::Right},
                   {"Bytes", Align::Right},
                   {"Time", Align::Right},
                   {doc ? "Achieved bandwidth" : "Bandwidth", Align::Right}});
  for (const PeerBandwidth& p : data.streams.peers) {
    table.add_row({device_label(data, p.src_device), device_label(data, p.dst_device), format_count(p.copies),
                   format_bytes(p.bytes), format_duration(p.busy_ns),
                   p.busy_ns == 0 ? std::string("n/a") : format_si(p.gbytes_per_s * 1e9, "B/s")});
  }
  return table;
}

TextTable gpu_memory_table(const GpuReportData& data, Headers headers) {
  const bool doc = headers == Headers::Document;
  TextTable table({{"Device", Align::Left},
                   {doc ? "Peak allocated" : "Peak", Align::Right},
                   {doc ? "Peak at (since start)" : "Peak at", Align::Right},
                   {"Live at end", Align::Right},
                   {doc ? "Allocations" : "Allocs", Align::Right},
                   {doc ? "Releases" : "Frees", Align::Right},
                   {doc ? "NVML max in use" : "NVML max used", Align::Right},
                   {doc ? "Not allocations (context, driver, other)" : "Not allocations", Align::Right}});
  for (const GpuDeviceMemory& m : data.memory.devices) {
    const bool nvml = m.nvml_used_max > 0;
    table.add_row({device_label(data, m.device), format_bytes(m.peak_bytes),
                   m.alloc_count == 0 ? std::string("n/a") : format_duration(m.peak_time_ns),
                   format_bytes(m.live_bytes), format_count(m.alloc_count), format_count(m.free_count),
                   nvml ? format_bytes(m.nvml_used_max) : std::string("n/a"),
                   nvml ? format_bytes(m.unexplained_bytes) : std::string("n/a")});
  }
  return table;
}

std::vector<std::string> gpu_memory_notes(const GpuReportData& data) {
  std::vector<std::string> notes;
  for (const GpuDeviceMemory& m : data.memory.devices) {
    if (m.nvml_used_max == 0) continue;
    std::string device = std::to_string(m.device);
    for (const DeviceStats& d : data.streams.devices)
      if (d.device == m.device && !d.name.empty()) device += fmt::format(" ({})", d.name);
    notes.push_back(fmt::format("Device {}: NVML saw at most {} in use; {} of it was not held by traced "
                                "allocations then: {}.",
                                device, format_bytes(m.nvml_used_max),
                                format_bytes(m.unexplained_bytes), kGpuUnexplainedMemory));
  }
  if (data.memory.untracked_frees > 0) {
    notes.push_back(fmt::format("{} of memory allocated before tracing started: not counted above.",
                                format_count(data.memory.untracked_frees, "release", "releases")));
  }
  return notes;
}

TextTable gpu_leaks_table(const Profile& profile, const GpuReportData& data, std::size_t max_rows,
                          Headers headers) {
  const bool doc = headers == Headers::Document;
  TextTable table({{"Device", Align::Left},
                   {doc ? "Allocating scope" : "Scope", Align::Left},
                   {"Blocks", Align::Right},
                   {"Bytes", Align::Right}});
  for (std::size_t i = 0; i < data.memory.leaks.size() && i < max_rows; ++i) {
    const GpuLeak& leak = data.memory.leaks[i];
    table.add_row({device_label(data, leak.device), analysis::scope_path_label(profile, leak.node),
                   format_count(leak.blocks), format_bytes(leak.bytes)});
  }
  return table;
}

TextTable gpu_scopes_table(const Profile& profile, Headers headers) {
  const bool doc = headers == Headers::Document;
  TextTable table({{"Scope", Align::Left},
                   {"Kernels", Align::Right},
                   {"Kernel time", Align::Right},
                   {"Copies", Align::Right},
                   {"Copy time", Align::Right},
                   {doc ? "Bytes copied" : "Copied", Align::Right},
                   {doc ? "Device memory allocated" : "Allocated", Align::Right},
                   {"GPU time", Align::Right},
                   {doc ? "GPU time / CPU time" : "% of CPU", Align::Right}});
  for (const GpuScopeStats& s : profile.gpu.scopes) {
    const std::string name = s.name == kNone ? std::string("[outside any scope]") : profile.str(s.name);
    const ScopeStats* cpu = s.name == kNone ? nullptr : profile.find_scope(name);
    // GPU work runs beside its launching scope, so the share may pass 100%: the GPU was busy
    // longer than the CPU spent in the scope.
    const std::string share = cpu == nullptr || cpu->total_ns == 0
                                  ? std::string("n/a")
                                  : format_percent(static_cast<double>(s.gpu_ns()) / static_cast<double>(cpu->total_ns));
    table.add_row({name, format_count(s.kernels), format_duration(s.kernel_ns), format_count(s.memcpys),
                   format_duration(s.memcpy_ns), format_bytes(s.memcpy_bytes), format_bytes(s.alloc_bytes),
                   format_duration(s.gpu_ns()), share});
  }
  return table;
}

std::unordered_map<StringId, std::uint64_t> gpu_time_by_scope(const Profile& profile) {
  std::unordered_map<StringId, std::uint64_t> out;
  if (!profile.gpu.summary.traced) return out;
  for (const GpuScopeStats& s : profile.gpu.scopes) out[s.name] += s.gpu_ns();
  return out;
}

}  // namespace nnprof::io
