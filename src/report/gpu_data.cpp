#include "report/gpu_data.hpp"

#include <algorithm>
#include <limits>
#include <map>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include "analysis/memory_findings.hpp"

namespace nnprof::report {

using report::format_bytes;
using report::format_count;
using report::format_duration;
using report::format_percent;
using report::format_si;
using report::PercentOf;

namespace {

using Config = std::array<std::int32_t, 6>;  // grid x, y, z, block x, y, z

struct KernelAccumulator {
  GpuKernelSummary summary;
  // Per configuration: calls and the kernel record of its first call (registers, occupancy).
  std::map<Config, std::pair<std::uint64_t, std::uint32_t>> configs;
};


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


// "1.00 MiB in 10.0 µs (105 GB/s)": what moved, how long it took and the rate it achieved.
std::string moved(std::uint64_t bytes, std::uint64_t ns) {
  std::string out = fmt::format("{} in {}", format_bytes(bytes), format_duration(ns));
  if (ns > 0) out += fmt::format(" ({})", format_si(static_cast<double>(bytes) / static_cast<double>(ns) * 1e9, "B/s"));
  return out;
}


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

std::unordered_map<StringId, std::uint64_t> gpu_time_by_scope(const Profile& profile) {
  std::unordered_map<StringId, std::uint64_t> out;
  if (!profile.gpu.summary.traced) return out;
  for (const GpuScopeStats& s : profile.gpu.scopes) out[s.name] += s.gpu_ns();
  return out;
}

}  // namespace nnprof::report
