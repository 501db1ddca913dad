// The FLOPs and bytes nnprof counts for PyTorch operators from their inputs (torch-free: the
// observer's reading of torch's inputs is tested in test_torch_ops.cpp).
#include <gtest/gtest.h>

#include <initializer_list>
#include <vector>

#include "collect/torch/op_cost.hpp"

namespace {

using nnprof::collect::torch_ops::op_cost;
using nnprof::collect::torch_ops::OpInput;

OpInput tensor(std::initializer_list<std::int64_t> sizes, std::uint32_t element_bytes = 4) {
  OpInput in;
  in.kind = OpInput::Kind::Tensor;
  in.element_bytes = element_bytes;
  for (std::int64_t s : sizes) in.size[in.dims++] = s;
  return in;
}
OpInput ints(std::initializer_list<std::int64_t> values) {
  OpInput in = tensor(values);
  in.kind = OpInput::Kind::IntList;
  in.element_bytes = 0;
  return in;
}
OpInput integer(std::int64_t v) {
  OpInput in;
  in.kind = OpInput::Kind::Int;
  in.integer = v;
  return in;
}
OpInput none() {
  OpInput in;
  in.kind = OpInput::Kind::None;
  return in;
}
OpInput other() { return OpInput{}; }

TEST(TorchOpCost, ProductsCountTwoFlopsPerMultiplyAddAsTorchDoes) {
  const std::vector<OpInput> mm{tensor({32, 64}), tensor({64, 128})};
  EXPECT_DOUBLE_EQ(op_cost("aten::mm", mm).flops, 2.0 * 32 * 64 * 128);
  EXPECT_DOUBLE_EQ(op_cost("aten::mm", mm).bytes, 4.0 * (32 * 64 + 64 * 128 + 32 * 128));
  // addmm(bias, mat1, mat2, beta, alpha): the bias is read, its addition not counted (torch's convention).
  const std::vector<OpInput> addmm{tensor({128}), tensor({32, 64}), tensor({64, 128}), other(), other()};
  EXPECT_DOUBLE_EQ(op_cost("aten::addmm", addmm).flops, 2.0 * 32 * 64 * 128);
  EXPECT_DOUBLE_EQ(op_cost("aten::addmm", addmm).bytes, 4.0 * (32 * 64 + 64 * 128 + 32 * 128 + 128));
  const std::vector<OpInput> bmm{tensor({8, 16, 32}), tensor({8, 32, 4})};
  EXPECT_DOUBLE_EQ(op_cost("aten::bmm", bmm).flops, 2.0 * 8 * 16 * 32 * 4);
  const std::vector<OpInput> baddbmm{tensor({8, 16, 4}), tensor({8, 16, 32}), tensor({8, 32, 4})};
  EXPECT_DOUBLE_EQ(op_cost("aten::baddbmm", baddbmm).flops, 2.0 * 8 * 16 * 32 * 4);
  // Half precision moves half the bytes for the same FLOPs.
  const std::vector<OpInput> half{tensor({32, 64}, 2), tensor({64, 128}, 2)};
  EXPECT_DOUBLE_EQ(op_cost("aten::mm", half).bytes, op_cost("aten::mm", mm).bytes / 2);
}

TEST(TorchOpCost, MatmulBroadcastsBatchesAndTreatsVectorsAsRowsAndColumns) {
  const std::vector<OpInput> batched{tensor({2, 3, 16, 32}), tensor({32, 8})};
  EXPECT_DOUBLE_EQ(op_cost("aten::matmul", batched).flops, 2.0 * 6 * 16 * 8 * 32);
  const std::vector<OpInput> broadcast{tensor({2, 1, 16, 32}), tensor({5, 32, 8})};
  EXPECT_DOUBLE_EQ(op_cost("aten::matmul", broadcast).flops, 2.0 * 10 * 16 * 8 * 32);
  const std::vector<OpInput> dot{tensor({32}), tensor({32})};
  EXPECT_DOUBLE_EQ(op_cost("aten::matmul", dot).flops, 2.0 * 32);
  const std::vector<OpInput> mismatch{tensor({16, 32}), tensor({31, 8})};
  EXPECT_EQ(op_cost("aten::matmul", mismatch).flops, 0.0);
}

TEST(TorchOpCost, LinearCountsTokensTimesFeatures) {
  const std::vector<OpInput> with_bias{tensor({4, 10, 64}), tensor({128, 64}), tensor({128})};
  EXPECT_DOUBLE_EQ(op_cost("aten::linear", with_bias).flops, 2.0 * 40 * 64 * 128 + 40 * 128);
  const std::vector<OpInput> without{tensor({4, 10, 64}), tensor({128, 64}), none()};
  EXPECT_DOUBLE_EQ(op_cost("aten::linear", without).flops, 2.0 * 40 * 64 * 128);
}

TEST(TorchOpCost, ConvolutionIsTorchsCountWithStridePaddingDilationAndGroups) {
  // conv2d(input, weight, bias, stride, padding, dilation, groups): 3→16 channels, 3×3, stride 2, padding 1.
  const std::vector<OpInput> conv{tensor({2, 3, 32, 32}), tensor({16, 3, 3, 3}), tensor({16}),
                                  ints({2, 2}),           ints({1, 1}),           ints({1, 1}), integer(1)};
  const double out = 16 * 16;  // (32 + 2 − 2 − 1)/2 + 1
  EXPECT_DOUBLE_EQ(op_cost("aten::conv2d", conv).flops, 2.0 * 2 * out * 9 * 3 * 16);
  // _convolution(input, weight, bias, stride, padding, dilation, transposed, output_padding, groups, ...)
  const std::vector<OpInput> grouped{tensor({1, 8, 10, 10}), tensor({8, 2, 3, 3}), none(), ints({1}), ints({0}),
                                     ints({1}),              integer(0),           ints({0}), integer(4)};
  EXPECT_DOUBLE_EQ(op_cost("aten::_convolution", grouped).flops, 2.0 * 1 * 64 * 9 * 8 * 2);
  const std::vector<OpInput> conv1d{tensor({1, 4, 100}), tensor({6, 4, 5}), none(), ints({1}), ints({2}), ints({3}),
                                    integer(1)};
  EXPECT_DOUBLE_EQ(op_cost("aten::conv1d", conv1d).flops, 2.0 * 92 * 5 * 4 * 6);  // 100 + 4 − 12 − 1 + 1
  OpInput same;
  same.kind = OpInput::Kind::String;
  same.text = "same";
  const std::vector<OpInput> padded{tensor({1, 3, 9, 9}), tensor({4, 3, 3, 3}), none(), ints({1, 1}), same, ints({1, 1}),
                                    integer(1)};
  EXPECT_DOUBLE_EQ(op_cost("aten::conv2d", padded).flops, 2.0 * 81 * 9 * 3 * 4);
}

TEST(TorchOpCost, NormalisationsActivationsAndElementwiseUseTheFlopsFormulas) {
  const std::vector<OpInput> softmax{tensor({4, 10, 50}), integer(-1), other()};
  EXPECT_DOUBLE_EQ(op_cost("aten::softmax", softmax).flops, nnprof::flops::softmax(40, 50).flops);
  EXPECT_DOUBLE_EQ(op_cost("aten::_softmax", softmax).flops, nnprof::flops::softmax(40, 50).flops);
  const std::vector<OpInput> norm{tensor({4, 10, 64}), ints({64}), tensor({64}), tensor({64}), other()};
  EXPECT_DOUBLE_EQ(op_cost("aten::native_layer_norm", norm).flops, nnprof::flops::layernorm(40, 64).flops);
  const std::vector<OpInput> gelu{tensor({4, 10, 64}), other()};
  EXPECT_DOUBLE_EQ(op_cost("aten::gelu", gelu).flops, nnprof::flops::gelu(2560).flops);
  // One FLOP per element of the broadcast output, in place or not.
  const std::vector<OpInput> add{tensor({32, 1}), tensor({32, 64}), other()};
  EXPECT_DOUBLE_EQ(op_cost("aten::add", add).flops, 32.0 * 64);
  EXPECT_DOUBLE_EQ(op_cost("aten::mul_", add).flops, 32.0 * 64);
  const std::vector<OpInput> scalar{tensor({10, 10}), other()};
  EXPECT_DOUBLE_EQ(op_cost("aten::div", scalar).flops, 100.0);
}

TEST(TorchOpCost, UnknownOperatorsAndMalformedInputsCostNothing) {
  const std::vector<OpInput> mm{tensor({32, 64}), tensor({64, 128})};
  EXPECT_EQ(op_cost("aten::relu", mm).flops, 0.0);
  EXPECT_EQ(op_cost("mm", mm).flops, 0.0);
  EXPECT_EQ(op_cost("aten::mm", {}).flops, 0.0);
  const std::vector<OpInput> wrong{tensor({32, 64}), tensor({63, 128})};
  EXPECT_EQ(op_cost("aten::mm", wrong).flops, 0.0);
  const std::vector<OpInput> not_tensors{other(), other()};
  EXPECT_EQ(op_cost("aten::mm", not_tensors).flops, 0.0);
  const std::vector<OpInput> zero_groups{tensor({1, 8, 10, 10}), tensor({8, 2, 3, 3}), none(), ints({1}), ints({0}),
                                         ints({1}),              integer(0)};
  EXPECT_EQ(op_cost("aten::conv2d", zero_groups).flops, 0.0);
}

}  // namespace
