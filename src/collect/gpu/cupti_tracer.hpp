// The CUPTI tracer behind nnprof::CudaProfiler: subscribes to the CUDA API callbacks (to
// write one launch record per work-issuing call into the calling thread's nnprof buffer, so
// GPU work is attributed to the scope that launched it), enables activity tracing with
// buffers handed out from a reused pool, parses completed buffers on CUPTI's thread, and hands
// everything to the session's snapshots as a GpuSource.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <unordered_map>
#include <vector>

#include "collect/gpu/activity_parse.hpp"
#include "collect/gpu/cuda_loader.hpp"
#include "nnprof/gpu.hpp"
#include "record/heap_source.hpp"

namespace nnprof::detail {

class NvmlSampler;
class Session;

/// Writes one GpuLaunch record for a work-issuing CUDA call into the calling thread's buffer
/// of `session` (what the API callback does; tests call it directly). Nothing while the
/// profiler is disabled or keeps no spans.
void record_gpu_launch(Session& session, std::uint32_t correlation_id, std::uint32_t domain,
                       std::uint32_t cbid) noexcept;

/// Activity buffers for CUPTI: reused, so that a long run allocates a handful.
class BufferPool {
 public:
  explicit BufferPool(std::size_t bytes) : bytes_(bytes) {}
  ~BufferPool();
  BufferPool(const BufferPool&) = delete;
  BufferPool& operator=(const BufferPool&) = delete;
  /// A buffer of bytes() bytes, 8-byte aligned as CUPTI requires; nullptr when out of memory.
  std::uint8_t* take();
  void give_back(std::uint8_t* buffer);
  [[nodiscard]] std::size_t bytes() const noexcept { return bytes_; }
  [[nodiscard]] std::size_t allocated() const;

 private:
  const std::size_t bytes_;
  mutable std::mutex mu_;
  std::vector<std::uint8_t*> free_;
  std::size_t allocated_ = 0;
};

class CuptiTracer final : public GpuSource {
 public:
  /// Traces into `session`, which must outlive this tracer's callbacks (stop() ends them).
  CuptiTracer(Session& session, const CudaProfilerOptions& options, const CuptiApi& cupti, const DriverApi& driver);
  ~CuptiTracer() override;

  /// Subscribes and enables tracing; Tracing or the status that says why not.
  GpuStatus start();
  /// Waits for the devices (when asked), flushes every buffer, disables tracing.
  void stop() noexcept;
  [[nodiscard]] bool active() const noexcept { return active_.load(std::memory_order_acquire); }
  [[nodiscard]] CudaProfilerStats stats() const;

  void snapshot_gpu(RawGpu& out) override;

  // CUPTI's entry points (C callbacks, forwarded to the active tracer).
  void on_api(CUpti_CallbackDomain domain, CUpti_CallbackId cbid, const CUpti_CallbackData* data) noexcept;
  void on_buffer_request(std::uint8_t** buffer, std::size_t* size, std::size_t* max_records) noexcept;
  void on_buffer_complete(std::uint8_t* buffer, std::size_t valid_bytes) noexcept;

 private:
  void read_devices();
  std::string api_name(bool driver, std::uint32_t cbid);
  void record_occupancy(std::uint32_t correlation, const void* params, CUpti_CallbackId cbid) noexcept;
  void add_dropped() noexcept;

  Session& session_;
  const CudaProfilerOptions options_;
  const CuptiApi& cupti_;
  const DriverApi& driver_;
  CUpti_SubscriberHandle subscriber_ = nullptr;
  std::atomic<bool> active_{false};
  std::vector<CUpti_ActivityKind> enabled_kinds_;
  BufferPool buffers_;
  std::unique_ptr<NvmlSampler> nvml_;

  mutable std::mutex mu_;  // everything below
  RawGpu raw_;             // parsed records so far
  ParseContext parse_;
  std::uint64_t records_ = 0, buffers_completed_ = 0;
  std::unordered_map<std::uint64_t, std::string> api_names_;  // (driver << 32 | cbid) -> name
  std::unordered_map<std::uint32_t, double> occupancy_;  // by (runtime) correlation id of the launch
  struct OccupancyKey {
    CUfunction f;
    std::uint32_t threads, shared;
    bool operator==(const OccupancyKey&) const = default;
  };
  struct OccupancyKeyHash {
    std::size_t operator()(const OccupancyKey& k) const noexcept {
      return std::hash<const void*>()(k.f) ^ (std::size_t{k.threads} << 20) ^ k.shared;
    }
  };
  std::unordered_map<OccupancyKey, double, OccupancyKeyHash> occupancy_cache_;
  std::vector<std::uint32_t> max_threads_per_sm_;  // by device ordinal
};

}  // namespace nnprof::detail
