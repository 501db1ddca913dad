// Seed 001 (Democratising, "Profiling"), Best Practices / Interactive analysis: a profiler with
// a web interface, real-time updates, serve(), then record() around the training. The page at
// the printed URL follows the run live; /metrics, /debug/pprof/profile and /api/v1/live serve
// the same data to Prometheus, pprof scrapers and scripts (docs/LIVE.md).
#include <nnprof/live_server.hpp>
#include <nnprof/nnprof.hpp>

#include <httplib.h>

#include <iostream>
#include <string>

#include "workload.hpp"

namespace {

double train_model(nnprof::Profiler& profiler) {
  const seeds::Model model(64);
  double sum = 0.0;
  for (int step = 0; step < 50; ++step) {
    NNPROF_SCOPE_IN(profiler, "train_step");
    sum += seeds::checksum(model.forward(seeds::Matrix::ramp(64)));
    profiler.add_items("train_step", 32);
  }
  return sum;
}

}  // namespace

int main() {
  // The seed serves on 8080; 0 takes any free port, so that this example never collides with
  // another server on the machine.
  auto profiler = nnprof::InteractiveProfilerBuilder().web_interface(0).real_time_updates(true).build();
  profiler.serve();
  std::cout << "Live profile at " << profiler.server()->url() << '\n';

  const double result = profiler.record([&] { return train_model(profiler.profiler()); });

  // What a scraper sees now: the steps of the run in Prometheus text.
  httplib::Client client("127.0.0.1", profiler.server()->port());
  const auto metrics = client.Get("/metrics");
  if (!metrics || metrics->status != 200) {
    std::cerr << "the live server did not answer\n";
    return 1;
  }
  for (std::size_t at = 0, end; (end = metrics->body.find('\n', at)) != std::string::npos; at = end + 1) {
    const std::string line = metrics->body.substr(at, end - at);
    if (line.rfind("nnprof_steps_total", 0) == 0 || line.rfind("nnprof_step_items_total", 0) == 0)
      std::cout << line << '\n';
  }
  std::cout << "checksum " << result << '\n';
  return 0;
}
