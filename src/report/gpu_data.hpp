// What the GPU sections and the JSON report state about a GPU-traced profile, computed once per
// report (report::analyse): kernels, copies and memsets summed, the stream and memory views, and
// the facts in words. Nothing here applies when !profile.gpu.summary.traced.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <string>
#include <unordered_map>
#include <vector>

#include "report/format.hpp"
#include "nnprof/gpu.hpp"
#include "nnprof/profile.hpp"

namespace nnprof::report {

/// Every call of one kernel name: durations and the launch configuration used most often.
struct GpuKernelSummary {
  StringId name = kNone;
  std::uint64_t calls = 0;
  std::uint64_t total_ns = 0;
  std::uint64_t min_ns = 0;
  std::uint64_t max_ns = 0;
  double mean_ns = 0.0;
  double share = 0.0;        ///< total_ns over the GPU time (every kernel, copy and memset)
  std::array<std::int32_t, 3> grid{};   ///< of the most common configuration (grid and block)
  std::array<std::int32_t, 3> block{};
  std::uint64_t config_calls = 0;       ///< calls with that configuration
  std::uint64_t configs = 0;            ///< distinct configurations
  std::uint32_t registers_per_thread = 0;  ///< of that configuration's first call
  double occupancy = -1.0;                 ///< of that configuration's first call; < 0: not known
  bool occupancy_estimated = false;
};

/// Copies of one direction (or memsets, kind Unknown and memset set).
struct GpuTransferSummary {
  MemcpyKind kind = MemcpyKind::Unknown;
  bool memset = false;
  std::uint64_t count = 0;
  std::uint64_t bytes = 0;
  std::uint64_t total_ns = 0;
  std::uint64_t pageable = 0;  ///< copies with a pageable host end
  /// Bytes over the summed duration; bytes per nanosecond is GB/s. 0 when no time was measured.
  [[nodiscard]] double gbytes_per_s() const noexcept {
    return total_ns == 0 ? 0.0 : static_cast<double>(bytes) / static_cast<double>(total_ns);
  }
};

/// What the GPU sections of one report need, computed once per report (the views replay every
/// op and allocation).
struct GpuReportData {
  StreamReport streams;
  GpuMemoryReport memory;
  std::vector<GpuKernelSummary> kernels;      ///< by total time, longest first
  std::vector<GpuTransferSummary> transfers;  ///< copies by kind (CUPTI's order), then memsets
  std::uint64_t kernel_count = 0;
  std::uint64_t kernel_ns = 0;
  std::uint64_t memcpy_count = 0;
  std::uint64_t memcpy_bytes = 0;
  std::uint64_t memcpy_ns = 0;
  std::uint64_t memcpy_pageable = 0;
  std::uint64_t memset_count = 0;
  std::uint64_t memset_bytes = 0;
  std::uint64_t memset_ns = 0;
  /// Summed duration of every kernel, copy and memset: the denominator of "% of GPU time".
  [[nodiscard]] std::uint64_t gpu_ns() const noexcept { return kernel_ns + memcpy_ns + memset_ns; }
};

[[nodiscard]] GpuReportData gpu_report_data(const Profile& profile);


/// "13.0" for 13000; "unknown" for 0.
[[nodiscard]] std::string driver_version_name(std::int32_t version);

/// Which GPU records were lost: "none lost", or each non-zero count of GpuSummary's
/// completeness counters in words ("12 records dropped (CUPTI had no buffer), 3 kernels
/// without timestamps").
[[nodiscard]] std::string gpu_records_lost(const GpuSummary& summary);

/// A labelled line of the GPU section.
struct GpuFact {
  std::string label;
  std::string value;
};

/// How tracing ran (status, each device, CUPTI and driver versions, clock source), the totals
/// (kernels, copies, memsets, GPU time) and the records lost.
[[nodiscard]] std::vector<GpuFact> gpu_facts(const Profile& profile, const GpuReportData& data);

/// The part of NVML's device memory in use that the traced allocations do not explain.
inline constexpr std::string_view kGpuUnexplainedMemory =
    "CUDA context, driver, library workspaces and other processes";

/// What the memory table's numbers mean where a reader would ask: per device with NVML samples,
/// how much of NVML's highest memory in use is not traced allocations (kGpuUnexplainedMemory);
/// and the releases of memory allocated before tracing started, when any.
[[nodiscard]] std::vector<std::string> gpu_memory_notes(const GpuReportData& data);

/// GPU time (GpuScopeStats::gpu_ns) by scope name, for the "GPU time" column of the rankings.
[[nodiscard]] std::unordered_map<StringId, std::uint64_t> gpu_time_by_scope(const Profile& profile);

}  // namespace nnprof::report
