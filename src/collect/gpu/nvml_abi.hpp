// The few NVML declarations nnprof uses. The toolkit ships no nvml.h (it comes with the
// driver's development files), and NVML is loaded at run time anyway; these match the
// documented, stable NVML ABI (nvml.h of the R5xx drivers).
#pragma once

namespace nnprof::detail::nvml {

using Return = int;                 // nvmlReturn_t; NVML_SUCCESS is 0
struct DeviceSt;
using Device = DeviceSt*;           // nvmlDevice_t

struct Memory {                     // nvmlMemory_t
  unsigned long long total;
  unsigned long long free;
  unsigned long long used;
};

struct Utilization {                // nvmlUtilization_t
  unsigned int gpu;                 // percent of time a kernel ran in the last sample period
  unsigned int memory;              // percent of time device memory was read or written
};

using InitFn = Return (*)();
using ShutdownFn = Return (*)();
using ErrorStringFn = const char* (*)(Return);
using DeviceGetHandleByPciBusIdFn = Return (*)(const char* pci_bus_id, Device* device);
using DeviceGetMemoryInfoFn = Return (*)(Device device, Memory* memory);
using DeviceGetUtilizationRatesFn = Return (*)(Device device, Utilization* utilization);

}  // namespace nnprof::detail::nvml
