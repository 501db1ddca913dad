// The device side of the GPU demo (gpu_demo.cu, compiled by nvcc): kernel launches behind plain
// C++ functions, so that main.cpp, which holds the nnprof scopes, is compiled by the C++
// compiler with the project's warnings (nvcc would need nnprof's C++20 headers).
#pragma once

#include <cuda_runtime_api.h>

namespace gpu_demo {

/// c = a + b, n elements.
cudaError_t launch_vec_add(const float* a, const float* b, float* c, int n, cudaStream_t stream);
/// y = gelu(x) (tanh approximation), n elements.
cudaError_t launch_gelu(const float* x, float* y, int n, cudaStream_t stream);
/// x = max(x, 0) in place, n elements.
cudaError_t launch_relu(float* x, int n, cudaStream_t stream);
/// *sum += the sum of x's n elements (one atomicAdd per block: *sum must be zeroed first).
cudaError_t launch_reduce_sum(const float* x, float* sum, int n, cudaStream_t stream);

/// The demangled names CUPTI reports for the kernels above, without their parameter lists
/// (what a test matches as "vec_add(" at the start of a kernel name).
inline constexpr const char* kKernelNames[] = {"vec_add", "gelu", "relu", "reduce_sum"};

}  // namespace gpu_demo
