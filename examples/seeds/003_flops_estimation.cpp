// Seed 003 (cookbook's PerformanceProfiler), FLOPS Estimation: a Linear(784, 512), ReLU,
// Linear(512, 10) model run on a batch of 32 inside a region; then its estimated FLOPs and
// FLOP/s. nnprof counts the FLOPs from the layers' shapes (nnprof/flops.hpp: 2 per multiply-add,
// 1 per bias add and per ReLU) and each layer declares its own with a FLOP scope; the region
// sums what was declared inside it.
#include <nnprof/nnprof.hpp>

#include <cstdint>
#include <cstdio>
#include <string>
#include <vector>

namespace {
// y[tokens x out] = x[tokens x in] · Wᵀ + b, W[out x in]: what nn.Linear computes.
struct Linear {
  std::uint64_t in, out;
  std::vector<float> weight, bias;
  Linear(std::uint64_t in_features, std::uint64_t out_features)
      : in(in_features), out(out_features), weight(in_features * out_features), bias(out_features, 0.01f) {
    for (std::size_t i = 0; i < weight.size(); ++i) weight[i] = static_cast<float>(i % 13) * 0.01f - 0.06f;
  }
  [[nodiscard]] std::vector<float> forward(const std::vector<float>& x, std::uint64_t tokens) const {
    std::vector<float> y(tokens * out);
    for (std::uint64_t t = 0; t < tokens; ++t)
      for (std::uint64_t o = 0; o < out; ++o) {
        float acc = bias[o];
        for (std::uint64_t i = 0; i < in; ++i) acc += x[t * in + i] * weight[o * in + i];
        y[t * out + o] = acc;
      }
    return y;
  }
};

// 1,234,567 as the seed prints it ({:,}).
std::string with_thousands(std::uint64_t value) {
  const std::string digits = std::to_string(value);
  std::string grouped;
  for (std::size_t i = 0; i < digits.size(); ++i) {
    if (i > 0 && (digits.size() - i) % 3 == 0) grouped += ',';
    grouped += digits[i];
  }
  return grouped;
}
}  // namespace

int main() {
  nnprof::Profiler profiler;
  constexpr std::uint64_t kBatch = 32;
  const Linear fc1(784, 512);
  const Linear fc2(512, 10);
  std::vector<float> output;
  {
    auto region = profiler.profile("flops_analysis");
    std::vector<float> x(kBatch * 784);  // torch.randn(32, 784), deterministic here
    for (std::size_t i = 0; i < x.size(); ++i) x[i] = static_cast<float>(i % 17) * 0.1f - 0.8f;
    std::vector<float> hidden;
    {
      NNPROF_SCOPE_COST_IN(profiler, "fc1", nnprof::flops::linear(kBatch, 784, 512));
      hidden = fc1.forward(x, kBatch);
    }
    {
      NNPROF_SCOPE_COST_IN(profiler, "relu", nnprof::flops::elementwise(kBatch * 512, 1));
      for (float& v : hidden) v = v > 0.0f ? v : 0.0f;
    }
    {
      NNPROF_SCOPE_COST_IN(profiler, "fc2", nnprof::flops::linear(kBatch, 512, 10));
      output = fc2.forward(hidden, kBatch);
    }
  }

  const nnprof::RegionCompute compute_metrics = profiler.get_metrics("flops_analysis")->compute;
  std::printf("Estimated FLOPs: %s\n", with_thousands(static_cast<std::uint64_t>(compute_metrics.flops)).c_str());
  std::printf("FLOPS per second: %s\n",
              with_thousands(static_cast<std::uint64_t>(compute_metrics.flops_per_second)).c_str());
  double sum = 0.0;
  for (float v : output) sum += v;
  std::printf("checksum %g\n", sum);
}
