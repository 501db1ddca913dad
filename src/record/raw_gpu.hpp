// What the GPU collector (src/collect/gpu) hands to the model: CUPTI's records parsed into
// plain structs, free of CUDA headers, with CLOCK_MONOTONIC nanosecond timestamps (the
// collector maps CUPTI's clock when it could not make CUPTI use ours). src/model/gpu_builder
// aligns them to the session, joins each to the CPU scope that launched it and fills
// Profile::gpu.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "nnprof/gpu_profile.hpp"

namespace nnprof::detail {

/// Packs what a GpuLaunch record carries in Record::t1: CUPTI's correlation id, the API
/// domain (runtime or driver) and the callback id of the launching call.
inline constexpr std::uint64_t pack_gpu_launch(std::uint32_t correlation_id, std::uint32_t domain,
                                               std::uint32_t cbid) noexcept {
  return std::uint64_t{correlation_id} | (std::uint64_t{domain & 0xff} << 32) | (std::uint64_t{cbid & 0xffffff} << 40);
}
inline constexpr std::uint32_t gpu_launch_correlation(std::uint64_t t1) noexcept {
  return static_cast<std::uint32_t>(t1);
}

/// A kernel, copy or memset as CUPTI recorded it.
struct RawGpuOp {
  GpuOpKind kind = GpuOpKind::Kernel;
  std::uint32_t device = 0, context = 0, stream = 0;
  std::string name;                 ///< demangled kernel name; empty for copies and memsets
  std::uint64_t start = 0, end = 0; ///< CLOCK_MONOTONIC ns
  std::uint32_t correlation_id = 0;
  std::uint32_t detail = 0;         ///< index in RawGpu::kernels, memcpys or memsets, by kind
};

struct RawGpuApiCall {
  std::int64_t os_tid = 0;
  std::string name;
  bool driver = false;
  std::uint32_t cbid = 0, correlation_id = 0, return_value = 0;
  std::uint64_t start = 0, end = 0;
};

struct RawGpuSync {
  std::uint8_t type = 0;
  std::uint32_t device = 0, context = 0, stream = kNone;  ///< stream kNone: the whole context
  std::uint32_t correlation_id = 0;
  std::uint64_t start = 0, end = 0;
};

struct RawGpuMemory {
  std::uint64_t time = 0;
  std::uint32_t device = 0;
  bool alloc = true, async = false;
  GpuMemoryKind kind = GpuMemoryKind::Device;
  std::uint64_t address = 0, bytes = 0;
  std::uint32_t correlation_id = 0;
  std::string source;
};

/// (correlation id, external kind, external id): an id a framework pushed for an API call.
struct RawExternalCorrelation {
  std::uint32_t correlation_id = 0;
  std::uint8_t kind = 0;
  std::uint64_t id = 0;
};

struct RawGpu {
  bool traced = false;
  std::string status;
  std::string clock_source;
  std::uint32_t cupti_version = 0;
  std::int32_t driver_version = 0;
  std::int64_t clock_offset_ns = 0;
  double clock_slope = 1.0;
  std::uint64_t clock_uncertainty_ns = 0;
  std::uint64_t dropped = 0, refused = 0, incomplete = 0, untimed = 0;
  std::vector<GpuDevice> devices;
  std::vector<GpuStream> streams;   ///< as CUPTI named them (device, context, stream)
  std::vector<RawGpuOp> ops;
  std::vector<GpuKernel> kernels;
  std::vector<GpuMemcpy> memcpys;
  std::vector<GpuMemset> memsets;
  std::vector<RawGpuApiCall> api_calls;
  std::vector<RawGpuSync> syncs;
  std::vector<RawGpuMemory> memory;
  std::vector<RawExternalCorrelation> external;
  std::vector<GpuCounter> counters;  ///< points in CLOCK_MONOTONIC ns
  std::vector<std::string> warnings; ///< become GpuTracing diagnostics
};

}  // namespace nnprof::detail
