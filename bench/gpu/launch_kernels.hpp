// Kernels compiled by nvcc for the GPU benchmarks.
#pragma once

/// Launches an empty kernel `count` times on the default stream and waits for them; returns the
/// cudaError_t of the wait (0: success).
int launch_empty(int count);
/// CUDA devices usable by this process (0 without a driver).
int gpu_device_count();
