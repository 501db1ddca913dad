// A program that profiles itself with nnprof's CpuProfiler, as a user's instrumented program
// does; run under `nnprof record`, whose agent samples too, it must still run as it would alone.
#include <cstdio>
#include <ctime>

#include "nnprof/cpu_profiler.hpp"
#include "nnprof/profiler.hpp"

namespace {
volatile double g_sink;

void burn(int ms) {
  const std::clock_t end = std::clock() + static_cast<std::clock_t>(ms) * CLOCKS_PER_SEC / 1000;
  double x = 1.0;
  while (std::clock() < end)
    for (int i = 0; i < 100000; ++i) g_sink = x = x * 1.0000001 + 1e-9;
}
}  // namespace

int main() {
  nnprof::CpuProfiler sampler(nnprof::global_profiler());
  burn(200);
  sampler.stop();
  std::printf("own profiler done\n");
  return 0;
}
