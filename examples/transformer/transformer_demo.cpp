#include "transformer_demo.hpp"

#include <algorithm>
#include <chrono>
#include <stdexcept>
#include <utility>

#include <fmt/format.h>

#include "kernels.hpp"
#include "nnprof/flops.hpp"
#include "nnprof/model_info.hpp"
#include "nnprof/scope.hpp"

namespace nnprof::transformer {

namespace {

using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

std::size_t sz(int v) noexcept { return static_cast<std::size_t>(v); }

/// Deterministic inputs in [-1, 1) (a linear congruential sequence: no allocation, no seed state).
void fill(std::vector<float>& v, std::uint32_t seed) {
  std::uint32_t x = seed * 2654435761u + 1;
  for (float& f : v) {
    x = x * 1664525u + 1013904223u;
    f = static_cast<float>(x >> 8) * (2.0f / 16777216.0f) - 1.0f;
  }
}

/// Runs `body` (one call of the kernel) in its own scope, named `name`, until it has run at
/// least `min_calls` times and `min_seconds`, declaring its work on every call.
template <class Body>
KernelBenchmark time_kernel(Profiler& profiler, std::string name, std::string kernel, OpCost cost,
                            const MachinePeaks* peaks, Body&& body) {
  KernelBenchmark b{std::move(name), std::move(kernel), cost.flops, cost.bytes, 0, 0.0, -1.0};
  body();  // warm the caches and the branch predictors outside the measurement
  constexpr double kMinSeconds = 0.15;
  constexpr int kMinCalls = 5;
  ProfileGuard scope(profiler, b.name);
  const Clock::time_point start = Clock::now();
  do {
    for (int i = 0; i < kMinCalls; ++i) body();
    b.calls += kMinCalls;
    b.seconds = seconds_since(start);
  } while (b.seconds < kMinSeconds);
  scope.add_flops(cost.flops * b.calls, static_cast<std::uint64_t>(cost.bytes * b.calls));
  if (peaks != nullptr && peaks->fp32_flops_one_core > 0 && peaks->bandwidth_one_core > 0 && cost.bytes > 0)
    b.roof_fraction = roofline_point(cost.flops * b.calls, cost.bytes * b.calls, b.seconds, *peaks,
                                     Precision::Fp32, /*one_core=*/true)
                          .fraction;
  return b;
}

std::vector<KernelBenchmark> kernel_benchmarks(Profiler& profiler, const MachinePeaks* peaks) {
  NNPROF_SCOPE_IN(profiler, "microbenchmarks");
  std::vector<KernelBenchmark> out;
  for (const int n : {128, 256, 512}) {
    std::vector<float> a(sz(n * n)), b(sz(n * n)), c(sz(n * n));
    fill(a, 1);
    fill(b, 2);
    const auto un = static_cast<std::uint64_t>(n);
    out.push_back(time_kernel(profiler, fmt::format("matmul {0}x{0}x{0}", n), "matmul", flops::matmul(un, un, un),
                              peaks, [&] { kernels::matmul(n, n, n, a.data(), n, b.data(), n, c.data(), n); }));
  }
  // The decode step's matmuls: one token's row against the weights (memory-bound GEMV).
  for (const auto& shape : {std::pair{128, 512}, std::pair{256, 1024}, std::pair{1024, 256}}) {
    const int k = shape.first, n = shape.second;  // not a structured binding: clang 14 cannot capture one
    std::vector<float> x(sz(k)), w(sz(k * n)), y(sz(n));
    fill(x, 3);
    fill(w, 4);
    out.push_back(time_kernel(profiler, fmt::format("gemv 1x{}x{}", k, n), "gemv",
                              flops::matmul(1, static_cast<std::uint64_t>(n), static_cast<std::uint64_t>(k)), peaks,
                              [&] { kernels::matmul(1, n, k, x.data(), k, w.data(), n, y.data(), n); }));
  }
  for (const int n : {64, 1024, 16384}) {
    std::vector<float> v(sz(n));
    fill(v, 5);
    const std::vector<float> original = v;
    out.push_back(time_kernel(profiler, fmt::format("softmax {}", n), "softmax",
                              flops::softmax(1, static_cast<std::uint64_t>(n)), peaks, [&] {
                                std::copy(original.begin(), original.end(), v.begin());
                                kernels::softmax(v.data(), n);
                              }));
  }
  for (const int n : {1024, 16384, 262144}) {
    std::vector<float> v(sz(n));
    fill(v, 6);
    const std::vector<float> original = v;
    out.push_back(time_kernel(profiler, fmt::format("gelu {}", n), "gelu", flops::gelu(static_cast<std::uint64_t>(n)),
                              peaks, [&] {
                                std::copy(original.begin(), original.end(), v.begin());
                                kernels::gelu(v.data(), n);
                              }));
  }
  for (const int n : {128, 256, 1024}) {
    std::vector<float> x(sz(n)), gamma(sz(n), 1.0f), beta(sz(n), 0.0f), y(sz(n));
    fill(x, 7);
    out.push_back(time_kernel(profiler, fmt::format("layernorm {}", n), "layernorm",
                              flops::layernorm(1, static_cast<std::uint64_t>(n)), peaks,
                              [&] { kernels::layernorm(x.data(), gamma.data(), beta.data(), y.data(), n); }));
  }
  return out;
}

/// Each layer's attention and MLP timed on their own, at the last position of a full
/// inference (the longest attention), in scopes "layer <i>" under "layers".
std::vector<LayerTiming> layer_profile(Profiler& profiler, Model& model, int position) {
  NNPROF_SCOPE_IN(profiler, "layers");
  constexpr int kCalls = 20;
  std::vector<LayerTiming> out;
  const ModelConfig& c = model.config();
  for (int layer = 0; layer < c.layers; ++layer) {
    ProfileGuard scope(profiler, fmt::format("layer {}", layer));
    LayerTiming t{c.name, layer, position, 0.0, 0.0, 0.0};
    Clock::time_point start = Clock::now();
    for (int i = 0; i < kCalls; ++i) model.layer_attention(layer, position);
    t.attention_us = seconds_since(start) / kCalls * 1e6;
    start = Clock::now();
    for (int i = 0; i < kCalls; ++i) model.layer_mlp(layer);
    t.mlp_us = seconds_since(start) / kCalls * 1e6;
    // The layer's share of a forward pass: everything but embedding, final norm and head.
    const auto d = static_cast<std::uint64_t>(c.d_model);
    t.flops = (model.forward_flops(position) - flops::elementwise(d, 1.0, 2).flops - flops::layernorm(1, d).flops -
               flops::matmul(1, static_cast<std::uint64_t>(c.vocab), d).flops) /
              c.layers;
    out.push_back(t);
  }
  return out;
}

}  // namespace

std::vector<ModelConfig> models_named(const std::string& which) {
  if (which == "small") return {ModelConfig::small()};
  if (which == "medium") return {ModelConfig::medium()};
  if (which == "both") return {ModelConfig::small(), ModelConfig::medium()};
  throw std::invalid_argument("unknown model '" + which + "': choose small, medium or both");
}

DemoResult run_demo(Profiler& profiler, const DemoOptions& options, const MachinePeaks* peaks) {
  if (options.models.empty()) throw std::invalid_argument("the demo needs at least one model");
  if (options.inferences < 1) throw std::invalid_argument("--inferences must be at least 1");
  if (options.tokens < 1) throw std::invalid_argument(fmt::format("--tokens must be at least 1, not {}", options.tokens));
  for (const ModelConfig& c : options.models) c.validate();
  DemoResult result;
  for (const ModelConfig& config : options.models) {
    // Everything of one model, its weights included, is inside its model:<name> scope, where
    // `nnprof model-compare` looks for it.
    ProfileGuard model_scope(profiler, model_scope_name(config.name));
    Model model(config, profiler);
    ModelInfo info;
    info.name = config.name;
    info.parameters = config.parameter_count();
    info.d_model = static_cast<std::uint32_t>(config.d_model);
    info.layers = static_cast<std::uint32_t>(config.layers);
    info.heads = static_cast<std::uint32_t>(config.heads);
    info.context = static_cast<std::uint32_t>(config.context);
    info.vocab = static_cast<std::uint32_t>(config.vocab);
    info.weight_bytes = model.weight_bytes();
    info.kv_cache_bytes = config.kv_cache_bytes();
    describe_model(profiler, info);

    ModelRun run;
    run.config = config;
    run.context = config.context_use(options.tokens);
    // What the inferences did with the context, in every report's annotations next to the
    // model's shape (a key describe_model does not write, so model-compare passes over it).
    profiler.annotate(fmt::format("model.{}.context_window", config.name), run.context.describe());
    run.parameters = model.parameters_allocated();
    for (int i = 0; i < options.inferences; ++i) {
      const Clock::time_point start = Clock::now();
      run.generated = model.generate(options.tokens, options.sampling);
      run.seconds += seconds_since(start);
      run.tokens += options.tokens;
      ++run.inferences;
    }
    if (options.deep) {
      // The last position of the inference: past the context, the window's last one.
      const auto layers = layer_profile(profiler, model, std::min(options.tokens, config.context) - 1);
      result.layers.insert(result.layers.end(), layers.begin(), layers.end());
    }
    result.runs.push_back(std::move(run));
  }
  if (options.deep) result.kernels = kernel_benchmarks(profiler, peaks);
  return result;
}

}  // namespace nnprof::transformer
