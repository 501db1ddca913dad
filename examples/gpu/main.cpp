// nnprof-gpu-demo: a small GPU "training step" profiled by nnprof::CudaProfiler, for `nnprof demo
// --gpu` and the GPU tests (tests/gpu). Each step copies a batch to the GPU on two streams
// (pinned copies, one of them a prefetch that overlaps the compute stream's kernels), runs
// vec_add, gelu and a cuBLAS SGEMM ("forward"), a memset, relu and a reduction ("backward"),
// and copies results back to pinned and to pageable memory. A CudaTimer times the forward block
// against the host's clock, and one 1 MiB cudaMalloc is leaked on purpose.
//
// Everything the tests check exactly is counted as the work is issued and stored in the
// profile's annotations under "gpu_demo.expected.*", so the expectations cannot drift from
// the workload.
//
// Exit status: 0 done; 1 a CUDA or cuBLAS call failed or a result was wrong; 2 bad arguments;
// 3 no GPU: GPU collection is not available here (no driver, no device, no CUPTI), with the
// reason on stderr.
#include <cublas_v2.h>
#include <cuda_runtime.h>

#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <iostream>
#include <map>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include "gpu_demo.hpp"
#include "nnprof/nnprof.hpp"

namespace {

constexpr int kExitFailed = 1;
constexpr int kExitUsage = 2;
constexpr int kExitNoGpu = 3;

constexpr std::uint64_t kLeakBytes = 1u << 20;
constexpr std::uint64_t kSumBytes = 512;  // the reduction's output: one float used, a small allocation
constexpr int kTimedGemms = 8;            // the timed block runs long enough (~0.5 ms) to dwarf launch latency

struct Options {
  int iterations = 10;
  int size = 1024;
  int timed_runs = 10;
  std::string out = "nnprof-gpu-demo";
};

void check(cudaError_t e, const char* what) {
  if (e != cudaSuccess) throw std::runtime_error(fmt::format("{} failed: {} ({})", what, cudaGetErrorName(e), cudaGetErrorString(e)));
}

void check(cublasStatus_t s, const char* what) {
  if (s != CUBLAS_STATUS_SUCCESS) throw std::runtime_error(fmt::format("{} failed: {}", what, cublasGetStatusString(s)));
}

float host_gelu(float v) { return 0.5f * v * (1.0f + std::tanh(0.7978845608f * (v + 0.044715f * v * v * v))); }

/// Deterministic inputs in [-scale, scale): the same numbers on every run and machine.
void fill(float* p, std::size_t n, std::uint32_t seed, float scale) {
  std::uint32_t x = seed;
  for (std::size_t i = 0; i < n; ++i) {
    x = x * 1664525u + 1013904223u;
    p[i] = scale * (static_cast<float>(x >> 8) / static_cast<float>(1u << 24) * 2.0f - 1.0f);
  }
}

/// What the workload issued while traced, counted as it is issued (the tests' expectations).
struct Expected {
  std::map<std::string, std::uint64_t> kernels;  // by kernel name
  std::map<std::string, std::uint64_t> memcpy_count, memcpy_bytes;  // by "HtoD.pinned", "DtoH.pageable", ...
  std::uint64_t memset_count = 0, memset_bytes = 0;
  std::uint64_t sgemm_calls = 0;
  std::uint64_t alloc_count = 0, alloc_bytes = 0;
};

/// The demo's GPU state: streams, buffers, the cuBLAS handle, and the calls that count what
/// they issue.
class Workload {
 public:
  Workload(nnprof::Profiler& profiler, const Options& o)
      : profiler_(profiler), m_(o.size), n_(o.size * o.size), bytes_(static_cast<std::uint64_t>(n_) * sizeof(float)) {}
  Workload(const Workload&) = delete;
  Workload& operator=(const Workload&) = delete;

  ~Workload() {
    // Error paths only: a normal run frees its device buffers in teardown() (traced) and its
    // untraced setup in release_setup(). The leak stays leaked, as a real leak would.
    free_device_buffers();
    release_setup();
  }

