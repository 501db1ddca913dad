// Dispatch to the kernels of the instruction set in use, and the scalar reference versions.
//
// The scalar kernels are the oracle the SIMD ones are tested against, and what a CPU without
// AVX2 runs: written the way a plain C++ user writes them (float accumulators, the textbook
// loop order), so that they are obviously right rather than fast.
#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstddef>
#include <new>
#include <stdexcept>
#include <string>

#include "kernels.hpp"
#include "kernels_impl.hpp"

namespace nnprof::transformer::kernels {

namespace detail {

namespace {

void matmul_scalar(int m, int n, int k, const float* a, int lda, const float* b, int ldb, float* c, int ldc,
                   bool accumulate) {
  for (int i = 0; i < m; ++i)
    for (int j = 0; j < n; ++j) {
      float sum = 0.0f;
      for (int p = 0; p < k; ++p) sum += a[static_cast<long>(i) * lda + p] * b[static_cast<long>(p) * ldb + j];
      float& out = c[static_cast<long>(i) * ldc + j];
      out = accumulate ? out + sum : sum;
    }
}

void matmul_bt_scalar(int m, int n, int k, const float* a, int lda, const float* b, int ldb, float* c, int ldc) {
  for (int i = 0; i < m; ++i)
    for (int j = 0; j < n; ++j) {
      float sum = 0.0f;
      for (int p = 0; p < k; ++p) sum += a[static_cast<long>(i) * lda + p] * b[static_cast<long>(j) * ldb + p];
      c[static_cast<long>(i) * ldc + j] = sum;
    }
}

void add_inplace_scalar(float* y, const float* x, int n) {
  for (int i = 0; i < n; ++i) y[i] += x[i];
}

void softmax_scalar(float* x, int n) {
  if (n <= 0) return;
  float mx = x[0];
  for (int i = 1; i < n; ++i) mx = std::max(mx, x[i]);
  float sum = 0.0f;
  for (int i = 0; i < n; ++i) {
    x[i] = std::exp(x[i] - mx);
    sum += x[i];
  }
  for (int i = 0; i < n; ++i) x[i] /= sum;
}

void gelu_scalar(float* x, int n) {
  const float c = std::sqrt(2.0f / 3.14159265358979323846f);
  for (int i = 0; i < n; ++i) {
    const float v = x[i];
    x[i] = 0.5f * v * (1.0f + std::tanh(c * (v + 0.044715f * v * v * v)));
  }
}

void layernorm_scalar(const float* x, const float* gamma, const float* beta, float* y, int n, float eps) {
  if (n <= 0) return;
  float sum = 0.0f;
  for (int i = 0; i < n; ++i) sum += x[i];
  const float mean = sum / static_cast<float>(n);
  float sq = 0.0f;
  for (int i = 0; i < n; ++i) sq += (x[i] - mean) * (x[i] - mean);
  const float rstd = 1.0f / std::sqrt(sq / static_cast<float>(n) + eps);
  for (int i = 0; i < n; ++i) y[i] = (x[i] - mean) * rstd * gamma[i] + beta[i];
}

constexpr Table kScalar{matmul_scalar,      matmul_bt_scalar, add_inplace_scalar, add_inplace_scalar,
                        softmax_scalar,     gelu_scalar,      layernorm_scalar};

// Per-thread packing buffers of the blocked matmul, grown on demand and freed at thread exit.
struct ScratchBuffers {
  float* data[2] = {nullptr, nullptr};
  std::size_t capacity[2] = {0, 0};
  ScratchBuffers() = default;
  ScratchBuffers(const ScratchBuffers&) = delete;
  ScratchBuffers& operator=(const ScratchBuffers&) = delete;
  ~ScratchBuffers() {
    for (float* p : data) ::operator delete[](p, std::align_val_t{64});
  }
};

}  // namespace

const Table& scalar_table() noexcept { return kScalar; }

float* scratch(Scratch slot, std::size_t floats) {
  thread_local ScratchBuffers buffers;
  const auto s = static_cast<std::size_t>(slot);
  if (buffers.capacity[s] < floats) {
    ::operator delete[](buffers.data[s], std::align_val_t{64});
    buffers.data[s] = nullptr;
    buffers.capacity[s] = 0;
    // Round up to 64 KiB so that a sequence of slightly growing shapes reallocates rarely.
    const std::size_t grown = (floats + 16383) / 16384 * 16384;
    buffers.data[s] = static_cast<float*>(::operator new[](grown * sizeof(float), std::align_val_t{64}));
    buffers.capacity[s] = grown;
  }
  return buffers.data[s];
}

}  // namespace detail

namespace {

bool cpu_runs(Isa isa) noexcept {
  // The AVX-512 file is also built with -mavx2 -mfma (its 256/128-bit code may use them);
  // every AVX-512F CPU has both, but checking costs nothing. __builtin_cpu_supports also
  // checks that the OS saves the wider registers (XCR0).
  static const bool avx2 = [] {
    __builtin_cpu_init();
    return __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
  }();
  static const bool avx512 = avx2 && __builtin_cpu_supports("avx512f");
  switch (isa) {
    case Isa::Scalar: return true;
    case Isa::Avx2: return avx2;
    case Isa::Avx512: return avx512;
  }
  return false;
}

// -1 until first use: then best_isa(), or what set_active_isa chose.
std::atomic<int> g_active{-1};

const detail::Table& table_of(Isa isa) noexcept {
  switch (isa) {
    case Isa::Avx512: return detail::avx512_table();
    case Isa::Avx2: return detail::avx2_table();
    case Isa::Scalar: break;
  }
  return detail::scalar_table();
}

void require(Isa isa) {
  if (!cpu_runs(isa))
    throw std::invalid_argument(std::string("nnprof kernels: this CPU cannot run the ") + to_string(isa) +
                                " kernels (the widest it runs is " + to_string(best_isa()) + ")");
}

// The table for an explicitly requested ISA: checked, since running AVX-512 code on a CPU
// without it would kill the process with SIGILL.
const detail::Table& checked(Isa isa) {
  require(isa);
  return table_of(isa);
}

const detail::Table& active() noexcept { return table_of(active_isa()); }

}  // namespace

const char* to_string(Isa isa) noexcept {
  switch (isa) {
    case Isa::Scalar: return "scalar";
    case Isa::Avx2: return "avx2+fma";
    case Isa::Avx512: return "avx512f";
  }
  return "unknown";
}

Isa best_isa() noexcept {
  static const Isa best = cpu_runs(Isa::Avx512) ? Isa::Avx512 : cpu_runs(Isa::Avx2) ? Isa::Avx2 : Isa::Scalar;
  return best;
}

Isa active_isa() noexcept {
  int v = g_active.load(std::memory_order_relaxed);
  if (v < 0) {
    // Every thread that races here computes the same value.
    v = static_cast<int>(best_isa());
    int expected = -1;
    if (!g_active.compare_exchange_strong(expected, v, std::memory_order_relaxed)) v = expected;
  }
  return static_cast<Isa>(v);
}

void set_active_isa(Isa isa) {
  require(isa);
  g_active.store(static_cast<int>(isa), std::memory_order_relaxed);
}

void matmul(int m, int n, int k, const float* a, int lda, const float* b, int ldb, float* c, int ldc, bool accumulate) {
  active().matmul(m, n, k, a, lda, b, ldb, c, ldc, accumulate);
}
void matmul(Isa isa, int m, int n, int k, const float* a, int lda, const float* b, int ldb, float* c, int ldc,
            bool accumulate) {
  checked(isa).matmul(m, n, k, a, lda, b, ldb, c, ldc, accumulate);
}

void matmul_bt(int m, int n, int k, const float* a, int lda, const float* b, int ldb, float* c, int ldc) {
  active().matmul_bt(m, n, k, a, lda, b, ldb, c, ldc);
}
void matmul_bt(Isa isa, int m, int n, int k, const float* a, int lda, const float* b, int ldb, float* c, int ldc) {
  checked(isa).matmul_bt(m, n, k, a, lda, b, ldb, c, ldc);
}

void add_bias(float* y, const float* bias, int n) { active().add_bias(y, bias, n); }
void add_bias(Isa isa, float* y, const float* bias, int n) { checked(isa).add_bias(y, bias, n); }

void add_inplace(float* y, const float* x, int n) { active().add_inplace(y, x, n); }
void add_inplace(Isa isa, float* y, const float* x, int n) { checked(isa).add_inplace(y, x, n); }

void softmax(float* x, int n) { active().softmax(x, n); }
void softmax(Isa isa, float* x, int n) { checked(isa).softmax(x, n); }

void gelu(float* x, int n) { active().gelu(x, n); }
void gelu(Isa isa, float* x, int n) { checked(isa).gelu(x, n); }

void layernorm(const float* x, const float* gamma, const float* beta, float* y, int n, float eps) {
  active().layernorm(x, gamma, beta, y, n, eps);
}
void layernorm(Isa isa, const float* x, const float* gamma, const float* beta, float* y, int n, float eps) {
  checked(isa).layernorm(x, gamma, beta, y, n, eps);
}

}  // namespace nnprof::transformer::kernels
