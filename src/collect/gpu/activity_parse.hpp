// CUPTI activity records into RawGpu: one record at a time (parse_record) or a whole completed
// buffer (drain_buffer). Pure: no CUPTI call but the injected record iterator, so tests build
// the records themselves and run without a GPU.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>
#include <unordered_map>

#include <cupti.h>

#include "collect/gpu/gpu_clock.hpp"
#include "record/raw_gpu.hpp"

namespace nnprof::detail {

struct ParseContext {
  GpuClockMap clock;
  /// Name of an API call: (driver API?, callback id) -> "cudaLaunchKernel". The tracer asks
  /// cuptiGetCallbackName; tests pass their own.
  std::function<std::string(bool driver, std::uint32_t cbid)> api_name;
  /// Demangled kernel names by mangled name: kernels repeat, demangling is not cheap.
  std::unordered_map<std::string, std::string> demangled;
};

enum class ParseResult : std::uint8_t {
  Parsed,   ///< added to the RawGpu
  Untimed,  ///< a kernel without timestamps (device out of memory for them): counted, not kept
  Ignored,  ///< a kind nnprof does not use
};

ParseResult parse_record(const CUpti_Activity& record, ParseContext& ctx, RawGpu& out);

/// What one buffer held.
struct DrainCounts {
  std::uint64_t records = 0;     ///< parsed or ignored
  std::uint64_t untimed = 0;
  std::uint64_t incomplete = 0;  ///< the iterator stopped on a record it could not read
  std::uint64_t refused = 0;     ///< past the budget: counted, not parsed
};

using NextRecordFn = CUptiResult (*)(std::uint8_t* buffer, std::size_t valid_bytes, CUpti_Activity** record);

/// Parses every record of a completed buffer, as CUPTI's cuptiActivityGetNextRecord (`next`)
/// walks it: CUPTI_ERROR_MAX_LIMIT_REACHED is the normal end, CUPTI_ERROR_INVALID_KIND an
/// unreadable (incomplete) record, which ends the buffer. At most `budget` records are
/// parsed; the rest are counted as refused.
DrainCounts drain_buffer(std::uint8_t* buffer, std::size_t valid_bytes, NextRecordFn next, ParseContext& ctx,
                         RawGpu& out, std::uint64_t budget = ~std::uint64_t{0});

/// "vec_add(float const*, float const*, float*, int)" for "_Z7vec_addPKfS0_Pfi"; the name as
/// given when it is not a mangled C++ name.
std::string demangle(const char* name);

/// The GpuMemoryKind of CUPTI's memory kind value (unknown values: Unknown).
GpuMemoryKind memory_kind(std::uint32_t cupti_kind) noexcept;

/// Theoretical occupancy of a launch from the device's limits (warps, blocks, registers and
/// shared memory per SM): resident warps over the most an SM holds; < 0 when the limits are
/// not known. What the CUDA occupancy calculator computes, without the allocation
/// granularities of shared memory (so it can be slightly optimistic for shared-memory-bound
/// kernels).
double estimate_occupancy(const GpuKernel& kernel, const GpuDevice& device) noexcept;

}  // namespace nnprof::detail
