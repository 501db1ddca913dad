// The GPU part of a Profile: what CUPTI traced on NVIDIA GPUs (kernels, copies, memsets,
// CUDA API calls, device memory), what NVML sampled, and the CPU scope that launched each
// piece of GPU work. Filled by nnprof::CudaProfiler (nnprof/gpu.hpp); empty (summary.traced
// false) in a profile taken without one. Times are nanoseconds since the session's start,
// on the same clock as the CPU spans.
#pragma once

#include <cstddef>
#include <cstdint>
#include <iterator>
#include <string>
#include <utility>
#include <vector>

#include "nnprof/ids.hpp"

namespace nnprof {

enum class GpuOpKind : std::uint8_t { Kernel, Memcpy, Memset };

/// Direction of a copy, with CUPTI's values (CUpti_ActivityMemcpyKind).
enum class MemcpyKind : std::uint8_t { Unknown, HtoD, DtoH, HtoA, AtoH, AtoA, AtoD, DtoA, DtoD, HtoH, PtoP };

/// Where memory lives, with CUPTI's values (CUpti_ActivityMemoryKind).
enum class GpuMemoryKind : std::uint8_t { Unknown, Pageable, Pinned, Device, Array, Managed, DeviceStatic, ManagedStatic };

/// The names reports, traces and the store use, indexed by the enums' values.
inline constexpr const char* kMemcpyKindNames[] = {"unknown", "HtoD", "DtoH", "HtoA", "AtoH", "AtoA",
                                                   "AtoD",    "DtoA", "DtoD", "HtoH", "PtoP"};
inline constexpr const char* kGpuMemoryKindNames[] = {"unknown", "pageable", "pinned",        "device",
                                                      "array",   "managed",  "device_static", "managed_static"};

/// "HtoD", "DtoH", ..., "PtoP"; "unknown" for Unknown and for values this nnprof does not know.
constexpr const char* to_string(MemcpyKind k) noexcept {
  const auto i = static_cast<std::size_t>(k);
  return i < std::size(kMemcpyKindNames) ? kMemcpyKindNames[i] : kMemcpyKindNames[0];
}
/// "pageable", "pinned", "device", ...; "unknown" likewise.
constexpr const char* to_string(GpuMemoryKind k) noexcept {
  const auto i = static_cast<std::size_t>(k);
  return i < std::size(kGpuMemoryKindNames) ? kGpuMemoryKindNames[i] : kGpuMemoryKindNames[0];
}

/// The CPU side of a piece of GPU work: the thread and instrumented scope that launched it.
struct GpuLaunch {
  std::uint32_t thread = kNone;  ///< Profile::threads; kNone: launched by a thread nnprof does not know
  std::uint64_t time_ns = 0;        ///< when the launching API call began
  std::uint32_t node = 0;           ///< innermost open scope then (call-tree node; 0: outside any scope)
  std::uint32_t span = kNone;    ///< innermost span open then (Profile::spans); kNone when not kept
  std::uint32_t api = kNone;     ///< the launching call in GpuProfile::api_calls, when traced

  bool operator==(const GpuLaunch&) const = default;
};

/// One execution on a GPU stream: a kernel, a copy or a memset.
struct GpuOp {
  GpuOpKind kind = GpuOpKind::Kernel;
  std::uint32_t stream = 0;          ///< index in GpuProfile::streams
  StringId name = kNone;       ///< demangled kernel name, or "Memcpy HtoD", "Memset"
  std::uint64_t start_ns = 0;
  std::uint64_t end_ns = 0;
  std::uint32_t correlation_id = 0;  ///< CUPTI's id, shared with the launching API call
  GpuLaunch launch;
  std::uint32_t detail = 0;          ///< index in kernels, memcpys or memsets, by kind

  [[nodiscard]] std::uint64_t duration_ns() const noexcept { return end_ns > start_ns ? end_ns - start_ns : 0; }
  bool operator==(const GpuOp&) const = default;
};

struct GpuKernel {
  std::int32_t grid[3] = {0, 0, 0};
  std::int32_t block[3] = {0, 0, 0};
  std::uint32_t registers_per_thread = 0;
  std::int32_t static_shared_bytes = 0;
  std::int32_t dynamic_shared_bytes = 0;
  std::uint32_t local_bytes_per_thread = 0;
  std::uint32_t graph_id = 0;        ///< CUDA graph the kernel was launched from; 0: none
  /// Theoretical occupancy: resident warps per SM over the SM's maximum, for this launch
  /// configuration (CUDA occupancy calculator). < 0: not known.
  double occupancy = -1.0;
  bool occupancy_estimated = false;  ///< computed by nnprof from the device limits, not by the driver

