// A small, real training-loop workload that exercises every kind of instrumentation:
// nested scopes on a main thread, data-loader threads feeding it through a queue, and
// memory counters for weights and activations.
#pragma once

#include <cstdint>

#include "nnprof/profiler.hpp"

namespace nnprof::demo {

struct DemoOptions {
  int steps = 30;          ///< training steps
  int loader_threads = 2;  ///< data-loader threads producing batches
  int hidden = 192;        ///< width of the dense layers (the matmuls are hidden x hidden)
  int layers = 3;
  int batch = 64;
};

struct DemoResult {
  double final_loss = 0.0;  ///< depends only on the options (deterministic)
  std::uint64_t flops = 0;  ///< floating-point operations performed by forward and backward
};

/// Runs the workload, recording into `profiler`. Throws std::invalid_argument on options
/// out of range.
DemoResult run_demo_workload(Profiler& profiler, const DemoOptions& options);

}  // namespace nnprof::demo
