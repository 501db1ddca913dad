// CUPTI, the CUDA driver and NVML, loaded at run time (dlopen) so that libnnprof has no link
// dependency on them: one library runs on machines with and without a GPU. The CUDA runtime
// is deliberately not loaded: programs link their own (often statically), and a second copy
// would keep its own device state; the driver API is one per process and shares the primary
// context with every runtime.
#pragma once

#include <cstdint>
#include <string>

#include <cuda.h>
#include <cupti.h>

#include "collect/gpu/nvml_abi.hpp"

namespace nnprof::detail {

/// Function table typed from the declarations in cuda.h (decltype declares, does not link).
struct DriverApi {
  void* handle = nullptr;
  decltype(&::cuInit) init = nullptr;
  decltype(&::cuDriverGetVersion) driver_get_version = nullptr;
  decltype(&::cuDeviceGetCount) device_get_count = nullptr;
  decltype(&::cuDeviceGet) device_get = nullptr;
  decltype(&::cuDeviceGetName) device_get_name = nullptr;
  decltype(&::cuDeviceGetAttribute) device_get_attribute = nullptr;
  decltype(&::cuDeviceGetPCIBusId) device_get_pci_bus_id = nullptr;
  decltype(&::cuDeviceTotalMem) device_total_mem = nullptr;
  decltype(&::cuCtxGetCurrent) ctx_get_current = nullptr;
  decltype(&::cuCtxGetDevice) ctx_get_device = nullptr;
  decltype(&::cuCtxPushCurrent) ctx_push_current = nullptr;
  decltype(&::cuCtxPopCurrent) ctx_pop_current = nullptr;
  decltype(&::cuDevicePrimaryCtxRetain) primary_ctx_retain = nullptr;
  decltype(&::cuDevicePrimaryCtxRelease) primary_ctx_release = nullptr;
  decltype(&::cuCtxSynchronize) ctx_synchronize = nullptr;
  decltype(&::cuEventCreate) event_create = nullptr;
  decltype(&::cuEventRecord) event_record = nullptr;
  decltype(&::cuEventSynchronize) event_synchronize = nullptr;
  decltype(&::cuEventElapsedTime) event_elapsed_time = nullptr;
  decltype(&::cuEventDestroy) event_destroy = nullptr;
  decltype(&::cuStreamSynchronize) stream_synchronize = nullptr;
  decltype(&::cuOccupancyMaxActiveBlocksPerMultiprocessor) occupancy_max_active_blocks = nullptr;
  decltype(&::cuGetErrorString) get_error_string = nullptr;

  /// "CUDA_ERROR_NOT_INITIALIZED: initialization error" style text for a result.
  [[nodiscard]] std::string error_text(CUresult r) const;
};

struct CuptiApi {
  void* handle = nullptr;
  std::string path;  ///< where it was loaded from
  decltype(&::cuptiGetVersion) get_version = nullptr;
  decltype(&::cuptiGetResultString) get_result_string = nullptr;
  decltype(&::cuptiSubscribe) subscribe = nullptr;
  decltype(&::cuptiUnsubscribe) unsubscribe = nullptr;
  decltype(&::cuptiEnableDomain) enable_domain = nullptr;
  decltype(&::cuptiEnableCallback) enable_callback = nullptr;
  decltype(&::cuptiGetCallbackName) get_callback_name = nullptr;
  decltype(&::cuptiSetThreadIdType) set_thread_id_type = nullptr;
  decltype(&::cuptiActivityRegisterTimestampCallback) register_timestamp_callback = nullptr;
  decltype(&::cuptiActivityRegisterCallbacks) register_callbacks = nullptr;
  decltype(&::cuptiActivityEnable) activity_enable = nullptr;
  decltype(&::cuptiActivityDisable) activity_disable = nullptr;
  decltype(&::cuptiActivityGetNextRecord) get_next_record = nullptr;
  decltype(&::cuptiActivityGetNumDroppedRecords) get_num_dropped_records = nullptr;
  decltype(&::cuptiActivityFlushAll) flush_all = nullptr;
  decltype(&::cuptiActivityFlushPeriod) flush_period = nullptr;
  decltype(&::cuptiActivityEnableAllocationSource) enable_allocation_source = nullptr;
  decltype(&::cuptiActivityPushExternalCorrelationId) push_external_correlation = nullptr;
  decltype(&::cuptiActivityPopExternalCorrelationId) pop_external_correlation = nullptr;
  decltype(&::cuptiGetTimestamp) get_timestamp = nullptr;

  [[nodiscard]] std::string error_text(CUptiResult r) const;
};

struct NvmlApi {
  void* handle = nullptr;
  nvml::InitFn init = nullptr;
  nvml::ShutdownFn shutdown = nullptr;
  nvml::ErrorStringFn error_string = nullptr;
  nvml::DeviceGetHandleByPciBusIdFn get_handle_by_pci_bus_id = nullptr;
  nvml::DeviceGetMemoryInfoFn get_memory_info = nullptr;
  nvml::DeviceGetUtilizationRatesFn get_utilization_rates = nullptr;
  // Optional: what the system monitor reads. A driver without one still loads; the caller
  // skips that reading (nullptr). The energy counter exists from R384 (Volta) on, and even
  // there answers kErrorNotSupported on boards without it.
  nvml::DeviceGetCountFn get_count = nullptr;                      ///< nvmlDeviceGetCount_v2
  nvml::DeviceGetHandleByIndexFn get_handle_by_index = nullptr;    ///< nvmlDeviceGetHandleByIndex_v2
  nvml::DeviceGetNameFn get_name = nullptr;
  nvml::DeviceGetPowerUsageFn get_power_usage = nullptr;           ///< mW
  nvml::DeviceGetTotalEnergyConsumptionFn get_total_energy = nullptr;  ///< mJ since the driver loaded
  nvml::DeviceGetTemperatureFn get_temperature = nullptr;
  nvml::DeviceGetClockInfoFn get_clock_info = nullptr;
};

/// The result of loading one library: the table, or why it is not there.
template <class Api>
struct Loaded {
  const Api* api = nullptr;
  std::string error;  ///< empty when api is set
};

/// Loaded once per process and kept (unloading CUPTI while its threads run is unsafe).
/// `$NNPROF_LIBCUDA` names another driver library (tests); a path under "stubs/" is refused:
/// the toolkit's link stub makes every call fail.
Loaded<DriverApi> load_driver();
/// Reuses a CUPTI the process already loaded (a framework's copy: two CUPTIs in one process
/// must not happen), then `$NNPROF_CUPTI_PATH`, the loader's search path, and the toolkit's
/// directories known at build time.
Loaded<CuptiApi> load_cupti();
/// libnvidia-ml.so.1, or the library `$NNPROF_NVML_LIBRARY` names (tests load a stub with it).
/// Read once: the first call decides for the whole process.
Loaded<NvmlApi> load_nvml();

/// The driver loaded and initialised (cuInit) with at least one device; otherwise the sentence
/// that says why GPU collection is off.
struct DriverState {
  const DriverApi* api = nullptr;
  int device_count = 0;
  int version = 0;
  std::string error;
  bool no_driver = false;  ///< error is "no driver" rather than "no device"
};
const DriverState& driver_state();

}  // namespace nnprof::detail
