// FLOP and byte counts of common operations; the conventions are in include/nnprof/flops.hpp.
#include "nnprof/flops.hpp"

#include <algorithm>

#include "nnprof/error.hpp"

namespace nnprof::flops {

namespace {
double d(std::uint64_t v) { return static_cast<double>(v); }
}  // namespace

OpCost matmul(std::uint64_t m, std::uint64_t n, std::uint64_t k, std::uint32_t element_bytes, bool accumulate) {
  OpCost c;
  c.flops = 2.0 * d(m) * d(n) * d(k) + (accumulate ? d(m) * d(n) : 0.0);
  c.bytes = (d(m) * d(k) + d(k) * d(n) + d(m) * d(n) * (accumulate ? 2.0 : 1.0)) * element_bytes;
  return c;
}

OpCost batched_matmul(std::uint64_t batch, std::uint64_t m, std::uint64_t n, std::uint64_t k,
                      std::uint32_t element_bytes) {
  return d(batch) * matmul(m, n, k, element_bytes);
}

OpCost linear(std::uint64_t tokens, std::uint64_t in_features, std::uint64_t out_features, bool bias,
              std::uint32_t element_bytes) {
  OpCost c = matmul(tokens, out_features, in_features, element_bytes);
  if (bias) {
    c.flops += d(tokens) * d(out_features);
    c.bytes += d(out_features) * element_bytes;
  }
  return c;
}

namespace {
std::uint64_t conv_out(std::uint64_t in, std::uint64_t kernel, const Conv2dShape& s) {
  if (s.stride == 0 || s.dilation == 0 || kernel == 0) throw Error("conv2d: stride, dilation and kernel must be positive");
  const std::uint64_t span = s.dilation * (kernel - 1) + 1;
  const std::uint64_t padded = in + 2 * s.padding;
  if (padded < span) return 0;
  return (padded - span) / s.stride + 1;
}
}  // namespace

std::uint64_t conv2d_out_height(const Conv2dShape& s) { return conv_out(s.height, s.kernel_h, s); }
std::uint64_t conv2d_out_width(const Conv2dShape& s) { return conv_out(s.width, s.kernel_w, s); }

OpCost conv2d(const Conv2dShape& s, std::uint32_t element_bytes) {
  if (s.groups == 0 || s.in_channels % s.groups != 0 || s.out_channels % s.groups != 0)
    throw Error("conv2d: groups must divide both in_channels and out_channels");
  const double in_per_group = d(s.in_channels / s.groups);
  const double outputs = d(s.batch) * d(s.out_channels) * d(conv2d_out_height(s)) * d(conv2d_out_width(s));
  const double weights = d(s.out_channels) * in_per_group * d(s.kernel_h) * d(s.kernel_w);
  OpCost c;
  c.flops = outputs * (2.0 * in_per_group * d(s.kernel_h) * d(s.kernel_w) + (s.bias ? 1.0 : 0.0));
  c.bytes = (d(s.batch) * d(s.in_channels) * d(s.height) * d(s.width) + weights + (s.bias ? d(s.out_channels) : 0.0) +
             outputs) *
            element_bytes;
  return c;
}

namespace {
// Softmax of one row of `cols`: max, subtract-and-exp, sum, divide.
double softmax_row_flops(double cols) { return cols == 0.0 ? 0.0 : 5.0 * cols - 2.0; }
}  // namespace

OpCost softmax(std::uint64_t rows, std::uint64_t cols, std::uint32_t element_bytes) {
  return {d(rows) * softmax_row_flops(d(cols)), 2.0 * d(rows) * d(cols) * element_bytes};
}

OpCost layernorm(std::uint64_t rows, std::uint64_t cols, bool affine, std::uint32_t element_bytes) {
  const double per_row = (affine ? 8.0 : 6.0) * d(cols) + 2.0;
  const double params = affine ? 2.0 * d(cols) : 0.0;
  return {d(rows) * per_row, (2.0 * d(rows) * d(cols) + params) * element_bytes};
}

OpCost gelu(std::uint64_t n, std::uint32_t element_bytes) { return elementwise(n, 9.0, 1, element_bytes); }

OpCost elementwise(std::uint64_t n, double flops_per_element, std::uint32_t inputs, std::uint32_t element_bytes) {
  return {d(n) * flops_per_element, d(n) * (inputs + 1.0) * element_bytes};
}

OpCost attention(const AttentionShape& s, std::uint32_t element_bytes) {
  if (s.causal && s.key_len < s.query_len)
    throw Error("attention: a causal attention needs key_len >= query_len (the queries are the last key_len positions)");
  const double heads = d(s.batch) * d(s.heads), dim = d(s.head_dim);
  // Per query row with c visible keys: scores 2·c·d, scale c, softmax 5c − 2, weighted sum 2·c·d.
  double flops = 0.0;
  if (!s.causal) {
    const double c = d(s.key_len);
    flops = d(s.query_len) * (4.0 * c * dim + c + softmax_row_flops(c));
  } else {
    // Query i (0-based) sits at position key_len − query_len + i and sees that many keys + 1.
    const std::uint64_t first = s.key_len - s.query_len + 1;
    for (std::uint64_t i = 0; i < s.query_len; ++i) {
      const double c = d(first + i);
      flops += 4.0 * c * dim + c + softmax_row_flops(c);
    }
  }
  OpCost cost;
  cost.flops = heads * flops;
  cost.bytes = heads * (2.0 * d(s.query_len) + 2.0 * d(s.key_len)) * dim * element_bytes;
  return cost;
}

}  // namespace nnprof::flops
