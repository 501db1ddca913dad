// Exact FLOP and byte counts of the common operations for known shapes, worked out by hand
// from the conventions in include/nnprof/flops.hpp.
#include <gtest/gtest.h>

#include "nnprof/error.hpp"
#include "nnprof/flops.hpp"

namespace {

namespace flops = nnprof::flops;

TEST(Flops, MatmulIsTwoMnkAndReadsBothOperands) {
  const auto c = flops::matmul(128, 256, 512);
  EXPECT_DOUBLE_EQ(c.flops, 2.0 * 128 * 256 * 512);  // 33,554,432
  EXPECT_DOUBLE_EQ(c.bytes, 4.0 * (128 * 512 + 512 * 256 + 128 * 256));
  const auto acc = flops::matmul(2, 3, 4, 2, true);  // fp16, C += A·B
  EXPECT_DOUBLE_EQ(acc.flops, 2.0 * 2 * 3 * 4 + 2 * 3);
  EXPECT_DOUBLE_EQ(acc.bytes, 2.0 * (2 * 4 + 4 * 3 + 2 * 2 * 3));
  EXPECT_DOUBLE_EQ(flops::batched_matmul(8, 4, 4, 4).flops, 8 * 2.0 * 64);
}

TEST(Flops, LinearIsAMatmulPlusTheBias) {
  const auto c = flops::linear(10, 128, 512);
  EXPECT_DOUBLE_EQ(c.flops, 2.0 * 10 * 128 * 512 + 10 * 512);
  EXPECT_DOUBLE_EQ(c.bytes, 4.0 * (10 * 128 + 128 * 512 + 10 * 512 + 512));
  EXPECT_DOUBLE_EQ(flops::linear(10, 128, 512, false).flops, 2.0 * 10 * 128 * 512);
}

TEST(Flops, Conv2dOfAResNetStem) {
  // ResNet-50's first layer: 3→64 channels, 7×7, stride 2, padding 3, on 224×224: 112×112 out,
  // 118,013,952 multiply-adds (the figure usually quoted), 2 FLOPs each, plus the bias.
  nnprof::flops::Conv2dShape s;
  s.in_channels = 3;
  s.height = s.width = 224;
  s.out_channels = 64;
  s.kernel_h = s.kernel_w = 7;
  s.stride = 2;
  s.padding = 3;
  s.bias = false;
  EXPECT_EQ(flops::conv2d_out_height(s), 112u);
  EXPECT_EQ(flops::conv2d_out_width(s), 112u);
  const auto c = flops::conv2d(s);
  EXPECT_DOUBLE_EQ(c.flops, 2.0 * 118'013'952);
  EXPECT_DOUBLE_EQ(c.bytes, 4.0 * (3 * 224 * 224 + 64 * 3 * 7 * 7 + 64 * 112 * 112));
  s.bias = true;
  EXPECT_DOUBLE_EQ(flops::conv2d(s).flops, 2.0 * 118'013'952 + 64.0 * 112 * 112);
}

TEST(Flops, GroupedAndDilatedConvolutions) {
  nnprof::flops::Conv2dShape s;  // depthwise 3×3 on 32 channels of 10×10, dilation 2, no padding
  s.in_channels = s.out_channels = s.groups = 32;
  s.height = s.width = 10;
  s.kernel_h = s.kernel_w = 3;
  s.dilation = 2;
  s.bias = false;
  EXPECT_EQ(flops::conv2d_out_height(s), 6u);  // 10 − 2·2 = 6
  EXPECT_DOUBLE_EQ(flops::conv2d(s).flops, 32.0 * 6 * 6 * 2 * 9);
  s.groups = 5;
  EXPECT_THROW(flops::conv2d(s), nnprof::Error);
}

TEST(Flops, SoftmaxLayernormGeluElementwise) {
  EXPECT_DOUBLE_EQ(flops::softmax(4, 10).flops, 4.0 * (5 * 10 - 2));
  EXPECT_DOUBLE_EQ(flops::softmax(4, 10).bytes, 4.0 * 2 * 40);
  EXPECT_DOUBLE_EQ(flops::layernorm(3, 256).flops, 3.0 * (8 * 256 + 2));
  EXPECT_DOUBLE_EQ(flops::layernorm(3, 256).bytes, 4.0 * (2 * 3 * 256 + 2 * 256));
  EXPECT_DOUBLE_EQ(flops::layernorm(3, 256, false).flops, 3.0 * (6 * 256 + 2));
  EXPECT_DOUBLE_EQ(flops::gelu(1000).flops, 9000.0);
  EXPECT_DOUBLE_EQ(flops::gelu(1000).bytes, 8000.0);
  const auto add = flops::elementwise(100, 1, 2);
  EXPECT_DOUBLE_EQ(add.flops, 100.0);
  EXPECT_DOUBLE_EQ(add.bytes, 1200.0);
  EXPECT_DOUBLE_EQ(add.intensity(), 100.0 / 1200.0);
}

TEST(Flops, AttentionFullAndCausal) {
  nnprof::flops::AttentionShape s;
  s.batch = 2;
  s.heads = 4;
  s.query_len = s.key_len = 3;
  s.head_dim = 8;
  // Full: 3 rows of c = 3 keys: 4·3·8 + 3 + (15 − 2) = 112 per row.
  EXPECT_DOUBLE_EQ(flops::attention(s).flops, 2 * 4 * 3 * 112.0);
  EXPECT_DOUBLE_EQ(flops::attention(s).bytes, 2 * 4 * (2 * 3 + 2 * 3) * 8 * 4.0);
  // Causal: rows see 1, 2, 3 keys: (32+1+3) + (64+2+8) + (96+3+13) = 36 + 74 + 112 = 222.
  s.causal = true;
  EXPECT_DOUBLE_EQ(flops::attention(s).flops, 2 * 4 * 222.0);
  // One generated token against a cache of 5 sees all 5.
  s.query_len = 1;
  s.key_len = 5;
  EXPECT_DOUBLE_EQ(flops::attention(s).flops, 2 * 4 * (4.0 * 5 * 8 + 5 + 23));
  s.query_len = 6;
  EXPECT_THROW(flops::attention(s), nnprof::Error);
}

TEST(Flops, CostsAdd) {
  const nnprof::OpCost a{10, 4}, b{6, 4};
  EXPECT_DOUBLE_EQ((a + b).flops, 16);
  EXPECT_DOUBLE_EQ((3.0 * a).bytes, 12);
  EXPECT_DOUBLE_EQ(nnprof::OpCost{}.intensity(), 0.0);
}

}  // namespace
