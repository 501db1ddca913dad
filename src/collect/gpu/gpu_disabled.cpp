// The GPU API where libnnprof was built without the CUDA toolkit: everything answers that GPU
// collection is not built in, so a program written for GPUs still runs and profiles its CPU.
#include "collect/gpu/gpu_tracing.hpp"
#include "collect/system/nvml_probe.hpp"
#include "nnprof/error.hpp"
#include "nnprof/gpu.hpp"

namespace nnprof {

namespace {
constexpr const char* kNotBuilt =
    "nnprof was built without CUDA support (NNPROF_CUDA=OFF or no CUDA toolkit found): GPU collection disabled";
}

GpuStatus gpu_available() { return {GpuStatusCode::NotBuilt, kNotBuilt}; }

CudaProfiler::~CudaProfiler() = default;
void CudaProfiler::stop() noexcept {}
bool CudaProfiler::active() const noexcept { return false; }
CudaProfilerStats CudaProfiler::stats() const noexcept { return {}; }

CudaCorrelation::CudaCorrelation(std::uint64_t) noexcept {}
CudaCorrelation::~CudaCorrelation() = default;

struct CudaTimer::State {};
CudaTimer::CudaTimer(const CudaTimerOptions& options) : options_(options) { throw Error(std::string("CudaTimer: ") + kNotBuilt); }
CudaTimer::~CudaTimer() = default;
void CudaTimer::start(std::string_view, CUstream_st*) {}
void CudaTimer::stop(std::string_view, CUstream_st*) {}
CudaTiming CudaTimer::result(std::string_view name) { return CudaTiming{std::string(name)}; }
std::vector<CudaTiming> CudaTimer::results() { return {}; }
void CudaTimer::synchronize_warmup(CUstream_st*) {}

}  // namespace nnprof

namespace nnprof::detail {
GpuStatus start_gpu_tracing(Session&, const CudaProfilerOptions&, std::shared_ptr<CuptiTracer>&) {
  return {GpuStatusCode::NotBuilt, kNotBuilt};
}

// No NVTX headers without the toolkit: ranges are not emitted (ProfilerOptions::nvtx says so).
void nvtx_push(const SourceLocation*) noexcept {}
void nvtx_pop() noexcept {}
}  // namespace nnprof::detail

// NVML is reached through the same loader as CUDA, which is not built here: GPU metrics and
// energy are off, said once when the monitor was asked for them.
namespace nnprof::detail::system {
namespace {
class NotBuiltGpuProbe final : public Probe {
 public:
  void sample(std::uint64_t, SampleSink& sink) override {
    if (!noted_) sink.note("nnprof was built without CUDA support: no GPU metrics or GPU energy");
    noted_ = true;
  }

 private:
  bool noted_ = false;
};
}  // namespace

std::unique_ptr<Probe> make_nvml_probe(const SystemOptions& options) {
  if (!options.gpus) return nullptr;
  return std::make_unique<NotBuiltGpuProbe>();
}
}  // namespace nnprof::detail::system
