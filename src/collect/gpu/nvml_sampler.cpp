#include "collect/gpu/nvml_sampler.hpp"

#include <pthread.h>

#include <chrono>

#include <fmt/format.h>

#include "nnprof/detail/clock_read.hpp"

namespace nnprof::detail {

namespace {
GpuCounter& series(std::vector<GpuCounter>& counters, std::uint32_t device, const char* name, const char* unit) {
  for (GpuCounter& c : counters)
    if (c.device == device && c.name == name) return c;
  counters.push_back(GpuCounter{device, name, unit, {}});
  return counters.back();
}
}  // namespace

void add_nvml_reading(std::vector<GpuCounter>& counters, std::uint32_t device, const NvmlReading& r) {
  series(counters, device, "nvml_memory_used", "bytes").points.emplace_back(r.time_ns, static_cast<double>(r.used_bytes));
  if (r.gpu_percent >= 0.0)
    series(counters, device, "nvml_gpu_utilization", "percent").points.emplace_back(r.time_ns, r.gpu_percent);
  if (r.memory_percent >= 0.0)
    series(counters, device, "nvml_memory_utilization", "percent").points.emplace_back(r.time_ns, r.memory_percent);
}

NvmlSampler::NvmlSampler(const NvmlApi* api, std::vector<std::pair<std::uint32_t, std::string>> devices,
                         std::uint32_t interval_ms)
    : api_(api), interval_ms_(interval_ms == 0 ? 100 : interval_ms) {
  if (api_ == nullptr) {
    error_ = "NVML is not available (libnvidia-ml.so.1 not found): no device memory or utilisation samples";
    return;
  }
  if (const nvml::Return r = api_->init(); r != 0) {
    error_ = fmt::format("NVML did not initialise ({}): no device memory or utilisation samples", api_->error_string(r));
    return;
  }
  for (const auto& [ordinal, bus_id] : devices) {
    nvml::Device h = nullptr;
    if (api_->get_handle_by_pci_bus_id(bus_id.c_str(), &h) == 0) handles_.emplace_back(ordinal, h);
  }
  if (handles_.empty()) {
    error_ = "NVML knows none of the CUDA devices by PCI bus id: no device memory or utilisation samples";
    api_->shutdown();
    return;
  }
  sample_once();
  thread_ = std::thread([this] { run(); });
}

NvmlSampler::~NvmlSampler() { stop(); }

void NvmlSampler::stop() noexcept {
  {
    std::lock_guard lock(mu_);
    if (stopping_) return;
    stopping_ = true;
  }
  cv_.notify_all();
  if (thread_.joinable()) {
    thread_.join();
    sample_once();  // the state at the end
    api_->shutdown();
  }
}

std::vector<GpuCounter> NvmlSampler::counters() const {
  std::lock_guard lock(mu_);
  return counters_;
}

void NvmlSampler::sample_once() {
  std::vector<std::pair<std::uint32_t, NvmlReading>> readings;
  for (const auto& [ordinal, h] : handles_) {
    NvmlReading r;
    r.time_ns = monotonic_ns();
    nvml::Memory mem{};
    if (api_->get_memory_info(h, &mem) == 0) r.used_bytes = mem.used;
    nvml::Utilization u{};
    if (api_->get_utilization_rates(h, &u) == 0) {
      r.gpu_percent = u.gpu;
      r.memory_percent = u.memory;
    }
    readings.emplace_back(ordinal, r);
  }
  std::lock_guard lock(mu_);
  for (const auto& [ordinal, r] : readings) add_nvml_reading(counters_, ordinal, r);
}

void NvmlSampler::run() {
  pthread_setname_np(pthread_self(), "nnprof-nvml");
  std::unique_lock lock(mu_);
  while (!stopping_) {
    cv_.wait_for(lock, std::chrono::milliseconds(interval_ms_), [this] { return stopping_; });
    if (stopping_) break;
    lock.unlock();
    sample_once();
    lock.lock();
  }
}

}  // namespace nnprof::detail
