// Seed 002 (kitsune's profiler), Identifying Bottlenecks: three phases timed with measure_time,
// then analyze_bottlenecks names the one that takes most of the time. measure_time also opens
// a scope of its name, which is what the analysis reads.
#include <nnprof/nnprof.hpp>

#include <iostream>

#include "workload.hpp"

int main() {
  nnprof::Profiler profiler;
  const nnprof::Metrics collector = profiler.metrics();
  seeds::Matrix data;
  seeds::Matrix output;
  const seeds::Model model(160);  // the forward pass is the heavy phase
  {
    auto t = collector.measure_time("data_loading");
    data = seeds::Matrix::ramp(160);
  }
  {
    auto t = collector.measure_time("forward");
    output = model.forward(data);
  }
  {
    auto t = collector.measure_time("backward");
    seeds::relu(output);
  }
  const std::vector<nnprof::Bottleneck> analysis = profiler.analyze_bottlenecks();
  if (analysis.empty()) {
    std::cout << "Bottleneck: none\n";
  } else {
    std::cout << "Bottleneck: " << analysis.front().name << "\n" << analysis.front().description << "\n";
  }
  std::cout << "checksum " << seeds::checksum(output) << "\n";
}
