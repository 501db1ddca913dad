#include "collect/gpu/cuda_loader.hpp"

#include <dlfcn.h>

#include <cstdlib>
#include <string_view>
#include <vector>

#include <fmt/format.h>

#ifndef NNPROF_CUPTI_HINTS
#define NNPROF_CUPTI_HINTS ""
#endif

namespace nnprof::detail {

namespace {

// Resolves `name` into `fn`; remembers the first missing symbol.
template <class Fn>
void resolve(void* handle, Fn& fn, const char* name, std::string& missing) {
  fn = reinterpret_cast<Fn>(dlsym(handle, name));
  if (fn == nullptr && missing.empty()) missing = name;
}

std::string dl_error() {
  const char* e = dlerror();
  return e != nullptr ? e : "unknown error";
}

std::vector<std::string> split_paths(std::string_view list) {
  std::vector<std::string> out;
  while (!list.empty()) {
    const std::size_t colon = list.find(':');
    const std::string_view part = list.substr(0, colon);
    if (!part.empty()) out.emplace_back(part);
    if (colon == std::string_view::npos) break;
    list.remove_prefix(colon + 1);
  }
  return out;
}

Loaded<DriverApi> open_driver() {
  static DriverApi api;
  const char* override_path = std::getenv("NNPROF_LIBCUDA");
  const std::string path = override_path != nullptr && *override_path != '\0' ? override_path : "libcuda.so.1";
  if (path.find("/stubs/") != std::string::npos)
    return {nullptr, fmt::format("'{}' is the CUDA toolkit's link stub, not a driver", path)};
  void* h = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (h == nullptr) return {nullptr, fmt::format("could not load {} ({})", path, dl_error())};
  std::string missing;
  resolve(h, api.init, "cuInit", missing);
  resolve(h, api.driver_get_version, "cuDriverGetVersion", missing);
  resolve(h, api.device_get_count, "cuDeviceGetCount", missing);
  resolve(h, api.device_get, "cuDeviceGet", missing);
  resolve(h, api.device_get_name, "cuDeviceGetName", missing);
  resolve(h, api.device_get_attribute, "cuDeviceGetAttribute", missing);
  resolve(h, api.device_get_pci_bus_id, "cuDeviceGetPCIBusId", missing);
  resolve(h, api.device_total_mem, "cuDeviceTotalMem_v2", missing);
  resolve(h, api.ctx_get_current, "cuCtxGetCurrent", missing);
  resolve(h, api.ctx_get_device, "cuCtxGetDevice", missing);
  resolve(h, api.ctx_push_current, "cuCtxPushCurrent_v2", missing);
  resolve(h, api.ctx_pop_current, "cuCtxPopCurrent_v2", missing);
  resolve(h, api.primary_ctx_retain, "cuDevicePrimaryCtxRetain", missing);
  resolve(h, api.primary_ctx_release, "cuDevicePrimaryCtxRelease_v2", missing);
  resolve(h, api.ctx_synchronize, "cuCtxSynchronize", missing);
  resolve(h, api.event_create, "cuEventCreate", missing);
  resolve(h, api.event_record, "cuEventRecord", missing);
  resolve(h, api.event_synchronize, "cuEventSynchronize", missing);
  resolve(h, api.event_elapsed_time, "cuEventElapsedTime_v2", missing);
  if (api.event_elapsed_time == nullptr) {  // drivers before CUDA 12.8 have only the unversioned one
    missing.clear();
    resolve(h, api.event_elapsed_time, "cuEventElapsedTime", missing);
  }
  resolve(h, api.event_destroy, "cuEventDestroy_v2", missing);
  resolve(h, api.stream_synchronize, "cuStreamSynchronize", missing);
  resolve(h, api.occupancy_max_active_blocks, "cuOccupancyMaxActiveBlocksPerMultiprocessor", missing);
  resolve(h, api.get_error_string, "cuGetErrorString", missing);
  if (!missing.empty())
    return {nullptr, fmt::format("{} has no {}: the NVIDIA driver is too old for this nnprof", path, missing)};
  api.handle = h;
  return {&api, {}};
}

Loaded<CuptiApi> bind_cupti(void* h, std::string path) {
  static CuptiApi api;
  std::string missing;
  resolve(h, api.get_version, "cuptiGetVersion", missing);
  resolve(h, api.get_result_string, "cuptiGetResultString", missing);
  resolve(h, api.subscribe, "cuptiSubscribe", missing);
  resolve(h, api.unsubscribe, "cuptiUnsubscribe", missing);
  resolve(h, api.enable_domain, "cuptiEnableDomain", missing);
  resolve(h, api.enable_callback, "cuptiEnableCallback", missing);
  resolve(h, api.get_callback_name, "cuptiGetCallbackName", missing);
  resolve(h, api.set_thread_id_type, "cuptiSetThreadIdType", missing);
  resolve(h, api.register_timestamp_callback, "cuptiActivityRegisterTimestampCallback", missing);
  resolve(h, api.register_callbacks, "cuptiActivityRegisterCallbacks", missing);
  resolve(h, api.activity_enable, "cuptiActivityEnable", missing);
  resolve(h, api.activity_disable, "cuptiActivityDisable", missing);
  resolve(h, api.get_next_record, "cuptiActivityGetNextRecord", missing);
  resolve(h, api.get_num_dropped_records, "cuptiActivityGetNumDroppedRecords", missing);
  resolve(h, api.flush_all, "cuptiActivityFlushAll", missing);
  resolve(h, api.flush_period, "cuptiActivityFlushPeriod", missing);
  resolve(h, api.enable_allocation_source, "cuptiActivityEnableAllocationSource", missing);
  resolve(h, api.push_external_correlation, "cuptiActivityPushExternalCorrelationId", missing);
  resolve(h, api.pop_external_correlation, "cuptiActivityPopExternalCorrelationId", missing);
  resolve(h, api.get_timestamp, "cuptiGetTimestamp", missing);
  if (!missing.empty())
    return {nullptr, fmt::format("{} has no {}: CUPTI from CUDA 12 or later is needed", path, missing)};
  api.handle = h;
  api.path = std::move(path);
  return {&api, {}};
}

Loaded<CuptiApi> open_cupti() {
  // 1. A copy the process already has (PyTorch's wheel ships one).
  for (const char* soname : {"libcupti.so.13", "libcupti.so.12", "libcupti.so"})
    if (void* h = dlopen(soname, RTLD_NOW | RTLD_NOLOAD)) return bind_cupti(h, soname);
  std::vector<std::string> candidates;
  if (const char* p = std::getenv("NNPROF_CUPTI_PATH"); p != nullptr && *p != '\0') candidates.emplace_back(p);
  candidates.emplace_back("libcupti.so.13");
  candidates.emplace_back("libcupti.so.12");
  for (const std::string& hint : split_paths(NNPROF_CUPTI_HINTS)) {
    candidates.push_back(hint + ".13");
    candidates.push_back(hint);
  }
  candidates.emplace_back("/usr/local/cuda/extras/CUPTI/lib64/libcupti.so");
  candidates.emplace_back("/usr/local/cuda/lib64/libcupti.so");
  std::string first_error;
  for (const std::string& c : candidates) {
    if (void* h = dlopen(c.c_str(), RTLD_NOW | RTLD_LOCAL)) return bind_cupti(h, c);
    if (first_error.empty()) first_error = dl_error();
  }
  return {nullptr, fmt::format("could not load libcupti ({}); set NNPROF_CUPTI_PATH to the libcupti.so of your "
                               "CUDA toolkit",
                               first_error)};
}

Loaded<NvmlApi> open_nvml() {
  static NvmlApi api;
  const char* override_path = std::getenv("NNPROF_NVML_LIBRARY");
  const std::string path = override_path != nullptr && *override_path != '\0' ? override_path : "libnvidia-ml.so.1";
  void* h = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (h == nullptr) return {nullptr, fmt::format("could not load {} ({})", path, dl_error())};
  std::string missing;
  resolve(h, api.init, "nvmlInit_v2", missing);
  resolve(h, api.shutdown, "nvmlShutdown", missing);
  resolve(h, api.error_string, "nvmlErrorString", missing);
  resolve(h, api.get_handle_by_pci_bus_id, "nvmlDeviceGetHandleByPciBusId_v2", missing);
  resolve(h, api.get_memory_info, "nvmlDeviceGetMemoryInfo", missing);
  resolve(h, api.get_utilization_rates, "nvmlDeviceGetUtilizationRates", missing);
  if (!missing.empty()) return {nullptr, fmt::format("{} has no {}", path, missing)};
  // Optional entry points: a missing one is a reading the caller skips, never a failed load.
  std::string optional_missing;
  resolve(h, api.get_count, "nvmlDeviceGetCount_v2", optional_missing);
  resolve(h, api.get_handle_by_index, "nvmlDeviceGetHandleByIndex_v2", optional_missing);
  resolve(h, api.get_name, "nvmlDeviceGetName", optional_missing);
  resolve(h, api.get_power_usage, "nvmlDeviceGetPowerUsage", optional_missing);
  resolve(h, api.get_total_energy, "nvmlDeviceGetTotalEnergyConsumption", optional_missing);
  resolve(h, api.get_temperature, "nvmlDeviceGetTemperature", optional_missing);
  resolve(h, api.get_clock_info, "nvmlDeviceGetClockInfo", optional_missing);
  api.handle = h;
  return {&api, {}};
}

}  // namespace

std::string DriverApi::error_text(CUresult r) const {
  const char* s = nullptr;
  if (get_error_string != nullptr) get_error_string(r, &s);
  return s != nullptr ? fmt::format("{} (CUresult {})", s, static_cast<int>(r)) : fmt::format("CUresult {}", static_cast<int>(r));
}

std::string CuptiApi::error_text(CUptiResult r) const {
  const char* s = nullptr;
  if (get_result_string != nullptr) get_result_string(r, &s);
  return s != nullptr ? std::string(s) : fmt::format("CUptiResult {}", static_cast<int>(r));
}

// Function-local statics: loaded once, thread-safe, never unloaded.
Loaded<DriverApi> load_driver() {
  static const Loaded<DriverApi> loaded = open_driver();
  return loaded;
}

Loaded<CuptiApi> load_cupti() {
  static const Loaded<CuptiApi> loaded = open_cupti();
  return loaded;
}

Loaded<NvmlApi> load_nvml() {
  static const Loaded<NvmlApi> loaded = open_nvml();
  return loaded;
}

const DriverState& driver_state() {
  static const DriverState state = [] {
    DriverState s;
    const Loaded<DriverApi> d = load_driver();
    if (d.api == nullptr) {
      s.error = fmt::format("no CUDA driver found: GPU collection disabled ({})", d.error);
      s.no_driver = true;
      return s;
    }
    if (const CUresult r = d.api->init(0); r != CUDA_SUCCESS) {
      s.error = fmt::format("the CUDA driver did not initialise: GPU collection disabled ({})", d.api->error_text(r));
      s.no_driver = r == CUDA_ERROR_NO_DEVICE ? false : true;
      return s;
    }
    d.api->driver_get_version(&s.version);
    if (d.api->device_get_count(&s.device_count) != CUDA_SUCCESS || s.device_count == 0) {
      s.error = "the CUDA driver reports no GPU: GPU collection disabled (check CUDA_VISIBLE_DEVICES)";
      return s;
    }
    s.api = d.api;
    return s;
  }();
  return state;
}

}  // namespace nnprof::detail
