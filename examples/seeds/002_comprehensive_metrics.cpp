// Seed 002 (kitsune's profiler), Comprehensive Metrics: a batch size and a loss recorded per
// batch, each iteration timed with measure_time, then the report. The timed iteration is also
// a scope, so the report's hot paths list it beside the metrics.
#include <nnprof/nnprof.hpp>

#include <iostream>

#include "workload.hpp"

int main() {
  nnprof::Profiler profiler;
  const nnprof::Metrics collector = profiler.metrics();
  const seeds::Model model(48);
  for (int epoch = 0; epoch < 2; ++epoch) {
    for (int batch_idx = 0; batch_idx < 5; ++batch_idx) {
      const seeds::Matrix data = seeds::Matrix::ramp(48);
      collector.record("batch_size", static_cast<double>(data.n));
      double loss = 0.0;
      {
        auto timer = collector.measure_time("iteration");
        loss = seeds::checksum(model.forward(data)) / 1e6 / (1 + batch_idx);
      }
      collector.record("loss", loss);
    }
  }
  const auto iteration = collector.summary("iteration");
  std::cout << "iteration: " << iteration->count << " timed, mean " << iteration->mean << " ns\n";
  std::cout << "loss: " << collector.summary("loss")->count << " observations\n";
  std::cout << "iteration scope: " << profiler.call_count("iteration") << " calls\n";
  profiler.print_summary();  // generate_report(): the report with the metrics section
}
