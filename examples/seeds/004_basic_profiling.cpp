// Seed 004 (SmallMind's CodeProfiler), "Programmatic Usage / Basic Profiling": profile a section
// with a scope, read the hot paths, generate the Markdown report. BeginScope is a ProfileGuard
// (or NNPROF_SCOPE_IN); GetHotPaths is top_by_time; GenerateReport + WriteAllText is
// summary().export_to, which writes the file complete or not at all.
#include <nnprof/nnprof.hpp>

#include <iostream>

#include "workload.hpp"

int main() try {
  nnprof::Profiler profiler;
  seeds::Matrix x = seeds::Matrix::ramp(48);
  const seeds::Model model(48);

  // Profile a code section
  for (int call = 0; call < 4; ++call) {
    const nnprof::ProfileGuard scope(profiler, "MyOperation");
    x = model.forward(x);
  }

  // Get hot paths
  for (const nnprof::ScopeTiming& hot : profiler.top_by_time(10))
    std::cout << hot.name << ": " << hot.calls << " calls, " << hot.total.count() << "ns\n";

  // Generate report
  profiler.summary().export_to("report.md");
  std::cout << "wrote report.md (checksum " << seeds::checksum(x) << ")\n";
  return 0;
} catch (const nnprof::Error& e) {
  std::cerr << "error: " << e.what() << "\n";
  return 1;
}
