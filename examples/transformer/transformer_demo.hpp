// The workload behind `nnprof demo`: inferences of the Small and Medium transformers, each
// model described in the profile (nnprof/model_info.hpp) so that `nnprof model-compare`
// can compare them, and with --deep, microbenchmarks of the kernels and a per-layer profile.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "model.hpp"
#include "nnprof/profiler.hpp"
#include "nnprof/roofline.hpp"

namespace nnprof::transformer {

struct DemoOptions {
  std::vector<ModelConfig> models{ModelConfig::small(), ModelConfig::medium()};
  int inferences = 3;
  int tokens = 50;  ///< per inference; past a model's context, its window slides (ModelConfig::context_use)
  SamplingOptions sampling;
  bool deep = false;  ///< add the kernel microbenchmarks and the per-layer profile
};

/// What one model did.
struct ModelRun {
  ModelConfig config;
  ContextUse context;  ///< how the tokens of one inference fit the context
  std::uint64_t parameters = 0;
  int inferences = 0;
  int tokens = 0;              ///< generated, over every inference
  double seconds = 0.0;        ///< inference time, over every inference
  std::vector<int> generated;  ///< tokens of the last inference
  [[nodiscard]] double tokens_per_second() const noexcept { return seconds > 0 ? tokens / seconds : 0.0; }
};

/// One kernel microbenchmark (--deep).
struct KernelBenchmark {
  std::string name;   ///< scope name, e.g. "matmul 512x512x512"
  std::string kernel; ///< "matmul", "gemv", "softmax", "gelu", "layernorm"
  double flops = 0.0, bytes = 0.0;  ///< per call
  int calls = 0;
  double seconds = 0.0;             ///< over every call
  double roof_fraction = -1.0;      ///< of the one-core roof at this intensity; < 0: no peaks known
  [[nodiscard]] double gflops_per_second() const noexcept { return seconds > 0 ? flops * calls / seconds / 1e9 : 0.0; }
};

/// Time of each layer of one model at one position (--deep).
struct LayerTiming {
  std::string model;
  int layer = 0;
  int position = 0;
  double attention_us = 0.0, mlp_us = 0.0;  ///< mean per call
  double flops = 0.0;                       ///< of the layer per call
};

struct DemoResult {
  std::vector<ModelRun> runs;
  std::vector<KernelBenchmark> kernels;
  std::vector<LayerTiming> layers;
};

/// Runs the demo, recording into `profiler`. `peaks` (may be null) places the microbenchmarks
/// on the roofline. Throws std::invalid_argument for options out of range (no tokens, no
/// model, ...). Each model's context use is annotated "model.<name>.context_window".
DemoResult run_demo(Profiler& profiler, const DemoOptions& options, const MachinePeaks* peaks = nullptr);

/// "small" → ModelConfig::small(), "medium" → medium(); "both" → both. Throws
/// std::invalid_argument naming the choices otherwise.
std::vector<ModelConfig> models_named(const std::string& which);

}  // namespace nnprof::transformer
