// Turns what the GPU collector traced (RawGpu) into Profile::gpu: timestamps on the session
// clock, streams numbered, each piece of GPU work joined to the CUDA call and the nnprof scope
// that launched it, and GPU time per scope name.
#pragma once

#include <cstdint>
#include <functional>
#include <string_view>
#include <vector>

#include "nnprof/profile.hpp"
#include "record/raw_gpu.hpp"

namespace nnprof::model {

/// One GpuLaunch record: a work-issuing CUDA call on an nnprof thread.
struct GpuLaunchEvent {
  std::uint32_t thread = 0;
  std::uint64_t time_ns = 0;       ///< since the session's start
  std::uint32_t node = 0;          ///< merged call-tree node
  std::uint32_t correlation_id = 0;
};

/// Fills `profile.gpu` (profile.threads, call_tree, scopes and spans must be final; spans
/// sorted by thread, then start). `monotonic_origin_ns` is CLOCK_MONOTONIC at the session's
/// start; `intern` adds a string to profile.strings. Returns the GpuTracing diagnostics to add.
std::vector<Diagnostic> build_gpu(Profile& profile, const detail::RawGpu& raw, std::vector<GpuLaunchEvent> launches,
                                  std::uint64_t monotonic_origin_ns,
                                  const std::function<StringId(std::string_view)>& intern);

}  // namespace nnprof::model
