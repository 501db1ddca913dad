// The kernels of nnprof-gpu-demo: an element-wise add, an activation, an in-place ReLU and a
// block reduction, each small and memory-bound, so that the profile has several distinct
// kernels next to cuBLAS's GEMM.
//
// The kernels are at global scope on purpose: their demangled names are then "vec_add(float
// const*, ...)" exactly, which the GPU tests match (an anonymous namespace would prefix them).
#include <cuda_runtime.h>

#include "gpu_demo.hpp"

__global__ void vec_add(const float* a, const float* b, float* c, int n) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) c[i] = a[i] + b[i];
}

__global__ void gelu(const float* x, float* y, int n) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  const float v = x[i];
  // 0.5 v (1 + tanh(sqrt(2/pi) (v + 0.044715 v^3))), as GPT-2 computes it.
  y[i] = 0.5f * v * (1.0f + tanhf(0.7978845608f * (v + 0.044715f * v * v * v)));
}

__global__ void relu(float* x, int n) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) x[i] = fmaxf(x[i], 0.0f);
}

constexpr int kReduceThreads = 256;

__global__ void reduce_sum(const float* x, float* sum, int n) {
  __shared__ float partial[kReduceThreads];
  float acc = 0.0f;
  // Grid-stride loop: a fixed grid covers any n.
  for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += blockDim.x * gridDim.x) acc += x[i];
  partial[threadIdx.x] = acc;
  __syncthreads();
  for (int s = blockDim.x / 2; s > 0; s /= 2) {
    if (static_cast<int>(threadIdx.x) < s) partial[threadIdx.x] += partial[threadIdx.x + s];
    __syncthreads();
  }
  if (threadIdx.x == 0) atomicAdd(sum, partial[0]);
}

namespace gpu_demo {

namespace {
constexpr int kThreads = 256;
int blocks_for(int n) { return (n + kThreads - 1) / kThreads; }
}  // namespace

cudaError_t launch_vec_add(const float* a, const float* b, float* c, int n, cudaStream_t stream) {
  vec_add<<<blocks_for(n), kThreads, 0, stream>>>(a, b, c, n);
  return cudaGetLastError();
}

cudaError_t launch_gelu(const float* x, float* y, int n, cudaStream_t stream) {
  gelu<<<blocks_for(n), kThreads, 0, stream>>>(x, y, n);
  return cudaGetLastError();
}

cudaError_t launch_relu(float* x, int n, cudaStream_t stream) {
  relu<<<blocks_for(n), kThreads, 0, stream>>>(x, n);
  return cudaGetLastError();
}

cudaError_t launch_reduce_sum(const float* x, float* sum, int n, cudaStream_t stream) {
  // 264 blocks: two per SM of an H100 SXM (132 SMs), enough to saturate its bandwidth.
  const int blocks = blocks_for(n) < 264 ? blocks_for(n) : 264;
  reduce_sum<<<blocks, kReduceThreads, 0, stream>>>(x, sum, n);
  return cudaGetLastError();
}

}  // namespace gpu_demo
