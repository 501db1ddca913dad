// Seed 002 (kitsune's profiler), Custom Reporter: the collected metrics saved as JSON and CSV,
// the whole report as HTML, and the summary printed. metrics.csv is tidy (one row per point);
// metrics_summary.csv has one row per metric.
#include <nnprof/nnprof.hpp>

#include <iostream>

#include "workload.hpp"

int main() {
  nnprof::Profiler profiler;
  const nnprof::Metrics collector = profiler.metrics();
  const seeds::Model model(32);
  for (int step = 0; step < 8; ++step) {
    auto timer = collector.measure_time("step");
    collector.record("loss", seeds::checksum(model.forward(seeds::Matrix::ramp(32))) / (1.0 + step));
    collector.increment("samples", 16);
  }
  collector.save_metrics("metrics.json");
  profiler.save("report.html");
  collector.save_metrics("metrics.csv");
  collector.save_metrics_summary("metrics_summary.csv");
  profiler.print_summary();
  std::cout << "wrote metrics.json, report.html, metrics.csv and metrics_summary.csv\n";
}
