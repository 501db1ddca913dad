// Seed 001 (Democratising, "Profiling"), Advanced Profiling / Custom Metrics: a counter, a
// histogram and a gauge updated once per batch, saved as JSON and drawn as a PNG.
#include <nnprof/nnprof.hpp>

#include <algorithm>
#include <iostream>

#include "workload.hpp"

namespace {

double compute_sparsity(const seeds::Matrix& m) {
  return static_cast<double>(std::count(m.values.begin(), m.values.end(), 0.0f)) / static_cast<double>(m.values.size());
}

}  // namespace

int main() {
  nnprof::Profiler profiler;
  const nnprof::Metrics tracker = profiler.metrics();
  // Declared up front with their kind and unit (a name's kind is fixed by its first use).
  const nnprof::Counter matrix_multiplies = tracker.counter("matrix_multiplies");
  const nnprof::Histogram activation_sparsity = tracker.histogram("activation_sparsity", "fraction");
  const nnprof::Gauge memory_usage = tracker.gauge("memory_usage", "bytes");

  const seeds::Model model(48);
  double sum = 0.0;
  for (int batch = 0; batch < 20; ++batch) {
    seeds::Matrix input = seeds::Matrix::ramp(48);
    input.values[static_cast<std::size_t>(batch)] = 10.0f;  // each batch a little different
    profiler.record_alloc("activations", input.values.size() * sizeof(float));

    matrix_multiplies.increment();
    const seeds::Matrix output = model.forward(input);
    activation_sparsity.record(compute_sparsity(output));
    memory_usage.set(static_cast<double>(profiler.current_memory()));  // the named memory counters
    profiler.record_free("activations", input.values.size() * sizeof(float));
    sum += seeds::checksum(output);
  }

  tracker.save_metrics("metrics.json");
  tracker.plot_metrics("metrics.png");
  const auto sparsity = tracker.summary("activation_sparsity");
  std::cout << "matrix_multiplies: " << tracker.summary("matrix_multiplies")->sum << "\n";
  std::cout << "activation_sparsity: " << sparsity->count << " observations, mean " << sparsity->mean << "\n";
  std::cout << "wrote metrics.json and metrics.png; checksum " << sum << "\n";
}
