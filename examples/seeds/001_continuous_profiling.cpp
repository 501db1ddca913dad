// Seed 001 (Democratising, "Profiling"), Best Practices / Continuous profiling: a
// ContinuousProfiler with a 60 s interval and the cpu, memory and gpu metrics around a training
// job, then the trends and anomalies of its windows. The job here is short, so the run is one
// window (closed by stop()); a real job gets one per minute, rolled up as they age.
#include <nnprof/nnprof.hpp>

#include <chrono>
#include <iostream>

#include "workload.hpp"

namespace {

double train_model() {
  const seeds::Model model(96);
  double sum = 0.0;
  for (int step = 0; step < 200; ++step) {
    NNPROF_SCOPE("train_step");
    sum += seeds::checksum(model.forward(seeds::Matrix::ramp(96)));
    nnprof::add_items("train_step", 32);
  }
  return sum;
}

}  // namespace

int main() {
  // Setup continuous profiler
  auto profiler = nnprof::ContinuousProfilerBuilder()
                      .sampling_interval(std::chrono::seconds(60))
                      .metrics({"cpu", "memory", "gpu"})
                      .build();

  // Start profiling
  profiler.start();

  // Run long training job
  const double checksum = train_model();

  // Stop and analyze
  const nnprof::Profile profile_data = profiler.stop();
  const nnprof::PerformanceTrends trends = nnprof::analyze_performance_trends(profile_data);

  const nnprof::ContinuousProfile& c = profile_data.continuous;
  std::uint64_t steps = 0;
  for (const nnprof::ProfileWindow& w : c.windows) steps += w.steps;
  std::cout << "Continuous profile: " << c.windows.size() << " window(s) of " << c.interval_ns / 1'000'000'000
            << " s, step scope " << c.step_scope << ", " << steps << " steps (checksum " << checksum << ")\n";
  std::cout << "Series analysed: " << trends.series.size() << ", anomalies: " << trends.anomalies.size() << "\n";
  for (const nnprof::Anomaly& a : trends.anomalies) std::cout << "  " << a.description << "\n";
  return 0;
}