  [[nodiscard]] std::int64_t threads_per_block() const noexcept {
    return std::int64_t{block[0]} * block[1] * block[2];
  }
  bool operator==(const GpuKernel&) const = default;
};

struct GpuMemcpy {
  MemcpyKind kind = MemcpyKind::Unknown;
  GpuMemoryKind src = GpuMemoryKind::Unknown;
  GpuMemoryKind dst = GpuMemoryKind::Unknown;
  bool async = false;                ///< issued with an *Async call
  std::uint64_t bytes = 0;
  std::uint32_t src_device = 0;      ///< peer copies: the devices at both ends
  std::uint32_t dst_device = 0;

  /// The host side is pageable (not pinned): the driver copies through a staging buffer and
  /// the copy cannot overlap with host work.
  [[nodiscard]] bool pageable() const noexcept {
    return src == GpuMemoryKind::Pageable || dst == GpuMemoryKind::Pageable;
  }
  bool operator==(const GpuMemcpy&) const = default;
};

struct GpuMemset {
  std::uint64_t bytes = 0;
  std::uint32_t value = 0;
  GpuMemoryKind memory = GpuMemoryKind::Unknown;

  bool operator==(const GpuMemset&) const = default;
};

/// One CUDA runtime or driver API call on a CPU thread.
struct GpuApiCall {
  std::uint32_t thread = kNone;   ///< Profile::threads; kNone: a thread nnprof does not know
  std::int64_t os_tid = 0;
  StringId name = kNone;       ///< "cudaLaunchKernel", "cuMemcpyHtoD_v2", ...
  bool driver = false;               ///< driver API (cu*) rather than runtime API (cuda*)
  std::uint32_t cbid = 0;            ///< CUPTI callback id
  std::uint32_t correlation_id = 0;
  std::uint32_t return_value = 0;    ///< cudaError_t / CUresult; 0 is success
  std::uint32_t node = 0;            ///< innermost open scope on its thread then
  std::uint64_t start_ns = 0;
  std::uint64_t end_ns = 0;
  /// A correlation id a framework pushed (cuptiActivityPushExternalCorrelationId,
  /// nnprof::CudaCorrelation); external_kind 0: none.
  std::uint64_t external_id = 0;
  std::uint8_t external_kind = 0;

  bool operator==(const GpuApiCall&) const = default;
};

/// A synchronisation the CPU waited for (cudaDeviceSynchronize, cudaStreamSynchronize,
/// cudaEventSynchronize, cudaStreamWaitEvent).
struct GpuSync {
  std::uint8_t type = 0;             ///< CUpti_ActivitySynchronizationType
  std::uint32_t stream = kNone;   ///< GpuProfile::streams; kNone: whole context or device
  std::uint32_t correlation_id = 0;
  std::uint64_t start_ns = 0;
  std::uint64_t end_ns = 0;
  GpuLaunch launch;

  bool operator==(const GpuSync&) const = default;
};

/// A device allocation or release (cudaMalloc, cudaFree, async and managed allocations).
struct GpuMemoryEvent {
  std::uint64_t time_ns = 0;
  std::uint32_t device = 0;
  bool alloc = true;                 ///< false: a release
  GpuMemoryKind kind = GpuMemoryKind::Device;
  bool async = false;                ///< from a stream-ordered pool (cudaMallocAsync)
  std::uint64_t address = 0;
  std::uint64_t bytes = 0;
  std::uint32_t correlation_id = 0;
  GpuLaunch launch;
  StringId source = kNone;     ///< allocating library, when CUPTI names it

  bool operator==(const GpuMemoryEvent&) const = default;
};

struct GpuDevice {
  std::uint32_t id = 0;              ///< CUDA device ordinal
  std::string name;
  std::string pci_bus_id;
  std::uint32_t cc_major = 0, cc_minor = 0;
  std::uint32_t sms = 0;
  std::uint32_t max_warps_per_sm = 0;
  std::uint32_t max_threads_per_block = 0;
  std::uint32_t max_registers_per_sm = 0;
  std::uint32_t max_shared_bytes_per_sm = 0;
  std::uint32_t max_blocks_per_sm = 0;
  std::uint32_t core_clock_khz = 0;
  std::uint64_t memory_bytes = 0;
  std::uint64_t bandwidth_bytes_per_s = 0;  ///< global memory bandwidth (the memory roof)