  /// Context, streams, cuBLAS, pinned buffers; then one untraced pass of every kernel and of
  /// the SGEMM, so that lazy module loading and cuBLAS's first-call allocations happen before
  /// tracing starts and the traced numbers are exactly the workload's.
  void setup() {
    NNPROF_SCOPE_IN(profiler_, "setup");
    check(cudaSetDevice(0), "cudaSetDevice");
    check(cudaFree(nullptr), "creating the CUDA context");
    check(cudaStreamCreateWithFlags(&compute_, cudaStreamNonBlocking), "cudaStreamCreateWithFlags");
    check(cudaStreamCreateWithFlags(&copy_, cudaStreamNonBlocking), "cudaStreamCreateWithFlags");
    check(cudaEventCreateWithFlags(&b_ready_, cudaEventDisableTiming), "cudaEventCreate");
    check(cudaEventCreateWithFlags(&act_ready_, cudaEventDisableTiming), "cudaEventCreate");
    check(cublasCreate(&cublas_), "cublasCreate");
    check(cublasSetStream(cublas_, compute_), "cublasSetStream");
    // Our own workspace, allocated untraced: cuBLAS then allocates nothing while traced, and
    // the traced peak is exactly the demo's cudaMallocs.
    check(cudaMalloc(&workspace_, kWorkspaceBytes), "cudaMalloc (cuBLAS workspace)");
    check(cublasSetWorkspace(cublas_, workspace_, kWorkspaceBytes), "cublasSetWorkspace");
    for (float** p : {&h_a_, &h_b_, &h_next_, &h_out_})
      check(cudaMallocHost(reinterpret_cast<void**>(p), bytes_), "cudaMallocHost");
    fill(h_a_, n_, 1, 1.0f);
    fill(h_b_, n_, 2, 1.0f);
    fill(h_next_, n_, 3, 1.0f);
    h_pageable_out_.resize(n_);
    h_matrix_a_.resize(n_);
    h_matrix_b_.resize(n_);
    fill(h_matrix_a_.data(), n_, 4, 1.0f / std::sqrt(static_cast<float>(m_)));
    fill(h_matrix_b_.data(), n_, 5, 1.0f / std::sqrt(static_cast<float>(m_)));

    // The untraced warm-up, on buffers of the traced sizes (cuBLAS picks its kernels by size).
    float *x = nullptr, *y = nullptr, *z = nullptr;
    check(cudaMalloc(&x, bytes_), "cudaMalloc");
    check(cudaMalloc(&y, bytes_), "cudaMalloc");
    check(cudaMalloc(&z, bytes_), "cudaMalloc");
    // Pageable copies both ways: the driver sets up its staging buffers on the first ones.
    check(cudaMemcpy(x, h_matrix_a_.data(), bytes_, cudaMemcpyHostToDevice), "cudaMemcpy");
    check(cudaMemcpy(h_pageable_out_.data(), x, bytes_, cudaMemcpyDeviceToHost), "cudaMemcpy");
    check(cudaMemsetAsync(y, 0, bytes_, compute_), "cudaMemsetAsync");
    check(gpu_demo::launch_vec_add(x, y, z, n_, compute_), "vec_add");
    check(gpu_demo::launch_gelu(z, y, n_, compute_), "gelu");
    check(gpu_demo::launch_relu(y, n_, compute_), "relu");
    check(gpu_demo::launch_reduce_sum(y, x, n_, compute_), "reduce_sum");
    const float alpha = 1.0f, beta = 0.0f;
    check(cublasSgemm(cublas_, CUBLAS_OP_N, CUBLAS_OP_N, m_, m_, m_, &alpha, x, m_, y, m_, &beta, z, m_), "cublasSgemm");
    check(cudaStreamSynchronize(compute_), "cudaStreamSynchronize");
    for (float* p : {x, y, z}) check(cudaFree(p), "cudaFree");
  }

  /// Device buffers (traced allocations) and the GEMM's matrices from pageable memory.
  void load() {
    NNPROF_SCOPE_IN(profiler_, "load");
    for (float** p : {&d_a_, &d_b_, &d_c_, &d_act_, &d_next_, &d_ma_, &d_mb_, &d_mc_}) *p = device_alloc(bytes_);
    d_sum_ = device_alloc(kSumBytes);
    copy(d_ma_, h_matrix_a_.data(), bytes_, cudaMemcpyHostToDevice, nullptr, false);
    copy(d_mb_, h_matrix_b_.data(), bytes_, cudaMemcpyHostToDevice, nullptr, false);
    check(cudaMemset(d_c_, 0, bytes_), "cudaMemset");
    count_memset(bytes_);
    // cudaMemset may return before the device is done: every top-level scope of this demo
    // waits for its GPU work, so the tests can check that the work lies inside the scope.
    check(cudaDeviceSynchronize(), "cudaDeviceSynchronize");
  }

