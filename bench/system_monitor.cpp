// The system monitor's cost against a training step (issue 22): the same compute-bound "step"
// (three 384x384 matmuls of the transformer's kernels, ~a few ms) run in alternating blocks with
// and without a SystemMonitor at its default 500 ms interval, plus the monitor thread's own CPU
// time read from /proc/self/task/<tid>/schedstat: what it takes from the machine whichever core it
// runs on. Prints both ratios; docs/PERFORMANCE.md has the figures.
//
//   nnprof_bench_system [BLOCKS] [STEPS_PER_BLOCK] [INTERVAL_MS]   (defaults 6, 1200, 500)
#include <dirent.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <string>
#include <vector>

#include "kernels.hpp"
#include "nnprof/system.hpp"

namespace {

namespace k = nnprof::transformer::kernels;

constexpr int kN = 384;

struct Step {
  std::vector<float> a = std::vector<float>(kN * kN, 0.5f), b = std::vector<float>(kN * kN, 0.25f),
                     c = std::vector<float>(kN * kN);
  void run() {
    for (int i = 0; i < 3; ++i) k::matmul(kN, kN, kN, a.data(), kN, b.data(), kN, c.data(), kN);
    a[0] = c[kN + 1] * 1e-9f;  // a dependency between steps, so nothing is hoisted
  }
};

double seconds_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

// Seconds on the CPU of this process's thread named `name` (schedstat: nanoseconds, unlike the
// 10 ms ticks of stat); < 0 when no thread has that name.
double thread_cpu_seconds(const std::string& name) {
  DIR* dir = opendir("/proc/self/task");
  if (dir == nullptr) return -1.0;
  double seconds = -1.0;
  while (dirent* e = readdir(dir)) {
    if (e->d_name[0] == '.') continue;
    std::ifstream comm(std::string("/proc/self/task/") + e->d_name + "/comm");
    std::string comm_name;
    std::getline(comm, comm_name);
    if (comm_name != name) continue;
    std::ifstream schedstat(std::string("/proc/self/task/") + e->d_name + "/schedstat");
    unsigned long long on_cpu_ns = 0;
    if (schedstat >> on_cpu_ns) seconds = static_cast<double>(on_cpu_ns) / 1e9;
  }
  closedir(dir);
  return seconds;
}

}  // namespace

int main(int argc, char** argv) {
  const int blocks = argc > 1 ? std::atoi(argv[1]) : 6;
  const int steps = argc > 2 ? std::atoi(argv[2]) : 1200;
  nnprof::SystemOptions options;
  if (argc > 3) options.interval_ms = static_cast<std::uint32_t>(std::atoi(argv[3]));
  Step step;
  for (int i = 0; i < 20; ++i) step.run();  // warm caches and clocks

  // The cost of one sample: a monitor at 10 ms for 2 s, its thread's CPU time per tick.
  double per_sample_ms = 0.0;
  {
    nnprof::SystemOptions fast = options;
    fast.interval_ms = 10;
    nnprof::SystemMonitor monitor(fast);
    const double cpu0 = std::max(0.0, thread_cpu_seconds("nnprof-system"));
    const std::size_t samples0 = monitor.result().sample_ns.size();
    const auto t0 = std::chrono::steady_clock::now();
    while (seconds_since(t0) < 2.0) step.run();
    const double cpu1 = thread_cpu_seconds("nnprof-system");
    const std::size_t ticks = monitor.result().sample_ns.size() - samples0;
    monitor.stop();
    if (ticks > 0 && cpu1 >= 0.0) per_sample_ms = 1e3 * (cpu1 - cpu0) / static_cast<double>(ticks);
  }

  std::vector<double> off, on;
  double monitor_cpu = 0.0, monitored_wall = 0.0;
  std::size_t samples = 0;
  for (int b = 0; b < blocks; ++b) {
    // Alternate which runs first, so a drift of the machine's speed falls on both.
    for (int pass = 0; pass < 2; ++pass) {
      const bool monitored = (pass == 0) == (b % 2 == 0);
      std::chrono::steady_clock::time_point t0;
      if (monitored) {
        nnprof::SystemMonitor monitor(options);
        const double cpu0 = std::max(0.0, thread_cpu_seconds("nnprof-system"));
        t0 = std::chrono::steady_clock::now();
        for (int i = 0; i < steps; ++i) step.run();
        const double wall = seconds_since(t0);
        const double cpu1 = thread_cpu_seconds("nnprof-system");
        monitor.stop();
        on.push_back(wall / steps);
        monitored_wall += wall;
        if (cpu1 >= 0.0) monitor_cpu += cpu1 - cpu0;
        samples += monitor.result().sample_ns.size();
      } else {
        t0 = std::chrono::steady_clock::now();
        for (int i = 0; i < steps; ++i) step.run();
        off.push_back(seconds_since(t0) / steps);
      }
    }
  }
  std::sort(off.begin(), off.end());
  std::sort(on.begin(), on.end());
  const double off_ms = off[off.size() / 2] * 1e3, on_ms = on[on.size() / 2] * 1e3;
  std::printf("interval %u ms, %d blocks x %d steps, %zu samples taken\n", options.interval_ms, blocks, steps, samples);
  std::printf("step, median of blocks: without monitor %.3f ms, with monitor %.3f ms, ratio %.4f\n", off_ms, on_ms,
              on_ms / off_ms);
  std::printf("monitor thread CPU: %.4f s over %.2f s monitored = %.4f %% of one core\n", monitor_cpu, monitored_wall,
              100.0 * monitor_cpu / monitored_wall);
  std::printf("one sample costs %.3f ms of CPU: %.4f %% of one core at %u ms\n", per_sample_ms,
              100.0 * per_sample_ms / options.interval_ms, options.interval_ms);
  return 0;
}
