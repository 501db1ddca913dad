#include "collect/torch/op_cost.hpp"

#include <algorithm>

namespace nnprof::collect::torch_ops {

std::uint64_t OpInput::numel() const noexcept {
  std::uint64_t n = 1;
  for (std::size_t d = 0; d < dims; ++d) n *= static_cast<std::uint64_t>(std::max<std::int64_t>(size[d], 0));
  return n;
}

namespace {

using Inputs = std::span<const OpInput>;

const OpInput* tensor_at(Inputs in, std::size_t i) { return i < in.size() && in[i].is_tensor() ? &in[i] : nullptr; }

std::uint64_t dim(const OpInput& t, std::size_t d) { return static_cast<std::uint64_t>(std::max<std::int64_t>(t.size[d], 0)); }

double tensor_bytes(const OpInput* t) { return t == nullptr ? 0.0 : static_cast<double>(t->numel() * t->element_bytes); }

// torch's convention for products: 2·m·n·k (a multiply-add is two FLOPs), nothing for the
// added `self` of addmm/baddbmm.
OpCost product(std::uint64_t batch, std::uint64_t m, std::uint64_t n, std::uint64_t k, std::uint32_t eb) {
  return batch == 1 ? flops::matmul(m, n, k, eb) : flops::batched_matmul(batch, m, n, k, eb);
}

OpCost mm(Inputs in, std::size_t first) {
  const OpInput* a = tensor_at(in, first);
  const OpInput* b = tensor_at(in, first + 1);
  if (a == nullptr || b == nullptr || a->dims != 2 || b->dims != 2 || dim(*a, 1) != dim(*b, 0)) return {};
  return product(1, dim(*a, 0), dim(*b, 1), dim(*a, 1), a->element_bytes);
}

OpCost bmm(Inputs in, std::size_t first) {
  const OpInput* a = tensor_at(in, first);
  const OpInput* b = tensor_at(in, first + 1);
  if (a == nullptr || b == nullptr || a->dims != 3 || b->dims != 3 || dim(*a, 0) != dim(*b, 0) || dim(*a, 2) != dim(*b, 1))
    return {};
  return product(dim(*a, 0), dim(*a, 1), dim(*b, 2), dim(*a, 2), a->element_bytes);
}

// torch.matmul's rules: a 1-D operand is a row (first) or a column (second) vector; batch
// dimensions broadcast.
OpCost matmul(Inputs in) {
  const OpInput* a = tensor_at(in, 0);
  const OpInput* b = tensor_at(in, 1);
  if (a == nullptr || b == nullptr || a->dims == 0 || b->dims == 0) return {};
  const std::uint64_t k = dim(*a, a->dims - 1u);
  const std::uint64_t m = a->dims >= 2 ? dim(*a, a->dims - 2u) : 1;
  const std::uint64_t n = b->dims >= 2 ? dim(*b, b->dims - 1u) : 1;
  const std::uint64_t k_b = b->dims >= 2 ? dim(*b, b->dims - 2u) : dim(*b, 0);
  if (k != k_b) return {};
  const std::size_t batch_a = a->dims > 2 ? a->dims - 2u : 0, batch_b = b->dims > 2 ? b->dims - 2u : 0;
  std::uint64_t batch = 1;
  for (std::size_t i = 0; i < std::max(batch_a, batch_b); ++i) {
    const std::uint64_t da = i < batch_a ? dim(*a, batch_a - 1 - i) : 1;
    const std::uint64_t db = i < batch_b ? dim(*b, batch_b - 1 - i) : 1;
    if (da != db && da != 1 && db != 1) return {};
    batch *= std::max(da, db);
  }
  return product(batch, m, n, k, a->element_bytes);
}

OpCost linear(Inputs in) {
  const OpInput* x = tensor_at(in, 0);
  const OpInput* w = tensor_at(in, 1);
  if (x == nullptr || w == nullptr || x->dims == 0 || w->dims != 2 || dim(*x, x->dims - 1u) != dim(*w, 1)) return {};
  const std::uint64_t in_features = dim(*w, 1);
  const std::uint64_t tokens = in_features == 0 ? 0 : x->numel() / in_features;
  return flops::linear(tokens, in_features, dim(*w, 0), tensor_at(in, 2) != nullptr, x->element_bytes);
}

// conv1d/2d/3d(input, weight, bias, stride, padding, dilation, groups);
// convolution/_convolution(input, weight, bias, stride, padding, dilation, transposed,
// output_padding, groups, ...). torch's count: 2 · N · (output positions) · (kernel
// positions) · C_in · C_out / groups, the bias not counted.
OpCost convolution(Inputs in, bool has_transposed_flag) {
  const OpInput* x = tensor_at(in, 0);
  const OpInput* w = tensor_at(in, 1);
  if (x == nullptr || w == nullptr || x->dims < 3 || w->dims != x->dims) return {};
  const std::size_t spatial = x->dims - 2u;
  const auto list_at = [&](std::size_t i, std::int64_t fallback, std::size_t d) -> std::int64_t {
    if (i >= in.size() || in[i].kind != OpInput::Kind::IntList || in[i].dims == 0) return fallback;
    return in[i].size[std::min<std::size_t>(d, in[i].dims - 1u)];  // one value stands for every dimension
  };
  const bool transposed = has_transposed_flag && in.size() > 6 && in[6].kind == OpInput::Kind::Int && in[6].integer != 0;
  const std::size_t groups_at = has_transposed_flag ? 8 : 6;
  const std::int64_t groups = groups_at < in.size() && in[groups_at].kind == OpInput::Kind::Int ? in[groups_at].integer : 1;
  if (groups <= 0) return {};
  const bool pad_same = in.size() > 4 && in[4].kind == OpInput::Kind::String && in[4].text == "same";
  std::uint64_t positions = 1, kernel = 1;
  for (std::size_t d = 0; d < spatial; ++d) {
    const std::int64_t size = x->size[2 + d], k = w->size[2 + d];
    const std::int64_t stride = list_at(3, 1, d), dilation = list_at(5, 1, d);
    const std::int64_t padding = in.size() > 4 && in[4].kind == OpInput::Kind::String ? 0 : list_at(4, 0, d);
    if (stride <= 0 || dilation <= 0 || k <= 0) return {};
    std::int64_t out = 0;
    if (transposed)
      out = size;  // counted per input position: each meets the whole kernel
    else if (pad_same)
      out = size;
    else
      out = (size + 2 * padding - dilation * (k - 1) - 1) / stride + 1;
    if (out <= 0) return {};
    positions *= static_cast<std::uint64_t>(out);
    kernel *= static_cast<std::uint64_t>(k);
  }
  const std::uint64_t batch = dim(*x, 0);
  // weight: [C_out, C_in/groups, k...] (transposed: [C_in, C_out/groups, k...]).
  const std::uint64_t channel_pairs = dim(*w, 0) * dim(*w, 1);
  OpCost c;
  c.flops = 2.0 * static_cast<double>(batch) * static_cast<double>(positions) * static_cast<double>(kernel) *
            static_cast<double>(channel_pairs);
  const std::uint64_t out_channels = transposed ? dim(*w, 1) * static_cast<std::uint64_t>(groups) : dim(*w, 0);
  const std::uint64_t out_positions = transposed ? 0 : positions;  // a transposed conv's output size needs output_padding
  c.bytes = tensor_bytes(x) + tensor_bytes(w) + tensor_bytes(tensor_at(in, 2)) +
            static_cast<double>(batch * out_channels * out_positions * x->element_bytes);
  return c;
}

std::int64_t normalise_dim(std::int64_t d, std::size_t rank) { return d < 0 ? d + static_cast<std::int64_t>(rank) : d; }

OpCost softmax(Inputs in) {
  const OpInput* x = tensor_at(in, 0);
  if (x == nullptr || x->dims == 0 || in.size() < 2 || in[1].kind != OpInput::Kind::Int) return {};
  const std::int64_t d = normalise_dim(in[1].integer, x->dims);
  if (d < 0 || d >= x->dims) return {};
  const std::uint64_t cols = dim(*x, static_cast<std::size_t>(d));
  return cols == 0 ? OpCost{} : flops::softmax(x->numel() / cols, cols, x->element_bytes);
}

OpCost layer_norm(Inputs in) {
  const OpInput* x = tensor_at(in, 0);
  if (x == nullptr || in.size() < 2 || in[1].kind != OpInput::Kind::IntList || in[1].truncated) return {};
  std::uint64_t cols = 1;
  for (std::size_t i = 0; i < in[1].dims; ++i) cols *= static_cast<std::uint64_t>(std::max<std::int64_t>(in[1].size[i], 0));
  if (cols == 0) return {};
  return flops::layernorm(x->numel() / cols, cols, tensor_at(in, 2) != nullptr, x->element_bytes);
}

// add/sub/mul/div, Tensor op Tensor or Tensor op Scalar: one FLOP per output element.
OpCost elementwise(Inputs in) {
  const OpInput* a = tensor_at(in, 0);
  if (a == nullptr) return {};
  const OpInput* b = tensor_at(in, 1);
  std::uint64_t n = a->numel();
  if (b != nullptr) {
    // The broadcast output: sizes aligned from the right, 1 stretching to the other's size.
    n = 1;
    const std::size_t rank = std::max(a->dims, b->dims);
    for (std::size_t i = 0; i < rank; ++i) {
      const std::uint64_t da = i < a->dims ? dim(*a, a->dims - 1 - i) : 1;
      const std::uint64_t db = i < b->dims ? dim(*b, b->dims - 1 - i) : 1;
      if (da != db && da != 1 && db != 1) return {};
      n *= std::max(da, db);
    }
  }
  OpCost c = flops::elementwise(n, 1.0, 1, a->element_bytes);
  c.bytes = tensor_bytes(a) + tensor_bytes(b) + static_cast<double>(n * a->element_bytes);
  return c;
}

}  // namespace

OpCost op_cost(std::string_view op, std::span<const OpInput> inputs) noexcept {
  if (op.substr(0, 6) != "aten::") return {};
  op.remove_prefix(6);
  if (!op.empty() && op.back() == '_') op.remove_suffix(1);  // in-place variants cost the same
  if (op == "mm") return mm(inputs, 0);
  if (op == "addmm") {
    OpCost c = mm(inputs, 1);
    if (c.flops > 0) c.bytes += tensor_bytes(tensor_at(inputs, 0));
    return c;
  }
  if (op == "bmm") return bmm(inputs, 0);
  if (op == "baddbmm") {
    OpCost c = bmm(inputs, 1);
    if (c.flops > 0) c.bytes += tensor_bytes(tensor_at(inputs, 0));
    return c;
  }
  if (op == "matmul") return matmul(inputs);
  if (op == "linear") return linear(inputs);
  if (op == "conv1d" || op == "conv2d" || op == "conv3d") return convolution(inputs, false);
  if (op == "convolution" || op == "_convolution") return convolution(inputs, true);
  if (op == "softmax" || op == "_softmax") return softmax(inputs);
  if (op == "layer_norm" || op == "native_layer_norm") return layer_norm(inputs);
  if (op == "gelu") {
    const OpInput* x = tensor_at(inputs, 0);
    return x == nullptr ? OpCost{} : flops::gelu(x->numel(), x->element_bytes);
  }
  if (op == "add" || op == "sub" || op == "mul" || op == "div") return elementwise(inputs);
  return {};
}

}  // namespace nnprof::collect::torch_ops