  void step(int iteration) {
    NNPROF_SCOPE_IN(profiler_, "step");
    {
      NNPROF_SCOPE_IN(profiler_, "h2d");
      copy(d_a_, h_a_, bytes_, cudaMemcpyHostToDevice, compute_, true);
      copy(d_b_, h_b_, bytes_, cudaMemcpyHostToDevice, copy_, true);
      check(cudaEventRecord(b_ready_, copy_), "cudaEventRecord");
      check(cudaStreamWaitEvent(compute_, b_ready_, 0), "cudaStreamWaitEvent");
    }
    {
      // The next batch, on the copy stream while the compute stream runs forward and
      // backward: the overlap of the two streams that the stream report shows.
      NNPROF_SCOPE_IN(profiler_, "prefetch");
      copy(d_next_, h_next_, bytes_, cudaMemcpyHostToDevice, copy_, true);
    }
    forward(1);
    {
      NNPROF_SCOPE_IN(profiler_, "backward");
      check(cudaMemsetAsync(d_sum_, 0, sizeof(float), compute_), "cudaMemsetAsync");
      count_memset(sizeof(float));
      launch("relu", gpu_demo::launch_relu(d_mc_, n_, compute_));
      launch("reduce_sum", gpu_demo::launch_reduce_sum(d_mc_, d_sum_, n_, compute_));
      if (iteration == 0) {
        NNPROF_SCOPE_IN(profiler_, "grad_cache");
        leaked_ = device_alloc(kLeakBytes, false);  // never freed: the leak the memory report finds
      }
    }
    {
      NNPROF_SCOPE_IN(profiler_, "d2h");
      copy(h_out_, d_act_, bytes_, cudaMemcpyDeviceToHost, compute_, true);
      check(cudaEventRecord(act_ready_, compute_), "cudaEventRecord");
      check(cudaStreamWaitEvent(copy_, act_ready_, 0), "cudaStreamWaitEvent");
      copy(h_pageable_out_.data(), d_act_, bytes_, cudaMemcpyDeviceToHost, copy_, false);
      copy(&sum_, d_sum_, sizeof(float), cudaMemcpyDeviceToHost, compute_, false);
    }
    NNPROF_SCOPE_IN(profiler_, "sync");
    check(cudaStreamSynchronize(compute_), "cudaStreamSynchronize");
    check(cudaStreamSynchronize(copy_), "cudaStreamSynchronize");
  }

  /// vec_add, gelu and `gemms` SGEMMs on the compute stream.
  void forward(int gemms) {
    NNPROF_SCOPE_IN(profiler_, "forward");
    launch("vec_add", gpu_demo::launch_vec_add(d_a_, d_b_, d_c_, n_, compute_));
    launch("gelu", gpu_demo::launch_gelu(d_c_, d_act_, n_, compute_));
    NNPROF_SCOPE_IN(profiler_, "gemm");
    const float alpha = 1.0f, beta = 0.0f;
    for (int i = 0; i < gemms; ++i) {
      check(cublasSgemm(cublas_, CUBLAS_OP_N, CUBLAS_OP_N, m_, m_, m_, &alpha, d_ma_, m_, d_mb_, m_, &beta, d_mc_, m_),
            "cublasSgemm");
      ++expected_.sgemm_calls;
    }
  }

  /// The forward block timed by CUDA events and, around the same synchronised block, by the
  /// host's steady_clock: the two means the GPU test compares.
  std::pair<nnprof::CudaTiming, double> timed(int runs) {
    NNPROF_SCOPE_IN(profiler_, "timed");
    nnprof::CudaTimer timer;  // synchronize: each run is read at its stop
    const char* name = "forward_block";
    double host_ms = 0.0;
    for (int r = 0; r < runs; ++r) {
      NNPROF_SCOPE_IN(profiler_, "timed_run");
      check(cudaStreamSynchronize(compute_), "cudaStreamSynchronize");
      const auto t0 = std::chrono::steady_clock::now();
      timer.start(name, compute_);
      forward(kTimedGemms);
      timer.stop(name, compute_);  // waits for the stop event
      host_ms += std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
    }
    return {timer.result(name), host_ms / runs};
  }

