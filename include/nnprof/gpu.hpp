// NVIDIA GPUs: CUPTI tracing of kernels, copies, memsets, CUDA API calls and device memory,
// each linked to the nnprof scope that launched it; CUDA-event timing of blocks; stream,
// device and GPU-memory views of a profile.
//
//   nnprof::Profiler profiler;
//   nnprof::CudaProfiler gpu(profiler);              // never throws: see gpu.status()
//   { NNPROF_SCOPE_IN(profiler, "forward"); model.forward(x); }
//   gpu.stop();                                       // flushes what CUPTI still holds
//   profiler.save("run.nnprof");                      // kernels, copies, GPU time per scope
//
// CUPTI, the CUDA driver and NVML are loaded at run time (dlopen), so libnnprof needs none of
// them to load: on a machine without a GPU or driver the collector reports why it is off and
// every other part of nnprof works as before.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "nnprof/config.hpp"
#include "nnprof/profile.hpp"
#include "nnprof/profiler.hpp"

// The CUDA handle types, declared as cuda.h and driver_types.h declare them, so that a
// cudaStream_t or CUstream converts without a CUDA header here.
struct CUstream_st;

namespace nnprof {

namespace detail {
class CuptiTracer;
}

/// Why GPU collection is (not) running.
enum class GpuStatusCode : std::uint8_t {
  Tracing,         ///< the collector runs
  Stopped,         ///< it ran and was stopped
  NotBuilt,        ///< libnnprof was built without CUDA support (NNPROF_CUDA=OFF or no toolkit)
  NoDriver,        ///< libcuda.so.1 could not be loaded (no NVIDIA driver)
  NoDevice,        ///< the driver loaded but reports no usable GPU
  NoCupti,         ///< libcupti.so could not be loaded
  CuptiError,      ///< CUPTI refused to start (another tool holds it, version mismatch)
  AlreadyRunning,  ///< another CudaProfiler is active in this process
};

NNPROF_API const char* to_string(GpuStatusCode code) noexcept;

struct GpuStatus {
  GpuStatusCode code = GpuStatusCode::NotBuilt;
  std::string message;  ///< a sentence a user can act on, e.g. "no CUDA driver found: GPU collection disabled"
  [[nodiscard]] bool tracing() const noexcept { return code == GpuStatusCode::Tracing; }
};

/// Whether GPU collection could start here, without starting it (loads the libraries and asks
/// the driver for devices).
NNPROF_API GpuStatus gpu_available();

struct CudaProfilerOptions {
  bool kernels = true;             ///< kernel executions (concurrent kernel tracing)
  bool memcpy = true;              ///< copies, including peer-to-peer
  bool memset = true;
  bool memory = true;              ///< device allocations and releases (cudaMalloc, async, managed)
  bool api_calls = true;           ///< CUDA runtime and driver API calls as slices on their CPU threads
  bool synchronization = true;     ///< cudaDeviceSynchronize, cudaStreamSynchronize, ... waits
  bool occupancy = true;           ///< theoretical occupancy of each launch configuration
  bool nvml = true;                ///< sample NVML memory in use and utilisation per device
  std::uint32_t nvml_interval_ms = 100;
  /// Wait for every device to finish its queued work at stop, so that no launched work is
  /// missing from the profile.
  bool synchronize_at_stop = true;
  std::uint32_t buffer_bytes = 8u << 20;       ///< one CUPTI activity buffer
  std::uint64_t max_records = 20'000'000;      ///< GPU records kept at most; later ones are counted as refused
  std::uint32_t flush_period_ms = 100;         ///< how often CUPTI hands over completed buffers
};

/// What a running (or stopped) collector has seen.
struct CudaProfilerStats {
  std::uint64_t records = 0;     ///< activity records parsed
  std::uint64_t dropped = 0;     ///< lost by CUPTI (no buffer)
  std::uint64_t refused = 0;     ///< past max_records
  std::uint64_t buffers = 0;     ///< activity buffers completed
};

/// Traces the GPU work of the whole process into `profiler`'s snapshots while it lives. One at
/// a time per process (CUPTI's subscriber is process-wide).
class NNPROF_API CudaProfiler {
 public:
  /// Starts tracing into `profiler`, which must outlive this object. Never throws for a missing
  /// GPU, driver or CUPTI: status() says why the collector is off, and the profile then has no
  /// GPU part.
  explicit CudaProfiler(Profiler& profiler, const CudaProfilerOptions& options = {});
  ~CudaProfiler();
  CudaProfiler(const CudaProfiler&) = delete;
  CudaProfiler& operator=(const CudaProfiler&) = delete;

