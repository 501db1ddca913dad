// Seed 001 (Democratising, "Profiling"), Profile Visualization / Timeline visualization: a
// timeline with CPU, GPU and Memory tracks around a forward pass, written as a Chrome trace
// (open in https://ui.perfetto.dev) and as a CPU flame graph.
#include <nnprof/nnprof.hpp>

#include <chrono>
#include <iostream>

#include "workload.hpp"

int main() {
  auto timeline = nnprof::TimelineBuilder().add_track("CPU").add_track("GPU").add_track("Memory").build();

  const seeds::Model model(128);
  nnprof::Profiler& profiler = timeline.profiler();
  const double sum = timeline.record([&] {
    double s = 0.0;
    const auto until = std::chrono::steady_clock::now() + std::chrono::milliseconds(100);
    while (std::chrono::steady_clock::now() < until) {
      NNPROF_SCOPE_IN(profiler, "forward");
      profiler.record_alloc("activations", 128 * 128 * sizeof(float));
      s += seeds::checksum(model.forward(seeds::Matrix::ramp(128)));
      profiler.record_free("activations", 128 * 128 * sizeof(float));
    }
    return s;
  });

  timeline.save_chrome_trace("timeline.json");
  timeline.save_flamegraph("flamegraph.svg");
  for (const nnprof::TimelineTrack& track : timeline.tracks())
    std::cout << "track " << track.name << ": " << (track.collecting ? "recorded" : "not recorded") << " (" << track.note
              << ")\n";
  std::cout << "wrote timeline.json and flamegraph.svg; checksum " << sum << "\n";
}
