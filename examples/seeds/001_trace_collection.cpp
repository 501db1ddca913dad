// Seed 001 (Democratising, "Profiling"), Advanced Profiling / Trace Collection: spans of every
// scope (and CPU samples at 10 kHz) in a 1 MiB buffer, saved, then the critical path: the
// chain of work that decided when the forward pass ended.
#include <nnprof/nnprof.hpp>

#include <iostream>

#include "workload.hpp"

namespace {

seeds::Matrix forward(nnprof::Profiler& profiler, const seeds::Model& model, const seeds::Matrix& input) {
  NNPROF_SCOPE_IN(profiler, "forward");
  seeds::Matrix hidden = [&] {
    NNPROF_SCOPE_IN(profiler, "matmul");
    return seeds::matmul(input, model.weights);
  }();
  {
    NNPROF_SCOPE_IN(profiler, "relu");
    seeds::relu(hidden);
  }
  NNPROF_SCOPE_IN(profiler, "output_projection");
  return seeds::matmul(hidden, model.weights);
}

}  // namespace

int main() {
  auto tracer = nnprof::TracerBuilder()
                    .sampling_rate(10000)     // 10 kHz
                    .buffer_size(1024 * 1024)  // 1 MiB buffer
                    .build();

  const seeds::Model model(128);
  const seeds::Matrix input = seeds::Matrix::ramp(128);
  tracer.start();
  const seeds::Matrix result = forward(tracer.profiler(), model, input);
  const nnprof::Trace traces = tracer.stop();

  traces.save("profile.json");             // the JSON report
  traces.save("profile.trace.json");       // the Chrome trace of the same spans

  std::cout << "Critical path operations:\n";
  for (const nnprof::CriticalPathOperation& op : traces.analyze_critical_path())
    std::cout << op.name << ": " << op.duration_us << "us (" << op.percentage << "% of total time)\n";
  std::cout << "checksum: " << seeds::checksum(result) << "\n";
}
