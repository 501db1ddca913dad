// The GPU side of bench_gpu.cpp: an empty kernel, launched many times, so that the loop
// measures launch cost (what CUPTI's callbacks and activity records add to).
#include <cuda_runtime.h>

#include "launch_kernels.hpp"

namespace {
__global__ void empty_kernel() {}
}  // namespace

int launch_empty(int count) {
  for (int i = 0; i < count; ++i) empty_kernel<<<1, 32>>>();
  return static_cast<int>(cudaDeviceSynchronize());
}

int gpu_device_count() {
  int n = 0;
  return cudaGetDeviceCount(&n) == cudaSuccess ? n : 0;
}