  /// Frees every traced allocation except the deliberate leak.
  void teardown() {
    NNPROF_SCOPE_IN(profiler_, "teardown");
    free_device_buffers();
  }

  /// Checks the results the host can recompute: gelu(a + b) from both copies back, and a
  /// finite reduction. Throws on a wrong value.
  void verify() const {
    for (int i = 0; i < n_; i += 997) {
      const float want = host_gelu(h_a_[i] + h_b_[i]);
      if (std::fabs(h_out_[i] - want) > 1e-4f * (1.0f + std::fabs(want)) || h_pageable_out_[i] != h_out_[i])
        throw std::runtime_error(fmt::format("wrong result at element {}: gelu(a + b) = {} on the GPU (pinned copy), "
                                             "{} (pageable copy), {} on the host",
                                             i, h_out_[i], h_pageable_out_[i], want));
    }
    if (!std::isfinite(sum_)) throw std::runtime_error("the reduction returned a non-finite sum");
  }

  /// What the traced part issued; peak device memory is every traced allocation at once (all
  /// are live when the leak is allocated).
  [[nodiscard]] const Expected& expected() const noexcept { return expected_; }
  [[nodiscard]] float sum() const noexcept { return sum_; }

  /// Untraced resources (after tracing stopped): workspace, handle, streams, pinned buffers.
  void release_setup() noexcept {
    if (cublas_ != nullptr) cublasDestroy(cublas_);
    cublas_ = nullptr;
    if (workspace_ != nullptr) cudaFree(workspace_);
    workspace_ = nullptr;
    for (float** p : {&h_a_, &h_b_, &h_next_, &h_out_}) {
      if (*p != nullptr) cudaFreeHost(*p);
      *p = nullptr;
    }
    for (cudaEvent_t* e : {&b_ready_, &act_ready_}) {
      if (*e != nullptr) cudaEventDestroy(*e);
      *e = nullptr;
    }
    for (cudaStream_t* s : {&compute_, &copy_}) {
      if (*s != nullptr) cudaStreamDestroy(*s);
      *s = nullptr;
    }
  }

 private:
  static constexpr std::size_t kWorkspaceBytes = 32u << 20;  // cuBLAS's recommendation for Hopper

  /// A traced cudaMalloc; `owned`: freed by teardown (false only for the deliberate leak).
  float* device_alloc(std::uint64_t bytes, bool owned = true) {
    void* p = nullptr;
    check(cudaMalloc(&p, bytes), "cudaMalloc");
    ++expected_.alloc_count;
    expected_.alloc_bytes += bytes;
    if (owned) owned_.push_back(p);
    return static_cast<float*>(p);
  }

  void free_device_buffers() noexcept {
    for (void* p : owned_) cudaFree(p);
    owned_.clear();
  }

  void launch(const char* kernel, cudaError_t launched) {
    check(launched, kernel);
    ++expected_.kernels[kernel];
  }

  /// cudaMemcpyAsync on `stream`, or a synchronous cudaMemcpy when stream is null; `pinned`
  /// says whether the host side came from cudaMallocHost.
  void copy(void* dst, const void* src, std::uint64_t bytes, cudaMemcpyKind kind, cudaStream_t stream, bool pinned) {
    if (stream != nullptr)
      check(cudaMemcpyAsync(dst, src, bytes, kind, stream), "cudaMemcpyAsync");
    else
      check(cudaMemcpy(dst, src, bytes, kind), "cudaMemcpy");
    const std::string key = fmt::format("{}.{}", kind == cudaMemcpyHostToDevice ? "HtoD" : "DtoH", pinned ? "pinned" : "pageable");
    ++expected_.memcpy_count[key];
    expected_.memcpy_bytes[key] += bytes;
  }

  void count_memset(std::uint64_t bytes) {
    ++expected_.memset_count;
    expected_.memset_bytes += bytes;
  }

