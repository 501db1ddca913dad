// The public views of a profile's GPU part, the names of the collector's states, and
// CudaProfiler's constructor, which hands the collector the session it writes to. The rest of
// the collector (CudaProfiler, CudaTimer, gpu_available) lives in src/collect/gpu, or in
// gpu_disabled.cpp where libnnprof is built without CUDA; what is here needs no CUDA at all.
#include "nnprof/gpu.hpp"

#include "analysis/gpu_streams.hpp"
#include "api/session_of.hpp"
#include "collect/gpu/gpu_tracing.hpp"

namespace nnprof {

const char* to_string(GpuStatusCode code) noexcept {
  switch (code) {
    case GpuStatusCode::Tracing: return "tracing";
    case GpuStatusCode::Stopped: return "stopped";
    case GpuStatusCode::NotBuilt: return "not_built";
    case GpuStatusCode::NoDriver: return "no_driver";
    case GpuStatusCode::NoDevice: return "no_device";
    case GpuStatusCode::NoCupti: return "no_cupti";
    case GpuStatusCode::CuptiError: return "cupti_error";
    case GpuStatusCode::AlreadyRunning: return "already_running";
  }
  return "unknown";
}

CudaProfiler::CudaProfiler(Profiler& profiler, const CudaProfilerOptions& options) {
  status_ = detail::start_gpu_tracing(detail::session_of(profiler, "GPU tracing"), options, tracer_);
}

CudaTiming timing_statistics(std::string_view name, const std::vector<double>& ms) {
  return analysis::timing_statistics(name, ms);
}

StreamReport stream_report(const Profile& profile, std::uint64_t gap_threshold_ns) {
  return analysis::stream_report(profile, gap_threshold_ns);
}

GpuMemoryReport gpu_memory_report(const Profile& profile) { return analysis::gpu_memory_report(profile); }

}  // namespace nnprof
