// nnprof::CudaProfiler and its neighbours, where the CUDA toolkit was found at build time
// (its constructor, which hands the collector the profiler's session, is in src/api/gpu.cpp).
#include <fmt/format.h>

#include "collect/gpu/cuda_loader.hpp"
#include "collect/gpu/cupti_tracer.hpp"
#include "collect/gpu/gpu_tracing.hpp"
#include "nnprof/gpu.hpp"
#include "record/session.hpp"

namespace nnprof {

namespace {
/// Driver and CUPTI loaded, a device present; otherwise why not.
GpuStatus probe(const detail::CuptiApi** cupti) {
  const detail::DriverState& d = detail::driver_state();
  if (d.api == nullptr)
    return {d.no_driver ? GpuStatusCode::NoDriver : GpuStatusCode::NoDevice, d.error};
  const detail::Loaded<detail::CuptiApi> c = detail::load_cupti();
  if (c.api == nullptr) return {GpuStatusCode::NoCupti, fmt::format("CUPTI not found: GPU collection disabled ({})", c.error)};
  if (cupti != nullptr) *cupti = c.api;
  return {GpuStatusCode::Tracing, fmt::format("{} GPU(s) and CUPTI ({}) available", d.device_count, c.api->path)};
}
}  // namespace

GpuStatus gpu_available() { return probe(nullptr); }

namespace detail {
GpuStatus start_gpu_tracing(Session& session, const CudaProfilerOptions& options, std::shared_ptr<CuptiTracer>& tracer) {
  const CuptiApi* cupti = nullptr;
  GpuStatus status = probe(&cupti);
  if (!status.tracing()) return status;
  auto started = std::make_shared<CuptiTracer>(session, options, *cupti, *driver_state().api);
  status = started->start();
  if (!status.tracing()) return status;
  tracer = std::move(started);
  // The session keeps the tracer as its GPU source, so snapshots after stop() or after the
  // CudaProfiler is gone still hold everything traced.
  session.set_gpu_source(tracer);
  return status;
}
}  // namespace detail

CudaProfiler::~CudaProfiler() { stop(); }

void CudaProfiler::stop() noexcept {
  if (!tracer_ || !tracer_->active()) return;
  tracer_->stop();
  status_ = {GpuStatusCode::Stopped, "GPU tracing stopped; the profile holds what was traced"};
}

bool CudaProfiler::active() const noexcept { return tracer_ && tracer_->active(); }

CudaProfilerStats CudaProfiler::stats() const noexcept {
  if (!tracer_) return {};
  try {
    return tracer_->stats();
  } catch (...) {
    return {};
  }
}

CudaCorrelation::CudaCorrelation(std::uint64_t id) noexcept {
  if (detail::driver_state().api == nullptr) return;
  const detail::Loaded<detail::CuptiApi> c = detail::load_cupti();
  if (c.api == nullptr) return;
  pushed_ = c.api->push_external_correlation(CUPTI_EXTERNAL_CORRELATION_KIND_CUSTOM2, id) == CUPTI_SUCCESS;
}

CudaCorrelation::~CudaCorrelation() {
  if (!pushed_) return;
  std::uint64_t last = 0;
  detail::load_cupti().api->pop_external_correlation(CUPTI_EXTERNAL_CORRELATION_KIND_CUSTOM2, &last);
}

}  // namespace nnprof
