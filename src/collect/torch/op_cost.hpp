// FLOPs and compulsory bytes of a PyTorch operator call, from its inputs' shapes.
//
// Torch-free on purpose: the observer (op_observer.cpp) turns torch's IValues into OpInputs,
// and this file applies nnprof/flops.hpp's formulas, so the counting is tested without torch.
//
// Conventions, where they differ from nnprof/flops.hpp's own: for the operators the PyTorch
// profiler's `with_flops` counts (mm, addmm, bmm, baddbmm, conv*), the count is torch's, so
// that the two agree exactly: 2·m·n·k per product, the bias or `self` term of addmm/baddbmm
// and a convolution's bias not counted. Elementwise add/mul/div count one FLOP per element of
// the broadcast output (torch counts the first input's elements, which undercounts a
// broadcast).
#pragma once

#include <array>
#include <cstdint>
#include <span>
#include <string_view>

#include "nnprof/flops.hpp"

namespace nnprof::collect::torch_ops {

/// One input of an operator call, as much of it as the counting needs.
struct OpInput {
  enum class Kind : std::uint8_t { Tensor, IntList, Int, Double, String, None, Other };
  static constexpr std::size_t kMaxDims = 8;
  Kind kind = Kind::Other;
  std::uint8_t dims = 0;                    ///< Tensor: rank; IntList: length (≤ kMaxDims kept)
  std::array<std::int64_t, kMaxDims> size{};  ///< Tensor: its sizes; IntList: its values
  std::uint32_t element_bytes = 0;          ///< Tensor: bytes per element
  std::int64_t integer = 0;                 ///< Int
  std::string_view text;                    ///< String (conv's padding "same"/"valid")
  bool truncated = false;                   ///< rank or list longer than kMaxDims

  [[nodiscard]] bool is_tensor() const noexcept { return kind == Kind::Tensor && !truncated; }
  [[nodiscard]] std::uint64_t numel() const noexcept;
};

/// The cost of one call of `op` (torch's name: "aten::addmm"), or {0, 0} for an operator
/// nnprof does not count or inputs it does not recognise.
[[nodiscard]] OpCost op_cost(std::string_view op, std::span<const OpInput> inputs) noexcept;

}  // namespace nnprof::collect::torch_ops
