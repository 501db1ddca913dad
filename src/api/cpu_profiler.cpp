#include "nnprof/cpu_profiler.hpp"

#include "api/session_of.hpp"
#include "collect/cpu/cpu_sampler.hpp"

namespace nnprof {

CpuProfiler::CpuProfiler(Profiler& profiler, const CpuProfilerOptions& options)
    : run_(detail::CpuSampler::instance().start(detail::session_of(profiler, "CPU sampling"), options)) {}

CpuProfiler::~CpuProfiler() { stop(); }

void CpuProfiler::stop() noexcept {
  if (run_ == 0) return;
  detail::CpuSampler::instance().stop(run_);
  run_ = 0;
}

bool CpuProfiler::active() const noexcept { return run_ != 0 && detail::CpuSampler::instance().active(run_); }

CpuProfilerStats CpuProfiler::stats() const noexcept { return detail::CpuSampler::instance().stats(); }

}  // namespace nnprof
