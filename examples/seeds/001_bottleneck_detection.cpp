// Seed 001 (Democratising, "Profiling"), Performance Analysis / Bottleneck Detection: the
// roofline verdict of every operation of a forward pass: memory- or compute-bound, and how
// close to that roof it ran. The work of each operation (FLOPs, bytes) is declared where it
// runs; the roofs are this machine's, measured once and cached (`nnprof machine`).
#include <nnprof/nnprof.hpp>

#include <iostream>

#include "workload.hpp"

int main() {
  // The roofs: the cached peaks of this machine, or a short measurement cached for next time.
  nnprof::MachineMeasureOptions quick;
  quick.duration = std::chrono::milliseconds(10);
  quick.triad_array_bytes = 16u << 20;
  const nnprof::MachinePeaks peaks = nnprof::machine_peaks(false, nnprof::default_machine_file(), quick);

  nnprof::ComputeProfiler analyzer;
  const seeds::Model model(128);
  const seeds::Matrix input = seeds::Matrix::ramp(128);
  double sum = 0.0;
  for (int i = 0; i < 4; ++i) {
    const nnprof::OpCost matmul = nnprof::flops::matmul(128, 128, 128);
    analyzer.start_with_flops("matmul", matmul.flops, static_cast<std::uint64_t>(matmul.bytes));
    seeds::Matrix out = seeds::matmul(input, model.weights);
    analyzer.stop("matmul");
    analyzer.start_with_flops("relu", 128.0 * 128.0, 2 * 128 * 128 * sizeof(float));
    seeds::relu(out);
    analyzer.stop("relu");
    sum += seeds::checksum(out);
  }
  const nnprof::Profile data = analyzer.profiler().snapshot();

  std::cout << "Performance bottlenecks:\n";
  for (const nnprof::RooflineVerdict& bottleneck : nnprof::roofline_verdicts(data))
    std::cout << bottleneck.operation << ": " << bottleneck.limitation << " bound (" << bottleneck.utilization * 100.0
              << "% of theoretical peak)\n";
  std::cout << "ridge point: " << peaks.ridge_point(nnprof::Precision::Fp32, true) << " FLOP/byte; checksum " << sum
            << "\n";
}
