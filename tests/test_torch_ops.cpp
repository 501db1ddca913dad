// The PyTorch operator observer on LibTorch itself: every operator an nnprof scope with its
// shapes, dtypes, kind, sequence number and FLOPs, nested as torch runs them.
#include <gtest/gtest.h>
#include <torch/torch.h>

#include <map>
#include <optional>
#include <stdexcept>
#include <string>
#include <thread>

#include "nnprof/scope.hpp"
#include "nnprof/torch.hpp"

namespace {

using nnprof::Profile;
using nnprof::Profiler;
using nnprof::SpanArg;

std::optional<SpanArg> arg_of(const Profile& p, std::uint32_t span, const std::string& key) {
  for (const SpanArg& a : p.span_args)
    if (a.span == span && a.key == key) return a;
  return std::nullopt;
}

std::map<std::string, int> calls_by_name(const Profile& p) {
  std::map<std::string, int> calls;
  for (const auto& s : p.spans) ++calls[p.str(s.name)];
  return calls;
}

TEST(TorchOps, EveryMatmulIsAScopeWithItsShapesDtypesAndFlops) {
  torch::NoGradGuard no_grad;
  const torch::Tensor a = torch::randn({32, 64});
  const torch::Tensor b = torch::randn({64, 128});
  Profiler profiler;
  {
    nnprof::torch::OpObserver observer(profiler);
    for (int i = 0; i < 5; ++i) (void)torch::mm(a, b);
  }
  const Profile p = profiler.snapshot();
  EXPECT_EQ(calls_by_name(p)["aten::mm"], 5);
  int checked = 0;
  for (std::uint32_t i = 0; i < p.spans.size(); ++i) {
    if (p.str(p.spans[i].name) != "aten::mm") continue;
    ++checked;
    EXPECT_EQ(arg_of(p, i, "input_shapes")->string_value, "[[32, 64], [64, 128]]");
    EXPECT_EQ(arg_of(p, i, "input_dtypes")->string_value, "[float, float]");
    EXPECT_EQ(arg_of(p, i, "op_scope")->string_value, "function");
    EXPECT_DOUBLE_EQ(arg_of(p, i, "flops")->real_value, 2.0 * 32 * 64 * 128);
  }
  EXPECT_EQ(checked, 5);
  const auto* mm = p.find_scope("aten::mm");
  ASSERT_NE(mm, nullptr);
  EXPECT_DOUBLE_EQ(mm->flops, 5 * 2.0 * 32 * 64 * 128);
  EXPECT_GT(mm->gflops_per_second(), 0.0);
}

TEST(TorchOps, OperatorsNestAndTheInnermostCountDeclaresTheFlops) {
  torch::NoGradGuard no_grad;
  torch::nn::Linear layer(64, 128);
  const torch::Tensor x = torch::randn({32, 64});
  Profiler profiler;
  {
    nnprof::torch::OpObserver observer(profiler);
    NNPROF_SCOPE_IN(profiler, "step");
    (void)torch::linear(x, layer->weight, layer->bias);  // what Python's nn.Linear calls
  }
  const Profile p = profiler.snapshot();
  bool addmm_inside_linear = false;
  for (const auto& node : p.call_tree)
    if (node.id != 0 && p.node_path(node.id) == "step > aten::linear > aten::addmm") {
      addmm_inside_linear = true;
      EXPECT_DOUBLE_EQ(node.flops, 2.0 * 32 * 64 * 128) << "addmm declares torch's count";
    }
  EXPECT_TRUE(addmm_inside_linear);
  const auto* linear = p.find_scope("aten::linear");
  ASSERT_NE(linear, nullptr);
  EXPECT_DOUBLE_EQ(linear->flops, 2.0 * 32 * 64 * 128) << "linear inherits addmm's count, not its own on top";
  for (std::uint32_t i = 0; i < p.spans.size(); ++i) {
    if (p.str(p.spans[i].name) == "aten::linear") {
      EXPECT_EQ(arg_of(p, i, "input_shapes")->string_value, "[[32, 64], [128, 64], [128]]");
    }
  }
}

TEST(TorchOps, BackwardOperatorsCarryTheirForwardSequenceNumber) {
  const torch::Tensor a = torch::randn({16, 8}, torch::requires_grad());
  const torch::Tensor b = torch::randn({8, 4}, torch::requires_grad());
  Profiler profiler;
  {
    nnprof::torch::OpObserver observer(profiler);
    torch::mm(a, b).sum().backward();
  }
  const Profile p = profiler.snapshot();
  std::optional<std::int64_t> forward_seq, backward_seq;
  for (std::uint32_t i = 0; i < p.spans.size(); ++i) {
    const std::string name = p.str(p.spans[i].name);
    if (name == "aten::mm" && arg_of(p, i, "seq") && !forward_seq) forward_seq = arg_of(p, i, "seq")->int_value;
    if (name == "MmBackward0") {
      EXPECT_EQ(arg_of(p, i, "op_scope")->string_value, "backward");
      ASSERT_TRUE(arg_of(p, i, "seq"));
      backward_seq = arg_of(p, i, "seq")->int_value;
    }
  }
  ASSERT_TRUE(forward_seq);
  ASSERT_TRUE(backward_seq) << "MmBackward0 was recorded";
  EXPECT_EQ(*forward_seq, *backward_seq);
}

TEST(TorchOps, UserScopesNestOperatorsAndEachThreadHasItsOwn) {
  torch::NoGradGuard no_grad;
  Profiler profiler;
  {
    nnprof::torch::OpObserver observer(profiler);
    const auto work = [] {
      torch::NoGradGuard no_grad_here;  // grad mode is per thread
      RECORD_USER_SCOPE("attention_block");
      (void)torch::softmax(torch::ones({4, 10}), -1);
    };
    std::thread t1(work), t2(work);
    t1.join();
    t2.join();
  }
  const Profile p = profiler.snapshot();
  std::map<std::uint32_t, int> softmax_per_thread;
  for (std::uint32_t i = 0; i < p.spans.size(); ++i) {
    const std::string path = p.node_path(p.spans[i].node);
    if (p.str(p.spans[i].name) == "aten::softmax") {
      ++softmax_per_thread[p.spans[i].thread];
      EXPECT_EQ(path, "attention_block > aten::softmax");
    }
    if (p.str(p.spans[i].name) == "attention_block") {
      EXPECT_EQ(arg_of(p, i, "op_scope")->string_value, "user");
    }
  }
  EXPECT_EQ(softmax_per_thread.size(), 2u);
  for (const auto& [thread, n] : softmax_per_thread) EXPECT_EQ(n, 1) << "thread " << thread;
}

TEST(TorchOps, OneObserverAtATimeAndNothingRecordedAfterIt) {
  torch::NoGradGuard no_grad;
  Profiler profiler;
  {
    nnprof::torch::OpObserver observer(profiler);
    EXPECT_TRUE(nnprof::torch::OpObserver::active());
    EXPECT_THROW(nnprof::torch::OpObserver second(profiler), std::logic_error);
    (void)torch::ones({2, 2}).add(1);
  }
  EXPECT_FALSE(nnprof::torch::OpObserver::active());
  const auto before = profiler.snapshot().spans.size();
  EXPECT_GT(before, 0u);
  (void)torch::ones({2, 2}).add(1);
  EXPECT_EQ(profiler.snapshot().spans.size(), before);
  // Without shapes, the operators are still scopes, with their kind but no shapes.
  Profiler plain;
  {
    nnprof::torch::OpObserver observer(plain, {.record_shapes = false});
    (void)torch::mm(torch::ones({2, 3}), torch::ones({3, 2}));
  }
  const Profile p = plain.snapshot();
  bool saw_mm = false;
  for (std::uint32_t i = 0; i < p.spans.size(); ++i)
    if (p.str(p.spans[i].name) == "aten::mm") {
      saw_mm = true;
      EXPECT_FALSE(arg_of(p, i, "input_shapes"));
      EXPECT_TRUE(arg_of(p, i, "op_scope"));
    }
  EXPECT_TRUE(saw_mm);
  EXPECT_STREQ(nnprof::torch::built_for_torch_version(), "1.13.0");
}

}  // namespace