  bool operator==(const GpuDevice&) const = default;
};

/// One CUDA stream: a track of the GPU timeline.
struct GpuStream {
  std::uint32_t device = 0;
  std::uint32_t context = 0;
  std::uint32_t stream = 0;          ///< CUPTI's stream id (unique within its context)
  std::uint32_t priority = 0;
  bool is_default = false;

  bool operator==(const GpuStream&) const = default;
};

/// A sampled series of one device: NVML memory in use, GPU and memory utilisation.
struct GpuCounter {
  std::uint32_t device = 0;
  std::string name;                  ///< "nvml_memory_used", "nvml_gpu_utilization", "nvml_memory_utilization"
  std::string unit;                  ///< "bytes" or "percent"
  std::vector<std::pair<std::uint64_t, double>> points;  ///< (time_ns, value), by time

  bool operator==(const GpuCounter&) const = default;
};

/// GPU work launched while a scope name was open (in that scope or inside it; nested calls of
/// the same name counted once): what its time on the CPU paid for on the GPU.
struct GpuScopeStats {
  StringId name = kNone;
  std::uint64_t kernels = 0;
  std::uint64_t kernel_ns = 0;
  std::uint64_t memcpys = 0;
  std::uint64_t memcpy_ns = 0;
  std::uint64_t memcpy_bytes = 0;
  std::uint64_t memsets = 0;
  std::uint64_t memset_ns = 0;
  std::uint64_t alloc_bytes = 0;     ///< device memory allocated
  std::uint64_t alloc_count = 0;
  std::uint64_t free_bytes = 0;

  /// Time of all its work on the GPU.
  [[nodiscard]] std::uint64_t gpu_ns() const noexcept { return kernel_ns + memcpy_ns + memset_ns; }
  bool operator==(const GpuScopeStats&) const = default;
};

/// How GPU tracing ran and how complete it is.
struct GpuSummary {
  bool traced = false;               ///< CUPTI tracing ran; everything below is meaningful only then
  std::string status;                ///< how the collector started, as a sentence
  std::string clock_source;          ///< "monotonic-callback" or "cupti-realtime-mapped"
  std::uint32_t cupti_version = 0;
  std::int32_t driver_version = 0;   ///< e.g. 13000 for CUDA 13.0
  std::int64_t clock_offset_ns = 0;  ///< mapped clocks only: CUPTI time + offset = monotonic time
  double clock_slope = 1.0;
  std::uint64_t clock_uncertainty_ns = 0;
  std::uint64_t records_dropped = 0;     ///< CUPTI had no buffer for them
  std::uint64_t records_refused = 0;     ///< past nnprof's GPU record budget
  std::uint64_t records_incomplete = 0;  ///< unreadable records in a buffer
  std::uint64_t records_untimed = 0;     ///< kernels without timestamps (device out of memory)
  std::uint64_t unmatched_correlations = 0;  ///< GPU work whose launching call was not seen
  std::uint64_t untracked_frees = 0;     ///< releases of memory allocated before tracing started
  bool nvml = false;                 ///< NVML samples are present

  bool operator==(const GpuSummary&) const = default;
};

struct GpuProfile {
  GpuSummary summary;
  std::vector<GpuDevice> devices;
  std::vector<GpuStream> streams;
  std::vector<GpuOp> ops;                  ///< sorted by stream, then start
  std::vector<GpuKernel> kernels;
  std::vector<GpuMemcpy> memcpys;
  std::vector<GpuMemset> memsets;
  std::vector<GpuApiCall> api_calls;       ///< sorted by start
  std::vector<GpuSync> syncs;              ///< sorted by start
  std::vector<GpuMemoryEvent> memory_events;  ///< sorted by time
  std::vector<GpuCounter> counters;
  std::vector<GpuScopeStats> scopes;       ///< per scope name with GPU work, most GPU time first

  /// The device with CUDA ordinal `id`, or nullptr when it was not described.
  [[nodiscard]] const GpuDevice* device(std::uint32_t id) const noexcept {
    for (const GpuDevice& d : devices)
      if (d.id == id) return &d;
    return nullptr;
  }
  bool operator==(const GpuProfile&) const = default;
};

}  // namespace nnprof