  /// Stops tracing (waiting for the devices first when synchronize_at_stop); later snapshots
  /// still hold everything traced.
  void stop() noexcept;
  [[nodiscard]] bool active() const noexcept;
  [[nodiscard]] const GpuStatus& status() const noexcept { return status_; }
  [[nodiscard]] CudaProfilerStats stats() const noexcept;

 private:
  GpuStatus status_;
  std::shared_ptr<detail::CuptiTracer> tracer_;
};

/// Tags the CUDA API calls made while it lives with `id` (CUPTI external correlation, custom
/// kind 2), so that reports and the trace can join them with your own records (a request id, a
/// training step). Costs two CUPTI calls; use it per step or per request, not per scope.
class NNPROF_API CudaCorrelation {
 public:
  explicit CudaCorrelation(std::uint64_t id) noexcept;
  ~CudaCorrelation();
  CudaCorrelation(const CudaCorrelation&) = delete;
  CudaCorrelation& operator=(const CudaCorrelation&) = delete;

 private:
  bool pushed_ = false;
};

// ---------------------------------------------------------------------------------------------
// CUDA-event timing

struct CudaTimerOptions {
  bool synchronize = true;     ///< wait for each timed run before the next; false: read all at the end
  std::uint32_t warmup = 3;    ///< untimed runs first (lazy loading, caches, clocks)
  std::uint32_t repeat = 10;   ///< timed runs
  int device = 0;              ///< device whose primary context is used when the thread has none
};

/// Event-timed statistics of one name, in milliseconds of GPU time.
struct CudaTiming {
  std::string name;
  std::uint32_t count = 0;
  double mean_ms = 0.0;
  double std_ms = 0.0;   ///< sample standard deviation (n - 1); 0 for one run
  double min_ms = 0.0;
  double max_ms = 0.0;
  double total_ms = 0.0;
};

/// Times GPU work with CUDA events (the seeds' CUDATimer): the time between two events the GPU
/// records in `stream`, so it measures the GPU's work, not the launch calls. Throws
/// nnprof::Error naming the reason when no CUDA driver or device is usable.
class NNPROF_API CudaTimer {
 public:
  explicit CudaTimer(const CudaTimerOptions& options = {});
  ~CudaTimer();
  CudaTimer(const CudaTimer&) = delete;
  CudaTimer& operator=(const CudaTimer&) = delete;

  /// Runs `f` warmup + repeat times and times the last `repeat` runs; returns their statistics
  /// (also kept under `name` for result() and results()).
  template <class F>
  CudaTiming measure(std::string_view name, F&& f, CUstream_st* stream = nullptr) {
    for (std::uint32_t i = 0; i < options_.warmup; ++i) f();
    synchronize_warmup(stream);
    for (std::uint32_t i = 0; i < options_.repeat; ++i) {
      start(name, stream);
      f();
      stop(name, stream);
    }
    return result(name);
  }

  /// Records a start event for `name` in `stream`.
  void start(std::string_view name, CUstream_st* stream = nullptr);
  /// Records the stop event for `name`; the run's time is read now (synchronize) or at result().
  /// Throws nnprof::Error for a stop without a start.
  void stop(std::string_view name, CUstream_st* stream = nullptr);
  /// Statistics of every finished run of `name`; count 0 when there is none.
  [[nodiscard]] CudaTiming result(std::string_view name);
  /// All names, in the order first started.
  [[nodiscard]] std::vector<CudaTiming> results();
  [[nodiscard]] const CudaTimerOptions& options() const noexcept { return options_; }

