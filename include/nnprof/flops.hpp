// Exact floating-point operation and memory-traffic counts of the common neural-network
// operations, from their shapes, for annotating scopes (FLOP/s, GB/s, arithmetic intensity
// and the roofline).
//
// Conventions, the ones MLPerf, the PyTorch profiler and most papers use:
// - a multiply-add is 2 FLOPs; an addition, a multiplication, a division, a comparison, an
//   exp, a tanh or a square root is 1 FLOP each (transcendentals are counted once, whatever
//   their cost in instructions);
// - bytes are the compulsory traffic: every input read once and every output written once,
//   at `element_bytes` per element (4 for fp32, 2 for fp16/bf16). Real kernels move more
//   when operands do not fit in cache; the difference is what the roofline shows.
#pragma once

#include <cstdint>

#include "nnprof/config.hpp"

namespace nnprof {

/// Work of one operation: FLOPs and compulsory bytes moved.
struct OpCost {
  double flops = 0.0;
  double bytes = 0.0;

  /// FLOPs per byte; 0 when no bytes move.
  [[nodiscard]] double intensity() const noexcept { return bytes > 0.0 ? flops / bytes : 0.0; }
  OpCost& operator+=(const OpCost& o) noexcept {
    flops += o.flops;
    bytes += o.bytes;
    return *this;
  }
  friend OpCost operator+(OpCost a, const OpCost& b) noexcept { return a += b; }
  friend OpCost operator*(double times, OpCost c) noexcept { return {times * c.flops, times * c.bytes}; }
};

namespace flops {

/// C[m×n] = A[m×k] · B[k×n] (+ C when `accumulate`): 2·m·n·k FLOPs (plus m·n additions when
/// accumulating); reads A and B (and C when accumulating), writes C.
NNPROF_API OpCost matmul(std::uint64_t m, std::uint64_t n, std::uint64_t k, std::uint32_t element_bytes = 4,
                         bool accumulate = false);

/// `batch` independent matmuls of the same shape (batched GEMM).
NNPROF_API OpCost batched_matmul(std::uint64_t batch, std::uint64_t m, std::uint64_t n, std::uint64_t k,
                                 std::uint32_t element_bytes = 4);

/// y[out] = W[out×in] · x[in] + b for `tokens` rows (a linear layer): a matmul plus the bias.
NNPROF_API OpCost linear(std::uint64_t tokens, std::uint64_t in_features, std::uint64_t out_features,
                         bool bias = true, std::uint32_t element_bytes = 4);

struct Conv2dShape {
  std::uint64_t batch = 1, in_channels = 1, height = 1, width = 1;
  std::uint64_t out_channels = 1, kernel_h = 1, kernel_w = 1;
  std::uint64_t stride = 1, padding = 0, dilation = 1, groups = 1;
  bool bias = true;
};
/// Output height and width of a 2-D convolution (PyTorch's formula).
NNPROF_API std::uint64_t conv2d_out_height(const Conv2dShape& s);
NNPROF_API std::uint64_t conv2d_out_width(const Conv2dShape& s);
/// 2·(in_channels/groups)·kh·kw multiply-adds per output element (+1 for the bias); reads the
/// input, the weights and the bias, writes the output.
NNPROF_API OpCost conv2d(const Conv2dShape& s, std::uint32_t element_bytes = 4);

/// Softmax over `cols` for each of `rows` rows, numerically stable: max (cols−1 comparisons),
/// subtract and exp (2·cols), sum (cols−1), divide (cols): 5·cols − 2 per row.
NNPROF_API OpCost softmax(std::uint64_t rows, std::uint64_t cols, std::uint32_t element_bytes = 4);

/// Layer normalisation of `rows` rows of `cols` with scale and shift: mean (cols), variance
/// (3·cols: subtract, square, add), normalise (2·cols: subtract, multiply by 1/σ, plus one
/// sqrt and one division per row), affine (2·cols): 8·cols + 2 per row. Reads x, γ, β;
/// writes y.
NNPROF_API OpCost layernorm(std::uint64_t rows, std::uint64_t cols, bool affine = true,
                            std::uint32_t element_bytes = 4);

/// GELU, tanh approximation, on n elements: 0.5·x·(1 + tanh(√(2/π)·(x + 0.044715·x³))) is
/// 9 FLOPs per element (x³: 2, ·0.044715: 1, x + : 1, ·√(2/π): 1, tanh: 1, 1 + : 1, ·x: 1,
/// ·0.5: 1); reads x, writes y.
NNPROF_API OpCost gelu(std::uint64_t n, std::uint32_t element_bytes = 4);

/// An elementwise operation on n elements with `flops_per_element` FLOPs, `inputs` input
/// tensors and one output (add: 1 FLOP, 2 inputs; ReLU: 1, 1; scale: 1, 1).
NNPROF_API OpCost elementwise(std::uint64_t n, double flops_per_element, std::uint32_t inputs = 1,
                              std::uint32_t element_bytes = 4);

struct AttentionShape {
  std::uint64_t batch = 1, heads = 1;
  std::uint64_t query_len = 1;  ///< tokens attending (1 per generated token with a KV cache)
  std::uint64_t key_len = 1;    ///< tokens attended to (the KV cache length, or query_len)
  std::uint64_t head_dim = 1;
  bool causal = false;  ///< queries see only keys at or before their position (key_len ≥ query_len)
};
/// Scaled dot-product attention, softmax(Q·Kᵀ/√d)·V, without the projections: per head,
/// scores 2·q·k·d, scale q·k, softmax (5·k − 2 per row), weighted sum 2·q·k·d. With
/// `causal`, only the visible (query, key) pairs count: what an efficient kernel computes.
/// Reads Q, K, V; writes the output (the scores stay on chip, as in fused kernels).
NNPROF_API OpCost attention(const AttentionShape& s, std::uint32_t element_bytes = 4);

}  // namespace flops
}  // namespace nnprof
