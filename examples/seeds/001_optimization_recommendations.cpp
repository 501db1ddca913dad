// Seed 001 (Democratising, "Profiling"), Performance Analysis / Optimization Recommendations:
// the advisor's recommendations for a profiled model, in the order to act on them, each with
// its expected whole-run speedup and the steps to take.
#include <nnprof/nnprof.hpp>

#include <iostream>

#include "workload.hpp"

int main() {
  // The model, profiled with 32 batches: the advisor reads what was measured.
  nnprof::ComputeProfiler profiler;
  const seeds::Model model(96);
  double sum = 0.0;
  for (int batch = 0; batch < 32; ++batch) {
    profiler.start("train_step");
    const nnprof::OpCost cost = nnprof::flops::matmul(96, 96, 96);
    profiler.start_with_flops("matmul", cost.flops, static_cast<std::uint64_t>(cost.bytes));
    seeds::Matrix out = seeds::matmul(seeds::Matrix::ramp(96), model.weights);
    profiler.stop("matmul");
    profiler.start_with_flops("relu", 96.0 * 96.0, 2 * 96 * 96 * sizeof(float));
    seeds::relu(out);
    profiler.stop("relu");
    sum += seeds::checksum(out);
    profiler.stop("train_step");
  }

  const std::vector<nnprof::Recommendation> recommendations = nnprof::recommend(profiler.profiler().snapshot());

  std::cout << "Optimization recommendations:\n";
  for (const nnprof::Recommendation& rec : recommendations) {
    std::cout << "Priority " << rec.priority << ": " << rec.title << "\n";
    if (rec.expected_speedup > 0.0)
      std::cout << "Expected improvement: " << rec.expected_speedup << "x\n";
    else
      std::cout << "Expected improvement: unknown, at most " << rec.max_speedup << "x\n";
    std::cout << "Implementation:\n";
    for (const std::string& step : rec.steps) std::cout << "- " << step << "\n";
  }
  std::cout << recommendations.size() << " recommendations; checksum " << sum << "\n";
}
