// Seed 004 (SmallMind's CodeProfiler), "Nested Profiling": a scope opened inside another is
// recorded as called by it. The merged call tree of a snapshot holds that relation (a node's
// parent is its caller); the report's Callers section lists it for every scope, as CodeProfiler's
// "Called by: GenerateToken (150 times)".
#include <nnprof/nnprof.hpp>

#include <cstdint>
#include <iostream>
#include <map>
#include <string>

#include "workload.hpp"

int main() try {
  nnprof::Profiler profiler;
  seeds::Matrix x = seeds::Matrix::ramp(32);
  const seeds::Model model(32);

  for (int step = 0; step < 3; ++step) {
    const nnprof::ProfileGuard outer(profiler, "OuterOperation");
    // Outer operation code
    seeds::relu(x);
    {
      const nnprof::ProfileGuard inner(profiler, "InnerOperation");
      // Inner operation code
      x = model.forward(x);
    }
    // More outer operation code
    seeds::relu(x);
  }

  // The profiler tracks that InnerOperation was called by OuterOperation
  const nnprof::Profile profile = profiler.snapshot();
  std::map<std::string, std::map<std::string, std::uint64_t>> called_by;
  for (std::size_t i = 1; i < profile.call_tree.size(); ++i) {
    const nnprof::CallTreeNode& node = profile.call_tree[i];
    const std::string caller =
        node.parent == 0 ? "(top level)" : std::string(profile.str(profile.call_tree[node.parent].name));
    called_by[std::string(profile.str(node.name))][caller] += node.time.count;
  }
  for (const auto& [scope, callers] : called_by) {
    std::cout << scope << "\n";
    for (const auto& [caller, times] : callers) std::cout << "  Called by: " << caller << " (" << times << " times)\n";
  }

  nnprof::Report(profile).export_to("report.md");
  std::cout << "wrote report.md (checksum " << seeds::checksum(x) << ")\n";
  return 0;
} catch (const nnprof::Error& e) {
  std::cerr << "error: " << e.what() << "\n";
  return 1;
}