 private:
  void synchronize_warmup(CUstream_st* stream);
  struct State;
  CudaTimerOptions options_;
  State* state_ = nullptr;
};

/// Statistics of per-run times in milliseconds, as CudaTimer reports them (sample std).
NNPROF_API CudaTiming timing_statistics(std::string_view name, const std::vector<double>& ms);

// ---------------------------------------------------------------------------------------------
// Views of a profile's GPU part (pure functions; nnprof::analyze_bottlenecks adds GPU findings)

/// One stream: how busy it was while it had work (the seeds' StreamProfiler).
struct StreamStats {
  std::uint32_t stream = 0;        ///< index in GpuProfile::streams
  std::uint32_t device = 0;
  std::uint32_t stream_id = 0;     ///< CUPTI's stream id
  std::uint64_t ops = 0;
  std::uint64_t kernels = 0;
  std::uint64_t first_ns = 0, last_ns = 0;  ///< start of its first op, end of its last
  std::uint64_t busy_ns = 0;       ///< union of its ops' intervals
  std::uint64_t idle_ns = 0;       ///< span minus busy
  std::uint64_t idle_gaps = 0;     ///< gaps between ops longer than the gap threshold
  std::uint64_t longest_gap_ns = 0;
  double efficiency = 0.0;         ///< busy / (last - first)
};

/// One device: compute and memory utilisation (the seeds' MultiGpuProfiler).
struct DeviceStats {
  std::uint32_t device = 0;
  std::string name;
  std::uint64_t kernels = 0;
  std::uint64_t busy_ns = 0;           ///< union of all its ops over every stream
  std::uint64_t kernel_busy_ns = 0;    ///< union of its kernels
  std::uint64_t active_ns = 0;         ///< from its first op's start to its last op's end
  double kernel_busy_fraction = 0.0;   ///< kernel_busy_ns over the session's duration
  std::uint64_t overlap_ns = 0;        ///< time with two or more of its streams busy
  std::uint64_t memcpy_bytes = 0;
  double nvml_gpu_utilization_mean = -1.0;     ///< percent; < 0: no NVML samples
  double nvml_gpu_utilization_max = -1.0;
  double nvml_memory_utilization_mean = -1.0;  ///< percent of time the memory was read or written
  std::uint64_t nvml_memory_used_max = 0;      ///< bytes, all processes
};

/// Peer-to-peer copies between two devices.
struct PeerBandwidth {
  std::uint32_t src_device = 0, dst_device = 0;
  std::uint64_t copies = 0, bytes = 0, busy_ns = 0;
  double gbytes_per_s = 0.0;       ///< bytes over the copies' summed duration
};

struct StreamReport {
  std::uint64_t gap_threshold_ns = 0;
  std::vector<StreamStats> streams;   ///< by device, then stream id
  std::vector<DeviceStats> devices;   ///< by device
  std::vector<PeerBandwidth> peers;
};

/// Stream, device and peer-to-peer views of `profile`; idle gaps are those longer than
/// `gap_threshold_ns`.
NNPROF_API StreamReport stream_report(const Profile& profile, std::uint64_t gap_threshold_ns = 20'000);

/// Device memory allocated at one moment.
struct GpuMemoryPoint {
  std::uint64_t time_ns = 0;
  std::uint32_t device = 0;
  std::uint64_t allocated_bytes = 0;
};

/// Device memory still allocated when the profile was taken, by the scope that allocated it.
struct GpuLeak {
  std::uint32_t device = 0;
  std::uint32_t node = 0;          ///< call-tree node (0: outside any scope)
  std::uint64_t blocks = 0, bytes = 0;
};

struct GpuDeviceMemory {
  std::uint32_t device = 0;
  std::uint64_t peak_bytes = 0;      ///< most bytes allocated at once (CUPTI allocations)
  std::uint64_t peak_time_ns = 0;
  std::uint64_t live_bytes = 0;      ///< allocated and not freed at the end
  std::uint64_t alloc_count = 0, free_count = 0;
  /// NVML's device memory in use at its highest sample, and what the allocations do not explain
  /// there: CUDA context, driver, library workspaces and other processes. 0 without NVML.
  std::uint64_t nvml_used_max = 0;
  std::uint64_t unexplained_bytes = 0;
};

struct GpuMemoryReport {
  std::vector<GpuDeviceMemory> devices;
  std::vector<GpuMemoryPoint> timeline;  ///< after every allocation and release, by time
  std::vector<GpuLeak> leaks;            ///< largest first
  std::uint64_t untracked_frees = 0;     ///< releases of memory allocated before tracing started
};

/// Replays the device allocations of `profile`: current and peak per device, the timeline and
/// what was never freed.
NNPROF_API GpuMemoryReport gpu_memory_report(const Profile& profile);

}  // namespace nnprof
