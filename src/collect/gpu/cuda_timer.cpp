// nnprof::CudaTimer: CUDA events through the driver API, in the caller's context (or the
// primary context of the chosen device when the thread has none, as the runtime would use).
#include <memory>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "collect/gpu/cuda_loader.hpp"
#include "nnprof/error.hpp"
#include "nnprof/gpu.hpp"

namespace nnprof {

namespace {

void check(const detail::DriverApi& api, CUresult r, const char* what) {
  if (r != CUDA_SUCCESS) throw Error(fmt::format("CudaTimer: {} failed: {}", what, api.error_text(r)));
}

}  // namespace

struct CudaTimer::State {
  const detail::DriverApi* api = nullptr;
  CUdevice device = 0;
  CUcontext primary = nullptr;  // retained when a call found no current context

  struct Series {
    std::string name;
    CUevent open = nullptr;                            // start recorded, stop not yet
    std::vector<std::pair<CUevent, CUevent>> unread;   // synchronize = false: read at result()
    std::vector<double> ms;
  };
  std::vector<Series> series;

  // Makes a context current for one call when the thread has none.
  class ContextScope {
   public:
    explicit ContextScope(State& s) : s_(s) {
      CUcontext current = nullptr;
      s_.api->ctx_get_current(&current);
      if (current != nullptr) return;
      if (s_.primary == nullptr) check(*s_.api, s_.api->primary_ctx_retain(&s_.primary, s_.device), "cuDevicePrimaryCtxRetain");
      check(*s_.api, s_.api->ctx_push_current(s_.primary), "cuCtxPushCurrent");
      pushed_ = true;
    }
    ~ContextScope() {
      if (!pushed_) return;
      CUcontext popped = nullptr;
      s_.api->ctx_pop_current(&popped);
    }
    ContextScope(const ContextScope&) = delete;
    ContextScope& operator=(const ContextScope&) = delete;

   private:
    State& s_;
    bool pushed_ = false;
  };

  Series* find(std::string_view name) {
    for (Series& x : series)
      if (x.name == name) return &x;
    return nullptr;
  }

  double elapsed(CUevent start, CUevent stop) {
    check(*api, api->event_synchronize(stop), "cuEventSynchronize");
    float ms = 0.0f;
    check(*api, api->event_elapsed_time(&ms, start, stop), "cuEventElapsedTime");
    api->event_destroy(start);
    api->event_destroy(stop);
    return static_cast<double>(ms);
  }

  void read_pending(Series& x) {
    ContextScope ctx(*this);
    for (auto& [start, stop] : x.unread) x.ms.push_back(elapsed(start, stop));
    x.unread.clear();
  }
};

CudaTimer::CudaTimer(const CudaTimerOptions& options) : options_(options) {
  const detail::DriverState& d = detail::driver_state();
  if (d.api == nullptr) throw Error(fmt::format("CudaTimer: {}", d.error));
  if (options.device < 0 || options.device >= d.device_count)
    throw Error(fmt::format("CudaTimer: device {} does not exist (this machine has {} CUDA device(s))", options.device,
                            d.device_count));
  auto s = std::make_unique<State>();
  s->api = d.api;
  check(*s->api, s->api->device_get(&s->device, options.device), "cuDeviceGet");
  state_ = s.release();
}

CudaTimer::~CudaTimer() {
  if (state_ == nullptr) return;
  try {
    State::ContextScope ctx(*state_);
    for (State::Series& x : state_->series) {
      if (x.open != nullptr) state_->api->event_destroy(x.open);
      for (auto& [a, b] : x.unread) {
        state_->api->event_destroy(a);
        state_->api->event_destroy(b);
      }
    }
  } catch (...) {
    // No context to destroy them in: the driver frees them with the context.
  }
  if (state_->primary != nullptr) state_->api->primary_ctx_release(state_->device);
  delete state_;
}

void CudaTimer::start(std::string_view name, CUstream_st* stream) {
  State::ContextScope ctx(*state_);
  State::Series* x = state_->find(name);
  if (x == nullptr) {
    state_->series.push_back(State::Series{std::string(name), nullptr, {}, {}});
    x = &state_->series.back();
  }
  if (x->open != nullptr) throw Error(fmt::format("CudaTimer: start(\"{}\") while it is already started", name));
  CUevent e = nullptr;
  check(*state_->api, state_->api->event_create(&e, CU_EVENT_DEFAULT), "cuEventCreate");
  if (const CUresult r = state_->api->event_record(e, stream); r != CUDA_SUCCESS) {
    state_->api->event_destroy(e);
    check(*state_->api, r, "cuEventRecord");
  }
  x->open = e;
}

void CudaTimer::stop(std::string_view name, CUstream_st* stream) {
  State::Series* x = state_->find(name);
  if (x == nullptr || x->open == nullptr)
    throw Error(fmt::format("CudaTimer: stop(\"{}\") without a start(\"{}\")", name, name));
  State::ContextScope ctx(*state_);
  CUevent e = nullptr;
  check(*state_->api, state_->api->event_create(&e, CU_EVENT_DEFAULT), "cuEventCreate");
  if (const CUresult r = state_->api->event_record(e, stream); r != CUDA_SUCCESS) {
    state_->api->event_destroy(e);
    check(*state_->api, r, "cuEventRecord");
  }
  const CUevent start = x->open;
  x->open = nullptr;
  if (options_.synchronize)
    x->ms.push_back(state_->elapsed(start, e));
  else
    x->unread.emplace_back(start, e);
}

CudaTiming CudaTimer::result(std::string_view name) {
  State::Series* x = state_->find(name);
  if (x == nullptr) return CudaTiming{std::string(name)};
  state_->read_pending(*x);
  return timing_statistics(name, x->ms);
}

std::vector<CudaTiming> CudaTimer::results() {
  std::vector<CudaTiming> out;
  for (State::Series& x : state_->series) {
    state_->read_pending(x);
    out.push_back(timing_statistics(x.name, x.ms));
  }
  return out;
}

void CudaTimer::synchronize_warmup(CUstream_st* stream) {
  if (options_.warmup == 0) return;
  State::ContextScope ctx(*state_);
  if (stream != nullptr)
    check(*state_->api, state_->api->stream_synchronize(stream), "cuStreamSynchronize");
  else
    check(*state_->api, state_->api->ctx_synchronize(), "cuCtxSynchronize");
}

}  // namespace nnprof
