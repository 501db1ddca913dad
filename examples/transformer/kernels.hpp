// The numeric kernels of the built-in transformer: matmul, softmax, GELU and layer norm,
// each in a scalar reference version and in SIMD versions (AVX2+FMA, AVX-512F) chosen at
// run time from what the CPU supports. Every SIMD version is tested against the scalar one.
//
// Matrices are row-major with explicit leading dimensions (elements between the starts of
// consecutive rows), so that a head's slice of a wider matrix (the KV cache) is used in place.
#pragma once

#include <cstdint>

namespace nnprof::transformer::kernels {

/// An instruction set a kernel is written for.
enum class Isa : std::uint8_t { Scalar, Avx2, Avx512 };

/// "scalar", "avx2+fma", "avx512f".
const char* to_string(Isa isa) noexcept;

/// The widest instruction set this CPU runs (cpuid, at first call).
Isa best_isa() noexcept;

/// The instruction set the kernels below use unless told otherwise: best_isa(), or the one
/// given to set_active_isa (tests and benchmarks compare them).
Isa active_isa() noexcept;

/// Makes every kernel use `isa`. Throws std::invalid_argument when this CPU cannot run it.
void set_active_isa(Isa isa);

/// C[m×n] = A[m×k] · B[k×n], or C += A·B when `accumulate`.
///
/// Speed: m = 1 (decoding) streams B once; many rows use a blocked, packed kernel. A B whose
/// rows lie a multiple of 4 KiB apart (ldb a multiple of 1024, e.g. 2048 or 3072) maps every
/// row to the same L1 sets and is read 10–40% slower here: weights stored with ldb = n + 16 avoid it.
void matmul(int m, int n, int k, const float* a, int lda, const float* b, int ldb, float* c, int ldc,
            bool accumulate = false);
void matmul(Isa isa, int m, int n, int k, const float* a, int lda, const float* b, int ldb, float* c, int ldc,
            bool accumulate = false);

/// C[m×n] = A[m×k] · B[n×k]ᵀ (B given by rows: attention scores q·kᵀ against the KV cache).
void matmul_bt(int m, int n, int k, const float* a, int lda, const float* b, int ldb, float* c, int ldc);
void matmul_bt(Isa isa, int m, int n, int k, const float* a, int lda, const float* b, int ldb, float* c,
               int ldc);

/// y[i] += bias[i] for i < n.
void add_bias(float* y, const float* bias, int n);
void add_bias(Isa isa, float* y, const float* bias, int n);

/// y[i] += x[i] for i < n (residual connections).
void add_inplace(float* y, const float* x, int n);
void add_inplace(Isa isa, float* y, const float* x, int n);

/// In-place numerically stable softmax of x[0..n): subtracts the maximum first.
void softmax(float* x, int n);
void softmax(Isa isa, float* x, int n);

/// In-place GELU, tanh approximation: 0.5·x·(1 + tanh(√(2/π)·(x + 0.044715·x³))).
void gelu(float* x, int n);
void gelu(Isa isa, float* x, int n);

/// y = (x − mean) / sqrt(var + eps) · gamma + beta over x[0..n) (biased variance).
void layernorm(const float* x, const float* gamma, const float* beta, float* y, int n, float eps = 1e-5f);
void layernorm(Isa isa, const float* x, const float* gamma, const float* beta, float* y, int n,
               float eps = 1e-5f);

}  // namespace nnprof::transformer::kernels
