// A training loop for the continuous-profiling tests: steps of about `step_ms` of CPU work
// under NNPROF_SCOPE("step") with 32 items each.
//   continuous_train api OUT INTERVAL_MS STEP_MS   its own ContinuousProfiler writing OUT; runs
//                                                  until killed (the crash test kills it)
//   continuous_train plain RUN_MS STEP_MS          no profiler of its own (`nnprof record
//                                                  --continuous` drives the global one)
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <string>

#include "nnprof/continuous.hpp"
#include "nnprof/nnprof.hpp"

namespace {

volatile double g_sink = 0.0;

void step(double step_ms) {
  NNPROF_SCOPE("step");
  {
    NNPROF_SCOPE("forward");
    const auto until = std::chrono::steady_clock::now() + std::chrono::duration<double, std::milli>(step_ms);
    double x = 0.0;
    while (std::chrono::steady_clock::now() < until)
      for (int i = 0; i < 1000; ++i) x += std::sqrt(static_cast<double>(i) + x);
    g_sink = x;
  }
  nnprof::add_items("step", 32);
}

}  // namespace

int main(int argc, char** argv) {
  if (argc == 5 && std::string(argv[1]) == "api") {
    nnprof::ContinuousOptions options;
    options.interval = std::chrono::milliseconds(std::atoi(argv[3]));
    options.output_path = argv[2];
    options.metrics = {"memory"};
    options.step_scope = "step";
    options.analyze_every = 1;
    nnprof::ContinuousProfiler profiler(options);
    profiler.start();
    for (;;) step(std::atof(argv[4]));
  }
  if (argc == 4 && std::string(argv[1]) == "plain") {
    const auto end = std::chrono::steady_clock::now() + std::chrono::milliseconds(std::atoi(argv[2]));
    while (std::chrono::steady_clock::now() < end) step(std::atof(argv[3]));
    return 0;
  }
  std::fprintf(stderr, "usage: continuous_train api OUT INTERVAL_MS STEP_MS | plain RUN_MS STEP_MS\n");
  return 2;
}
