// The few NVML declarations nnprof uses. The toolkit ships no nvml.h (it comes with the
// driver's development files), and NVML is loaded at run time anyway; these match the
// documented, stable NVML ABI (nvml.h of the R5xx drivers).
#pragma once

namespace nnprof::detail::nvml {

using Return = int;                 // nvmlReturn_t; NVML_SUCCESS is 0
/// NVML_ERROR_NOT_SUPPORTED: the device lacks the feature (the energy counter before Volta).
inline constexpr Return kErrorNotSupported = 3;
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

/// nvmlTemperatureSensors_t: NVML_TEMPERATURE_GPU, the die.
inline constexpr int kTemperatureGpu = 0;
/// nvmlClockType_t: NVML_CLOCK_SM and NVML_CLOCK_MEM.
inline constexpr int kClockSm = 1;
inline constexpr int kClockMem = 2;
/// NVML_DEVICE_NAME_V2_BUFFER_SIZE: room for any device name.
inline constexpr unsigned int kDeviceNameBufferSize = 96;

using InitFn = Return (*)();
using ShutdownFn = Return (*)();
using ErrorStringFn = const char* (*)(Return);
using DeviceGetHandleByPciBusIdFn = Return (*)(const char* pci_bus_id, Device* device);
using DeviceGetMemoryInfoFn = Return (*)(Device device, Memory* memory);
using DeviceGetUtilizationRatesFn = Return (*)(Device device, Utilization* utilization);
using DeviceGetCountFn = Return (*)(unsigned int* count);
using DeviceGetHandleByIndexFn = Return (*)(unsigned int index, Device* device);
using DeviceGetNameFn = Return (*)(Device device, char* name, unsigned int length);
using DeviceGetPowerUsageFn = Return (*)(Device device, unsigned int* milliwatts);
using DeviceGetTotalEnergyConsumptionFn = Return (*)(Device device, unsigned long long* millijoules);
using DeviceGetTemperatureFn = Return (*)(Device device, int sensor, unsigned int* celsius);
using DeviceGetClockInfoFn = Return (*)(Device device, int clock, unsigned int* megahertz);

}  // namespace nnprof::detail::nvml