  nnprof::Profiler& profiler_;
  const int m_;               // GEMM dimension: m x m matrices
  const int n_;               // elements of every vector buffer (m * m)
  const std::uint64_t bytes_;  // bytes of one vector or matrix
  cudaStream_t compute_ = nullptr, copy_ = nullptr;
  cudaEvent_t b_ready_ = nullptr, act_ready_ = nullptr;
  cublasHandle_t cublas_ = nullptr;
  void* workspace_ = nullptr;
  float *h_a_ = nullptr, *h_b_ = nullptr, *h_next_ = nullptr, *h_out_ = nullptr;  // pinned
  std::vector<float> h_pageable_out_, h_matrix_a_, h_matrix_b_;                    // pageable
  float sum_ = 0.0f;                                                               // pageable
  float *d_a_ = nullptr, *d_b_ = nullptr, *d_c_ = nullptr, *d_act_ = nullptr, *d_next_ = nullptr;
  float *d_ma_ = nullptr, *d_mb_ = nullptr, *d_mc_ = nullptr, *d_sum_ = nullptr;
  float* leaked_ = nullptr;
  std::vector<void*> owned_;
  Expected expected_;
};

/// The expectations and measurements as annotations, read back by tests/gpu.
void annotate(nnprof::Profiler& profiler, const Options& o, const Expected& e, const nnprof::CudaTiming& timing,
              double host_ms) {
  profiler.annotate("gpu_demo.iterations", std::to_string(o.iterations));
  profiler.annotate("gpu_demo.size", std::to_string(o.size));
  for (const char* kernel : gpu_demo::kKernelNames) {
    const auto it = e.kernels.find(kernel);
    profiler.annotate(fmt::format("gpu_demo.expected.kernels.{}", kernel), std::to_string(it == e.kernels.end() ? 0 : it->second));
  }
  for (const char* kind : {"HtoD", "DtoH"})
    for (const char* host : {"pinned", "pageable"}) {
      const std::string key = fmt::format("{}.{}", kind, host);
      const auto count = e.memcpy_count.find(key);
      const auto bytes = e.memcpy_bytes.find(key);
      profiler.annotate("gpu_demo.expected.memcpy." + key + ".count",
                        std::to_string(count == e.memcpy_count.end() ? 0 : count->second));
      profiler.annotate("gpu_demo.expected.memcpy." + key + ".bytes",
                        std::to_string(bytes == e.memcpy_bytes.end() ? 0 : bytes->second));
    }
  profiler.annotate("gpu_demo.expected.memset.count", std::to_string(e.memset_count));
  profiler.annotate("gpu_demo.expected.memset.bytes", std::to_string(e.memset_bytes));
  profiler.annotate("gpu_demo.expected.sgemm_calls", std::to_string(e.sgemm_calls));
  profiler.annotate("gpu_demo.expected.alloc_count", std::to_string(e.alloc_count));
  profiler.annotate("gpu_demo.expected.peak_bytes", std::to_string(e.alloc_bytes));
  profiler.annotate("gpu_demo.expected.leak_bytes", std::to_string(kLeakBytes));
  profiler.annotate("gpu_demo.expected.leak_scope", "step > backward > grad_cache");
  profiler.annotate("gpu_demo.timer.name", timing.name);
  profiler.annotate("gpu_demo.timer.runs", std::to_string(timing.count));
  profiler.annotate("gpu_demo.timer.mean_ms", fmt::format("{:.6f}", timing.mean_ms));
  profiler.annotate("gpu_demo.host.mean_ms", fmt::format("{:.6f}", host_ms));
}

/// profile.nnprof and the reports `nnprof demo` writes for the CPU demo.
std::vector<std::string> write_outputs(const nnprof::Profile& profile, const std::filesystem::path& dir) {
  std::vector<std::string> written;
  const std::string profile_path = (dir / "profile.nnprof").string();
  profile.save(profile_path);
  written.push_back(profile_path);
  const nnprof::Report report(profile);
  const std::pair<const char*, nnprof::ReportFormat> outputs[] = {
      {"report.txt", nnprof::ReportFormat::Text}, {"report.md", nnprof::ReportFormat::Markdown},
      {"report.json", nnprof::ReportFormat::Json}, {"report.html", nnprof::ReportFormat::Html},
      {"report.csv", nnprof::ReportFormat::Csv},   {"trace.json", nnprof::ReportFormat::Chrome}};
  for (const auto& [file, format] : outputs) {
    report.export_to((dir / file).string(), format);
    written.push_back((dir / file).string());
  }
  return written;
}

int run(const Options& o) {
  // Before any CUDA runtime call: without a driver the runtime would only say "insufficient
  // driver", nnprof says what is missing.
  if (const nnprof::GpuStatus status = nnprof::gpu_available(); !status.tracing()) {
    std::cerr << "nnprof-gpu-demo: " << status.message << "\n";
    return kExitNoGpu;
  }
  int devices = 0;
  if (const cudaError_t e = cudaGetDeviceCount(&devices); e != cudaSuccess || devices == 0) {
    std::cerr << "nnprof-gpu-demo: the CUDA runtime cannot use this machine's GPU: "
              << (e != cudaSuccess ? cudaGetErrorString(e) : "no device") << " (GPU collection disabled)\n";
    return kExitNoGpu;
  }
  std::error_code ec;
  std::filesystem::create_directories(o.out, ec);
  if (ec) throw std::runtime_error("cannot create the output directory '" + o.out + "': " + ec.message());

  nnprof::Profiler profiler;
  nnprof::set_thread_name("main");
  Workload work(profiler, o);
  work.setup();

  nnprof::CudaProfiler gpu(profiler);
  if (!gpu.status().tracing()) {
    std::cerr << "nnprof-gpu-demo: " << gpu.status().message << "\n";
    return kExitNoGpu;
  }
  work.load();
  for (int i = 0; i < o.iterations; ++i) work.step(i);
  const auto [timing, host_ms] = work.timed(o.timed_runs);
  work.teardown();
  gpu.stop();
  const nnprof::CudaProfilerStats stats = gpu.stats();
  work.verify();
  work.release_setup();

  annotate(profiler, o, work.expected(), timing, host_ms);
  const nnprof::Profile profile = profiler.snapshot();
  const std::vector<std::string> written = write_outputs(profile, o.out);

  const Expected& e = work.expected();
  std::uint64_t demo_kernels = 0;
  for (const auto& [name, count] : e.kernels) demo_kernels += count;
  fmt::print("nnprof-gpu-demo: {} steps of a {}x{} SGEMM with vec_add, gelu, relu and reduce_sum on {}\n", o.iterations,
             o.size, o.size, profile.gpu.devices.empty() ? std::string("a GPU") : profile.gpu.devices.front().name);
  fmt::print("  traced: {} GPU ops ({} kernels issued by the demo, {} SGEMM calls), {} CUDA API calls, {} records, {} dropped\n",
             profile.gpu.ops.size(), demo_kernels, e.sgemm_calls, profile.gpu.api_calls.size(), stats.records, stats.dropped);
  fmt::print("  CudaTimer: {} runs of {}, mean {:.3f} ms on the GPU, {:.3f} ms on the host around the same block\n",
             timing.count, timing.name, timing.mean_ms, host_ms);
  fmt::print("  leaked on purpose: {} bytes of device memory in step > backward > grad_cache; reduction = {}\n",
             kLeakBytes, work.sum());
  std::cout << "\nFiles written:\n";
  for (const auto& f : written) std::cout << "  " << f << '\n';
  std::cout << "Open trace.json in https://ui.perfetto.dev (GPU streams under the process) or report.html in a browser.\n";
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"nnprof-gpu-demo: a small GPU training step profiled by nnprof (kernels, cuBLAS, copies on two "
               "streams, device memory). Exit status 3: no usable GPU here.",
               "nnprof-gpu-demo"};
  Options o;
  app.add_option("--iterations", o.iterations, "Training steps")->check(CLI::Range(1, 100000))->capture_default_str();
  app.add_option("--size", o.size, "Matrix dimension of the SGEMM; every vector has size^2 elements")
      ->check(CLI::Range(64, 8192))
      ->capture_default_str();
  app.add_option("--timed-runs", o.timed_runs, "Runs of the CudaTimer-timed forward block")
      ->check(CLI::Range(1, 10000))
      ->capture_default_str();
  app.add_option("--out", o.out, "Directory for profile.nnprof and its reports")->capture_default_str();
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    std::cerr << "nnprof-gpu-demo: " << e.what() << "\nRun 'nnprof-gpu-demo --help' for usage.\n";
    return kExitUsage;
  }
  try {
    return run(o);
  } catch (const std::exception& e) {
    std::cerr << "nnprof-gpu-demo: " << e.what() << "\n";
    return kExitFailed;
  }
}
