// NVML samples per device: device memory in use (all processes) and GPU / memory utilisation,
// read on a thread every interval. Devices are matched by PCI bus id, never by index
// (CUDA_VISIBLE_DEVICES renumbers CUDA's devices but not NVML's).
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "collect/gpu/cuda_loader.hpp"
#include "nnprof/gpu_profile.hpp"

namespace nnprof::detail {

/// One reading of one device.
struct NvmlReading {
  std::uint64_t time_ns = 0;    ///< CLOCK_MONOTONIC
  std::uint64_t used_bytes = 0;
  double gpu_percent = -1.0;    ///< < 0: not read
  double memory_percent = -1.0;
};

/// Appends `r` of `device` to the three series of `counters` (created on first use).
void add_nvml_reading(std::vector<GpuCounter>& counters, std::uint32_t device, const NvmlReading& r);

class NvmlSampler {
 public:
  /// Starts sampling `devices` (CUDA ordinal, PCI bus id); no thread when NVML is missing, see error().
  NvmlSampler(const NvmlApi* api, std::vector<std::pair<std::uint32_t, std::string>> devices, std::uint32_t interval_ms);
  ~NvmlSampler();
  NvmlSampler(const NvmlSampler&) = delete;
  NvmlSampler& operator=(const NvmlSampler&) = delete;

  void stop() noexcept;
  [[nodiscard]] const std::string& error() const noexcept { return error_; }
  /// The series read so far.
  [[nodiscard]] std::vector<GpuCounter> counters() const;

 private:
  void run();
  void sample_once();

  const NvmlApi* api_;
  std::uint32_t interval_ms_;
  std::vector<std::pair<std::uint32_t, nvml::Device>> handles_;
  std::string error_;
  mutable std::mutex mu_;
  std::vector<GpuCounter> counters_;
  std::condition_variable cv_;
  bool stopping_ = false;
  std::thread thread_;
};

}  // namespace nnprof::detail
