// Seed 002 (kitsune's profiler), Comparing Configurations: the same training profiled under two
// configurations, then compare_runs gives the speedup. nnprof::compare takes the two profiles:
// speedup is runtime A over runtime B, and each scope gets a verdict from a rank test of its
// per-call times. The "optimised" configuration here is a narrower layer, a quarter of the work.
#include <nnprof/nnprof.hpp>

#include <cstddef>
#include <cstdio>

#include "workload.hpp"

namespace {
// profile_training(config): ten training steps recorded by a profiler of their own.
nnprof::Profile profile_training(std::size_t width, double& sum) {
  nnprof::Profiler profiler;
  const seeds::Model model(width);
  for (int step = 0; step < 10; ++step) {
    NNPROF_SCOPE_IN(profiler, "train_step");
    sum += seeds::checksum(model.forward(seeds::Matrix::ramp(width)));
  }
  return profiler.snapshot();
}
}  // namespace

int main() {
  double sum = 0.0;
  const nnprof::Profile metrics1 = profile_training(160, sum);  // Run 1: baseline
  const nnprof::Profile metrics2 = profile_training(100, sum);  // Run 2: the optimised configuration

  const nnprof::Comparison comparison = nnprof::compare(metrics1, metrics2);
  std::printf("Speedup: %.2fx\n", comparison.speedup);
  std::printf("verdict: %s\n", nnprof::to_string(comparison.verdict));
  for (const nnprof::ScopeChange& scope : comparison.scopes)
    std::printf("%s: %s, %.2fx the time per call (p = %.2g)\n", scope.name.c_str(), nnprof::to_string(scope.verdict),
                scope.ratio, scope.p_value);
  std::printf("checksum %g\n", sum);
}
