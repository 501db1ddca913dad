// A stand-in libnvidia-ml for tests (loaded through NNPROF_NVML_LIBRARY): two devices whose
// readings are fixed or advance by a known step per call, so that tests can assert exact joules.
//   device 0 "NNPROF Stub GPU 0": has the energy counter, which advances 1000 mJ per call
//                                 (from 5,000,000 mJ: a counter counts from the driver's load);
//                                 power 250 W.
//   device 1 "NNPROF Stub GPU 1": no energy counter (NVML_ERROR_NOT_SUPPORTED); its power reads
//                                 100 W, 150 W, 200 W, ... (+50 W per call).
// Both: utilisation 40 % (memory 20 %), 1 GiB used of 16 GiB, 60 °C (device 1: 61 °C), SM clock
// 1400 MHz, memory clock 2600 MHz. Only the entry points nnprof resolves are exported.
// With NNPROF_NVML_STUB_NO_POWER set, device 1 has no power reading either (NOT_SUPPORTED), as
// some virtualised GPUs: the case where a GPU must get no energy figure at all.
#include <cstdio>
#include <cstdlib>
#include <cstring>

namespace {

constexpr int kSuccess = 0;
constexpr int kInvalidArgument = 2;
constexpr int kNotSupported = 3;

struct StubDevice {
  const char* name;
  const char* pci_bus_id;
  bool has_energy_counter;
  unsigned long long energy_mj;
  unsigned int power_calls;
};

StubDevice g_devices[2] = {
    {"NNPROF Stub GPU 0", "00000000:01:00.0", true, 5'000'000ULL, 0},
    {"NNPROF Stub GPU 1", "00000000:02:00.0", false, 0, 0},
};

StubDevice* device_of(void* handle) {
  for (StubDevice& d : g_devices)
    if (&d == handle) return &d;
  return nullptr;
}

struct Memory {
  unsigned long long total, free, used;
};
struct Utilization {
  unsigned int gpu, memory;
};

}  // namespace

extern "C" {

__attribute__((visibility("default"))) int nvmlInit_v2() { return kSuccess; }
__attribute__((visibility("default"))) int nvmlShutdown() { return kSuccess; }
__attribute__((visibility("default"))) const char* nvmlErrorString(int result) {
  switch (result) {
    case kSuccess: return "Success";
    case kInvalidArgument: return "Invalid Argument";
    case kNotSupported: return "Not Supported";
    default: return "Unknown Error";
  }
}

__attribute__((visibility("default"))) int nvmlDeviceGetCount_v2(unsigned int* count) {
  *count = 2;
  return kSuccess;
}

__attribute__((visibility("default"))) int nvmlDeviceGetHandleByIndex_v2(unsigned int index, void** device) {
  if (index >= 2) return kInvalidArgument;
  *device = &g_devices[index];
  return kSuccess;
}

__attribute__((visibility("default"))) int nvmlDeviceGetHandleByPciBusId_v2(const char* bus_id, void** device) {
  for (StubDevice& d : g_devices)
    if (std::strcmp(d.pci_bus_id, bus_id) == 0) {
      *device = &d;
      return kSuccess;
    }
  return kInvalidArgument;
}

__attribute__((visibility("default"))) int nvmlDeviceGetName(void* device, char* name, unsigned int length) {
  const StubDevice* d = device_of(device);
  if (d == nullptr || length == 0) return kInvalidArgument;
  std::snprintf(name, length, "%s", d->name);
  return kSuccess;
}

__attribute__((visibility("default"))) int nvmlDeviceGetMemoryInfo(void* device, Memory* memory) {
  if (device_of(device) == nullptr) return kInvalidArgument;
  memory->total = 16ULL << 30;
  memory->used = 1ULL << 30;
  memory->free = memory->total - memory->used;
  return kSuccess;
}

__attribute__((visibility("default"))) int nvmlDeviceGetUtilizationRates(void* device, Utilization* utilization) {
  if (device_of(device) == nullptr) return kInvalidArgument;
  utilization->gpu = 40;
  utilization->memory = 20;
  return kSuccess;
}

__attribute__((visibility("default"))) int nvmlDeviceGetPowerUsage(void* device, unsigned int* milliwatts) {
  StubDevice* d = device_of(device);
  if (d == nullptr) return kInvalidArgument;
  if (d->has_energy_counter) {
    *milliwatts = 250'000;
  } else if (std::getenv("NNPROF_NVML_STUB_NO_POWER") != nullptr) {
    return kNotSupported;
  } else {
    *milliwatts = 100'000 + 50'000 * d->power_calls;
    ++d->power_calls;
  }
  return kSuccess;
}

__attribute__((visibility("default"))) int nvmlDeviceGetTotalEnergyConsumption(void* device, unsigned long long* millijoules) {
  StubDevice* d = device_of(device);
  if (d == nullptr) return kInvalidArgument;
  if (!d->has_energy_counter) return kNotSupported;
  *millijoules = d->energy_mj;
  d->energy_mj += 1000;
  return kSuccess;
}

__attribute__((visibility("default"))) int nvmlDeviceGetTemperature(void* device, int sensor, unsigned int* celsius) {
  const StubDevice* d = device_of(device);
  if (d == nullptr || sensor != 0) return kInvalidArgument;
  *celsius = d == &g_devices[0] ? 60 : 61;
  return kSuccess;
}

__attribute__((visibility("default"))) int nvmlDeviceGetClockInfo(void* device, int clock, unsigned int* megahertz) {
  if (device_of(device) == nullptr) return kInvalidArgument;
  if (clock == 1) {
    *megahertz = 1400;
  } else if (clock == 2) {
    *megahertz = 2600;
  } else {
    return kInvalidArgument;
  }
  return kSuccess;
}

}  // extern "C"
