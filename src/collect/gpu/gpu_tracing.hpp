// How the public CudaProfiler (src/api/gpu.cpp) starts the GPU collector: through CUPTI where
// libnnprof was built with CUDA (cuda_profiler.cpp), or with a status saying it was not
// (gpu_disabled.cpp). Includes no CUDA header.
#pragma once

#include <memory>

#include "nnprof/gpu.hpp"

namespace nnprof::detail {

class CuptiTracer;
class Session;

/// Starts tracing the GPU work of the whole process into `session`, which keeps the tracer as
/// its GPU source, so snapshots taken after the tracer stopped still hold everything traced.
/// Sets `tracer` when tracing started; otherwise the status says why the collector is off.
GpuStatus start_gpu_tracing(Session& session, const CudaProfilerOptions& options, std::shared_ptr<CuptiTracer>& tracer);

}  // namespace nnprof::detail
