// Continuous profiling's cost (issue 23): the same instrumented training step (three 384x384
// matmuls of the transformer's kernels under NNPROF_SCOPE("step"), ~a few ms) run in alternating
// blocks with and without a ContinuousProfiler closing windows every INTERVAL_MS, plus the window
// thread's own CPU time (schedstat of "nnprof-windows"); then the profiler's state over a
// simulated week of 60 s windows driven by a fake clock. docs/PERFORMANCE.md has the figures.
//
//   nnprof_bench_continuous [BLOCKS] [STEPS_PER_BLOCK] [INTERVAL_MS]   (defaults 6, 600, 200)
#include <dirent.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <string>
#include <vector>

#include "kernels.hpp"
#include "nnprof/continuous.hpp"
#include "nnprof/profiler.hpp"
#include "nnprof/scope.hpp"

namespace {

namespace k = nnprof::transformer::kernels;

constexpr int kN = 384;

struct Step {
  std::vector<float> a = std::vector<float>(kN * kN, 0.5f), b = std::vector<float>(kN * kN, 0.25f),
                     c = std::vector<float>(kN * kN);
  void run() {
    NNPROF_SCOPE("step");
    for (int i = 0; i < 3; ++i) {
      NNPROF_SCOPE("matmul");
      k::matmul(kN, kN, kN, a.data(), kN, b.data(), kN, c.data(), kN);
    }
    a[0] = c[kN + 1] * 1e-9f;  // a dependency between steps, so nothing is hoisted
    nnprof::add_items("step", 32);
  }
};

// CPU time of the calling thread: on a machine shared with other work, the step's own cost
// without the time it waited for a core.
double thread_cpu_now() {
  timespec t{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
  return static_cast<double>(t.tv_sec) + static_cast<double>(t.tv_nsec) / 1e9;
}

double seconds_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

// Seconds on the CPU of this process's thread named `name`; < 0 when no thread has that name.
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

void simulated_week() {
  nnprof::ProfilerOptions po;
  po.record_spans = false;
  nnprof::Profiler p(po);
  std::uint64_t now = 0;
  nnprof::ContinuousOptions o;
  o.interval = std::chrono::seconds(60);
  o.metrics = {};
  o.step_scope = "step";
  o.clock = [&now] { return now; };
  o.background = false;
  o.analyze_every = 0;
  nnprof::ContinuousProfiler cp(p, o);
  cp.start();
  std::size_t max_bytes = 0;
  const auto t0 = std::chrono::steady_clock::now();
  std::printf("simulated week, 60 s windows (fake clock):\n");
  for (int day = 1; day <= 7; ++day) {
    for (int m = 0; m < 24 * 60; ++m) {
      for (int s = 0; s < 4; ++s) {
        NNPROF_SCOPE_IN(p, "step");
        for (int layer = 0; layer < 24; ++layer) {
          NNPROF_SCOPE_IN(p, "layer");
        }
      }
      now += 60'000'000'000ull;
      {
        NNPROF_SCOPE_IN(p, "step");  // the step end that closes the window
      }
      cp.poll();
      max_bytes = std::max(max_bytes, cp.state_bytes());
    }
    std::printf("  day %d: %zu windows, state %.3f MiB (max so far %.3f MiB)\n", day, cp.current().windows.size(),
                static_cast<double>(cp.state_bytes()) / (1 << 20), static_cast<double>(max_bytes) / (1 << 20));
  }
  const double seconds = seconds_since(t0);
  const auto t1 = std::chrono::steady_clock::now();
  const nnprof::Profile done = cp.stop();
  std::printf("  %.3f ms per window closed; stop() with trends over %zu windows: %.1f ms\n",
              seconds * 1e3 / (7 * 24 * 60), done.continuous.windows.size(), seconds_since(t1) * 1e3);
}

}  // namespace

int main(int argc, char** argv) {
  const int blocks = argc > 1 ? std::atoi(argv[1]) : 6;
  const int steps = argc > 2 ? std::atoi(argv[2]) : 600;
  const int interval_ms = argc > 3 ? std::atoi(argv[3]) : 200;
  Step step;
  for (int i = 0; i < 20; ++i) step.run();  // warm caches and clocks

  std::vector<double> off, on, off_cpu, on_cpu;
  double thread_cpu = 0.0, continuous_wall = 0.0;
  std::size_t windows = 0;
  for (int b = 0; b < blocks; ++b) {
    // Alternate which runs first, so a drift of the machine's speed falls on both.
    for (int pass = 0; pass < 2; ++pass) {
      const bool continuous = (pass == 0) == (b % 2 == 0);
      if (continuous) {
        nnprof::ContinuousOptions o;
        o.interval = std::chrono::milliseconds(interval_ms);
        o.metrics = {};
        o.step_scope = "step";
        nnprof::ContinuousProfiler cp(nnprof::global_profiler(), o);
        cp.start();
        const double cpu0 = std::max(0.0, thread_cpu_seconds("nnprof-windows"));
        const auto t0 = std::chrono::steady_clock::now();
        const double own0 = thread_cpu_now();
        for (int i = 0; i < steps; ++i) step.run();
        on_cpu.push_back((thread_cpu_now() - own0) / steps);
        const double wall = seconds_since(t0);
        const double cpu1 = thread_cpu_seconds("nnprof-windows");
        const nnprof::Profile done = cp.stop();
        on.push_back(wall / steps);
        continuous_wall += wall;
        if (cpu1 >= 0.0) thread_cpu += cpu1 - cpu0;
        windows += done.continuous.windows.size();
      } else {
        const auto t0 = std::chrono::steady_clock::now();
        const double own0 = thread_cpu_now();
        for (int i = 0; i < steps; ++i) step.run();
        off_cpu.push_back((thread_cpu_now() - own0) / steps);
        off.push_back(seconds_since(t0) / steps);
      }
    }
  }
  for (auto* v : {&off, &on, &off_cpu, &on_cpu}) std::sort(v->begin(), v->end());
  const double off_ms = off[off.size() / 2] * 1e3, on_ms = on[on.size() / 2] * 1e3;
  const double off_cpu_ms = off_cpu[off_cpu.size() / 2] * 1e3, on_cpu_ms = on_cpu[on_cpu.size() / 2] * 1e3;
  std::printf("interval %d ms, %d blocks x %d steps, %zu windows closed\n", interval_ms, blocks, steps, windows);
  std::printf("step, median of blocks: without continuous %.3f ms, with %.3f ms, ratio %.4f\n", off_ms, on_ms,
              on_ms / off_ms);
  std::printf("step CPU time of the training thread, median of blocks: without %.3f ms, with %.3f ms, ratio %.4f\n",
              off_cpu_ms, on_cpu_ms, on_cpu_ms / off_cpu_ms);
  std::printf("window thread CPU: %.4f s over %.2f s = %.3f %% of one core, %.3f ms per window\n", thread_cpu,
              continuous_wall, 100.0 * thread_cpu / continuous_wall,
              windows > 0 ? 1e3 * thread_cpu / static_cast<double>(windows) : 0.0);
  simulated_week();
  return 0;
}
