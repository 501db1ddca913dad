// Seed 000 (axonml-profile), Features: "Timeline Profiler: Record timestamped events for
// visualization and analysis". Every scope is a span with its start and end; the Chrome trace
// format opens the timeline in chrome://tracing or Perfetto.
#include <nnprof/nnprof.hpp>

#include <iostream>

#include "workload.hpp"

int main() try {
  nnprof::Profiler profiler;
  const seeds::Model model(32);
  seeds::Matrix x = seeds::Matrix::ramp(32);
  for (int step = 0; step < 3; ++step) {
    NNPROF_SCOPE_IN(profiler, "step");
    {
      NNPROF_SCOPE_IN(profiler, "forward");
      x = model.forward(x);
    }
    {
      NNPROF_SCOPE_IN(profiler, "backward");
      seeds::relu(x);
    }
  }

  const nnprof::Profile profile = profiler.snapshot();
  for (const nnprof::Span& span : profile.spans)
    std::cout << "event " << profile.str(span.name) << " depth " << span.depth << " start " << span.start_ns
              << "ns end " << span.end_ns << "ns\n";
  profiler.summary().export_to("timeline.json", nnprof::ReportFormat::Chrome);
  std::cout << profile.spans.size() << " events, timeline written to timeline.json (checksum "
            << seeds::checksum(x) << ")\n";
  return 0;
} catch (const nnprof::Error& e) {
  std::cerr << "error: " << e.what() << "\n";
  return 1;
}
