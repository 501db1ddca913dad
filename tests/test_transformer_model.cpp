// The built-in transformer: exact parameter counts, deterministic output for a seed, the
// instrumented call tree (inference → generate_token → forward → block → attention | mlp →
// kernel) with the expected number of calls, and declared FLOPs that add up.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <stdexcept>
#include <string>
#include <vector>

#include "model.hpp"
#include "nnprof/model_info.hpp"
#include "nnprof/profile.hpp"
#include "nnprof/profiler.hpp"
#include "transformer_demo.hpp"

namespace nnprof::transformer {
namespace {

TEST(TransformerModel, ParameterCountsMatchTheSeedsModels) {
  EXPECT_EQ(ModelConfig::small().parameter_count(), 470'528u);
  EXPECT_EQ(ModelConfig::medium().parameter_count(), 3'454'464u);
  Profiler profiler;
  const Model small(ModelConfig::small(), profiler);
  EXPECT_EQ(small.parameters_allocated(), 470'528u);
  EXPECT_EQ(small.weight_bytes(), 4u * 470'528u);
  // Keys and values: 2 × layers × context × d floats.
  EXPECT_EQ(ModelConfig::small().kv_cache_bytes(), 2u * 2u * 64u * 128u * 4u);
}

TEST(TransformerModel, OutputIsDeterministicForASeed) {
  Profiler profiler;
  SamplingOptions greedy;
  SamplingOptions top_k{8, 1.0f, 99};
  Model a(ModelConfig::small(), profiler);
  Model b(ModelConfig::small(), profiler);
  const std::vector<int> ga = a.generate(20, greedy);
  EXPECT_EQ(ga, b.generate(20, greedy));
  EXPECT_EQ(ga, a.generate(20, greedy)) << "a second inference starts from an empty cache";
  const std::vector<int> ka = a.generate(20, top_k);
  EXPECT_EQ(ka, b.generate(20, top_k));
  top_k.seed = 100;
  EXPECT_NE(ka, a.generate(20, top_k)) << "another sampling seed draws other tokens";
  ModelConfig other = ModelConfig::small();
  other.seed = 7;
  Model c(other, profiler);
  EXPECT_NE(ga, c.generate(20, greedy)) << "other weights give other tokens";
  for (const int t : ga) {
    EXPECT_GE(t, 0);
    EXPECT_LT(t, 256);
  }
}

TEST(TransformerModel, LogitsAreFiniteAndNotDegenerate) {
  Profiler profiler;
  Model m(ModelConfig::medium(), profiler);
  std::span<const float> logits;
  for (int pos = 0; pos < 128; ++pos) logits = m.forward(pos % 512, pos);
  ASSERT_EQ(logits.size(), 512u);
  float lo = logits[0], hi = logits[0];
  for (const float v : logits) {
    ASSERT_TRUE(std::isfinite(v));
    lo = std::min(lo, v);
    hi = std::max(hi, v);
  }
  EXPECT_GT(hi - lo, 0.1f) << "the logits at the end of the context still discriminate tokens";
}

TEST(TransformerModel, RejectsBadArguments) {
  Profiler profiler;
  Model m(ModelConfig::small(), profiler);
  EXPECT_THROW((void)m.generate(0), std::invalid_argument);
  EXPECT_THROW((void)m.generate(4, SamplingOptions{0, 1.0f, 1}), std::invalid_argument);
  EXPECT_THROW((void)m.forward(256, 0), std::out_of_range);
  EXPECT_THROW((void)m.forward(0, 64), std::out_of_range);
  ModelConfig bad = ModelConfig::small();
  bad.heads = 3;
  EXPECT_THROW(Model(bad, profiler), std::invalid_argument);
  EXPECT_THROW((void)models_named("large"), std::invalid_argument);
  DemoOptions options;
  options.tokens = 0;
  EXPECT_THROW((void)run_demo(profiler, options), std::invalid_argument);
}

TEST(TransformerModel, GenerationPastTheContextSlidesAWindowOfTheLastContextTokens) {
  ModelConfig tiny = ModelConfig::small();
  tiny.context = 8;
  Profiler profiler;
  Model m(tiny, profiler);
  const std::vector<int> within = m.generate(8);
  const std::vector<int> past = m.generate(11);
  ASSERT_EQ(past.size(), 11u);
  EXPECT_TRUE(std::equal(within.begin(), within.end(), past.begin())) << "the first context tokens are unchanged";
  for (const int t : past) {
    EXPECT_GE(t, 0);
    EXPECT_LT(t, tiny.vocab);
  }
  // Each of the 3 tokens past the context encodes the window's other 7 tokens again.
  const ContextUse use = tiny.context_use(11);
  EXPECT_EQ(use.slid_tokens, 3);
  EXPECT_EQ(use.reencoded_positions, 3u * 7u);
  EXPECT_NE(use.describe().find("sliding window of the last 8 tokens"), std::string::npos) << use.describe();
  EXPECT_EQ(tiny.context_use(8).slid_tokens, 0);
  EXPECT_NE(tiny.context_use(8).describe().find("within the context"), std::string::npos);
  const Profile p = profiler.snapshot();
  std::uint64_t forwards = 0, slides = 0;
  for (std::uint32_t i = 1; i < p.call_tree.size(); ++i) {
    const std::string name = p.str(p.call_tree[i].name);
    if (name == "forward") forwards += p.call_tree[i].time.count;
    if (name == "slide_window") slides += p.call_tree[i].time.count;
  }
  EXPECT_EQ(slides, 3u);
  EXPECT_EQ(forwards, 8u + 11u + 3u * 7u) << "one forward pass per token, plus the re-encoded windows";
}

/// The names on the path from the root to `node`, outermost first.
std::vector<std::string> path_of(const Profile& p, std::uint32_t node) {
  std::vector<std::string> names;
  for (std::uint32_t n = node; n != 0 && n != kNone; n = p.call_tree[n].parent) names.push_back(p.str(p.call_tree[n].name));
  return {names.rbegin(), names.rend()};
}

TEST(TransformerModel, CallTreeHasEveryLevelAndTheExpectedCalls) {
  Profiler profiler;
  DemoOptions options;
  options.inferences = 2;
  options.tokens = 5;
  const DemoResult r = run_demo(profiler, options);
  ASSERT_EQ(r.runs.size(), 2u);
  const Profile p = profiler.snapshot();

  std::uint64_t forward_calls = 0;
  std::map<std::string, std::uint64_t> calls_by_path;
  for (std::uint32_t i = 1; i < p.call_tree.size(); ++i) {
    const auto path = path_of(p, i);
    std::string joined;
    for (const auto& n : path) joined += (joined.empty() ? "" : "/") + n;
    calls_by_path[joined] += p.call_tree[i].time.count;
    if (path.back() == "forward") forward_calls += p.call_tree[i].time.count;
  }
  EXPECT_EQ(forward_calls, 2u * 5u * 2u) << "inferences × tokens × models";
  for (const std::string model : {"small", "medium"}) {
    const std::string root = model_scope_name(model);
    const std::uint64_t layers = model == "small" ? 2 : 4;
    EXPECT_EQ(calls_by_path[root], 1u);
    EXPECT_EQ(calls_by_path[root + "/inference"], 2u);
    EXPECT_EQ(calls_by_path[root + "/inference/generate_token"], 10u);
    EXPECT_EQ(calls_by_path[root + "/inference/generate_token/forward"], 10u);
    EXPECT_EQ(calls_by_path[root + "/inference/generate_token/sample"], 10u);
    const std::string block = root + "/inference/generate_token/forward/block";
    EXPECT_EQ(calls_by_path[block], 10u * layers);
    EXPECT_EQ(calls_by_path[block + "/attention"], 10u * layers);
    EXPECT_EQ(calls_by_path[block + "/attention/matmul"], 2u * 10u * layers) << "QKV and output projections";
    for (const char* k : {"layernorm", "attention_scores", "softmax", "attention_values"})
      EXPECT_EQ(calls_by_path[block + "/attention/" + k], 10u * layers) << k;
    EXPECT_EQ(calls_by_path[block + "/mlp/matmul"], 2u * 10u * layers);
    EXPECT_EQ(calls_by_path[block + "/mlp/gelu"], 10u * layers);
    EXPECT_EQ(calls_by_path[root + "/inference/generate_token/forward/lm_head/matmul"], 10u);
    EXPECT_EQ(calls_by_path[root + "/inference/generate_token/forward/embed"], 10u);
  }
  // Tokens are the work items of the generate scopes.
  for (const ScopeStats& s : p.scopes)
    if (p.str(s.name) == "inference" || p.str(s.name) == "generate_token") {
      EXPECT_EQ(s.items, 2u * 5u * 2u);
    }
}

TEST(TransformerModel, DeclaredFlopsAddUpToTheForwardPasses) {
  Profiler profiler;
  Model m(ModelConfig::small(), profiler);
  (void)m.generate(6);
  double expected = 0.0;
  for (int pos = 0; pos < 6; ++pos) expected += m.forward_flops(pos);
  const Profile p = profiler.snapshot();
  double forward_flops = 0.0;
  for (const ScopeStats& s : p.scopes)
    if (p.str(s.name) == "forward") {
      forward_flops = s.flops;
    }
  EXPECT_NEAR(forward_flops, expected, expected * 1e-12);
  // The matmuls dominate: 2 FLOPs per weight per token, about twice the parameter count.
  EXPECT_GT(expected / 6, 2.0 * 0.8 * 470'528);
}

TEST(TransformerModel, DemoDescribesEveryModel) {
  Profiler profiler;
  DemoOptions options;
  options.inferences = 1;
  options.tokens = 2;
  (void)run_demo(profiler, options);
  const auto models = described_models(profiler.snapshot());
  ASSERT_EQ(models.size(), 2u);
  std::map<std::string, ModelInfo> by_name;
  for (const auto& m : models) by_name[m.name] = m;
  EXPECT_EQ(by_name["small"].parameters, 470'528u);
  EXPECT_EQ(by_name["medium"].parameters, 3'454'464u);
  EXPECT_EQ(by_name["medium"].layers, 4u);
  EXPECT_EQ(by_name["medium"].heads, 8u);
  EXPECT_EQ(by_name["medium"].context, 128u);
  EXPECT_EQ(by_name["small"].weight_bytes, 4u * 470'528u);
}

}  // namespace
}  // namespace nnprof::transformer
