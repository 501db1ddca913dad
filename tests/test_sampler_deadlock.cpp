// The sampler must never hang the program it samples (issue 16, defect 1). Its signal handler
// used to call libunwind, whose thread-local block glibc allocates on a thread's first unwind:
// a sample that interrupted malloc on a fresh thread then waited forever for the arena lock
// the thread itself held. Here fresh threads loop malloc/free while they are sampled, under
// every unwinder and with fork, each run in a child process under a watchdog so that a hang
// fails the test instead of hanging it. With the old handler every configuration that
// unwound in the handler hung at its first run.
#include <gtest/gtest.h>

#include <signal.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <thread>
#include <vector>

#include "nnprof/cpu_profiler.hpp"
#include "nnprof/profiler.hpp"

namespace {

using namespace std::chrono_literals;

constexpr int kRuns = 5;
constexpr auto kWatchdog = 30s;  // a run takes well under a second; only a hang gets near this

std::chrono::nanoseconds thread_cpu_now() {
  timespec ts{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return std::chrono::seconds(ts.tv_sec) + std::chrono::nanoseconds(ts.tv_nsec);
}

// 50 ms of CPU time spent almost all inside malloc and free holding the arena's lock: blocks
// above the thread cache's sizes (1 KiB) and below the mmap threshold, so every call takes the
// lock, and the thread cache's small bins stay empty (a small allocation from the handler,
// such as a thread-local block, then needs the arena's lock too).
void allocate_and_free() {
  void* live[64] = {};
  std::uint64_t k = 0;
  const auto start = thread_cpu_now();
  while (thread_cpu_now() - start < 50ms) {
    for (int j = 0; j < 256; ++j, ++k) {
      std::free(live[k % 64]);
      live[k % 64] = std::malloc(1100 + (k * 7919) % 30000);
      asm volatile("" : : "r"(live) : "memory");  // the blocks escape: no call is optimised away
    }
  }
  for (void* p : live) std::free(p);
}

// Forks short children that allocate, as a program that runs subprocesses does, while the
// other threads allocate.
void fork_children() {
  for (int i = 0; i < 8; ++i) {
    const pid_t pid = fork();
    if (pid == 0) {
      void* p = std::malloc(100);
      asm volatile("" : : "r"(p) : "memory");
      std::free(p);
      _exit(0);
    }
    if (pid > 0) waitpid(pid, nullptr, 0);
  }
}

// The child's body: three rounds of three new threads, sampled. Exit status 0 when samples
// were taken, 3 when none (a sampler that never samples also never hangs).
[[noreturn]] void sampled_workload(nnprof::Unwinder unwinder, double hz, bool with_fork) {
  int status = 4;
  try {
    nnprof::Profiler profiler;
    nnprof::CpuProfilerOptions o;
    o.hz = hz;
    o.unwinder = unwinder;
    nnprof::CpuProfiler sampler(profiler, o);
    for (int round = 0; round < 3; ++round) {
      std::vector<std::thread> threads;
      for (int i = 0; i < 3; ++i) threads.emplace_back(allocate_and_free);
      if (with_fork) threads.emplace_back(fork_children);
      for (auto& t : threads) t.join();
    }
    sampler.stop();
    status = profiler.snapshot().cpu_samples.empty() ? 3 : 0;
  } catch (...) {
    status = 5;
  }
  _exit(status);
}

// Runs the workload kRuns times, each in a child killed by the watchdog if it hangs.
void expect_no_hang(nnprof::Unwinder unwinder, double hz, bool with_fork) {
  for (int run = 0; run < kRuns; ++run) {
    const pid_t child = fork();
    ASSERT_GE(child, 0);
    if (child == 0) sampled_workload(unwinder, hz, with_fork);
    int status = 0;
    bool done = false;
    for (const auto deadline = std::chrono::steady_clock::now() + kWatchdog; std::chrono::steady_clock::now() < deadline;) {
      if (waitpid(child, &status, WNOHANG) == child) {
        done = true;
        break;
      }
      std::this_thread::sleep_for(10ms);
    }
    if (!done) {
      kill(child, SIGKILL);
      waitpid(child, &status, 0);
      FAIL() << "run " << run << " hung: the sampled program deadlocked";
    }
    ASSERT_TRUE(WIFEXITED(status)) << "run " << run << " died of signal " << WTERMSIG(status);
    ASSERT_EQ(WEXITSTATUS(status), 0) << "run " << run << (WEXITSTATUS(status) == 3 ? ": no samples" : ": failed");
  }
}

TEST(SamplerDeadlock, AutoAtTheDefaultRate) { expect_no_hang(nnprof::Unwinder::Auto, 199, false); }
TEST(SamplerDeadlock, DwarfAtTheDefaultRate) { expect_no_hang(nnprof::Unwinder::Libunwind, 199, false); }
TEST(SamplerDeadlock, FramePointersAtTheDefaultRate) { expect_no_hang(nnprof::Unwinder::FramePointer, 199, false); }
// Below 250 Hz there is no perf event for the kernel to walk the stack: the handler does.
TEST(SamplerDeadlock, KernelAtTheDefaultRate) { expect_no_hang(nnprof::Unwinder::Kernel, 199, false); }
// Above 250 Hz: a perf event per thread, signalling the thread (Dwarf) or not at all (Kernel).
TEST(SamplerDeadlock, DwarfThroughPerfEvents) { expect_no_hang(nnprof::Unwinder::Libunwind, 1000, false); }
TEST(SamplerDeadlock, KernelThroughPerfEvents) { expect_no_hang(nnprof::Unwinder::Kernel, 1000, false); }
TEST(SamplerDeadlock, AutoWithFork) { expect_no_hang(nnprof::Unwinder::Auto, 199, true); }
TEST(SamplerDeadlock, DwarfThroughPerfEventsWithFork) { expect_no_hang(nnprof::Unwinder::Libunwind, 1000, true); }

}  // namespace
