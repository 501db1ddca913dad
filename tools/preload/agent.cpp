// The preload agent (libnnprof_preload.so): profiles an unmodified program. `nnprof record
// [--sample-hz N] [--wall] [--memory] -- CMD` runs CMD with this library in LD_PRELOAD; on
// load it starts CPU sampling and/or heap tracking into the global profiler, and it writes a
// .nnprof when the program ends: at exit, on SIGINT or SIGTERM, and with what was collected so
// far when the program crashes.
//
// Writing a profile is not async-signal-safe (it allocates, takes locks, runs SQLite), so a
// signal handler never writes it itself: it wakes a flusher thread, started at load and
// blocked on a pipe, waits (bounded) until that thread has written the file, then restores the
// default action and re-raises the signal, so that the process still dies as it would have.
//
// Environment (set by `nnprof record`; all optional):
//   NNPROF_RECORD_OUT          output path (default: nnprof-<pid>.nnprof in the working directory)
//   NNPROF_RECORD_PID          pid of the recorded process; other processes (children that
//                              exec) write <out stem>.<pid>.nnprof instead
//   NNPROF_RECORD_MANIFEST     file to which every written profile's path is appended
//   NNPROF_RECORD_MEMORY       1: track the heap (the default), 0: do not
//   NNPROF_STACK_SAMPLE_BYTES  MemoryTrackingOptions::stack_sample_bytes
//   NNPROF_MEMORY_INTERVAL_MS  MemoryTrackingOptions::interval
//   NNPROF_SAMPLE_HZ           CPU samples per second per thread (CpuProfilerOptions::hz); 0 or
//                              unset: no CPU sampling
//   NNPROF_SAMPLE_WALL         1: sample wall-clock time instead of CPU time
//   NNPROF_SAMPLE_UNWIND       auto (default), kernel, libunwind or frame-pointer (CpuProfilerOptions::unwinder)
//   NNPROF_RECORD_GPU          1: trace NVIDIA GPUs with CUPTI (nnprof::CudaProfiler)
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <filesystem>
#include <string>
#include <string_view>
#include <thread>

#include "nnprof/cpu_profiler.hpp"
#include "nnprof/gpu.hpp"
#include "nnprof/memory.hpp"
#include "nnprof/profiler.hpp"

namespace {

constexpr int kFatalSignals[] = {SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGABRT};
constexpr int kStopSignals[] = {SIGINT, SIGTERM};
constexpr int kFlushTimeoutMs = 30'000;

struct Agent {
  pid_t pid = 0;
  std::string out;
  std::string manifest;
  nnprof::MemoryTracking* tracking = nullptr;
  nnprof::CpuProfiler* sampler = nullptr;
  nnprof::CudaProfiler* gpu = nullptr;
  std::atomic<bool> written{false};
  int wake[2] = {-1, -1};  // handler -> flusher
  int done[2] = {-1, -1};  // flusher -> handlers (readable once the profile is written)
  std::atomic<pthread_t> flusher{};
  std::atomic<bool> started{false};
};

Agent& agent() {
  static Agent* a = new Agent;  // never destroyed: used until the very end of the process
  return *a;
}

void say(const std::string& line) {
  const std::string text = "nnprof: " + line + "\n";
  [[maybe_unused]] ssize_t rc = write(STDERR_FILENO, text.data(), text.size());
}

std::uint64_t env_u64(const char* name, std::uint64_t fallback) {
  const char* v = std::getenv(name);
  if (v == nullptr || *v == '\0') return fallback;
  char* end = nullptr;
  errno = 0;
  const unsigned long long x = std::strtoull(v, &end, 10);
  if (errno != 0 || end == v || *end != '\0') {
    say(std::string("ignoring ") + name + "=" + v + ": not a non-negative integer");
    return fallback;
  }
  return x;
}

std::string output_path(pid_t pid) {
  namespace fs = std::filesystem;
  const char* out = std::getenv("NNPROF_RECORD_OUT");
  const char* root = std::getenv("NNPROF_RECORD_PID");
  fs::path path = out != nullptr && *out != '\0' ? fs::path(out) : fs::path("nnprof-" + std::to_string(pid) + ".nnprof");
  if (root != nullptr && *root != '\0' && std::to_string(pid) != root) {
    // A process that the recorded one started (and that exec'd): a file of its own.
    path.replace_filename(path.stem().string() + "." + std::to_string(pid) + path.extension().string());
  }
  std::error_code ec;
  const fs::path absolute = fs::absolute(path, ec);
  return ec ? path.string() : absolute.string();
}

/// Writes the profile once per process; later calls (atexit after a signal) do nothing.
void write_profile(const char* why) {
  Agent& a = agent();
  if (getpid() != a.pid) return;  // a forked child that did not exec: not tracked
  if (a.written.exchange(true)) return;
  try {
    if (a.sampler != nullptr) a.sampler->stop();  // keeps every sample taken so far
    if (a.gpu != nullptr) a.gpu->stop();  // waits for the GPUs and flushes CUPTI's buffers
    if (a.tracking != nullptr) a.tracking->stop_at_exit();  // freezes the heap as it is now
    nnprof::global_profiler().save(a.out);
    say(std::string("profile written to ") + a.out + " (" + why + ")");
    if (!a.manifest.empty()) {
      const int fd = open(a.manifest.c_str(), O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0644);
      if (fd >= 0) {
        const std::string line = a.out + "\n";
        [[maybe_unused]] ssize_t rc = write(fd, line.data(), line.size());
        close(fd);
      }
    }
  } catch (const std::exception& e) {
    say(std::string("could not write the profile to ") + a.out + ": " + e.what());
  }
}

void flusher_main() {
  Agent& a = agent();
  a.flusher.store(pthread_self());
  sigset_t all;
  sigfillset(&all);
  pthread_sigmask(SIG_BLOCK, &all, nullptr);  // signals go to the program's threads, not here
  int sig = 0;
  for (;;) {
    const ssize_t n = read(a.wake[0], &sig, sizeof sig);
    if (n == static_cast<ssize_t>(sizeof sig)) break;
    if (n < 0 && errno == EINTR) continue;
    return;  // the pipe closed: nothing more to do
  }
  write_profile(sig == SIGINT ? "interrupted by SIGINT"
                : sig == SIGTERM ? "terminated by SIGTERM"
                : sig == SIGABRT ? "the program aborted (SIGABRT); data up to the crash"
                                 : "the program crashed; data up to the crash");
  const char byte = 1;
  [[maybe_unused]] ssize_t rc = write(a.done[1], &byte, 1);
}

void on_signal(int sig, siginfo_t*, void*) {
  Agent& a = agent();
  const int saved_errno = errno;
  // Only the recorded process, only once the flusher runs, and never on the flusher itself.
  if (getpid() == a.pid && a.started.load() && !pthread_equal(pthread_self(), a.flusher.load())) {
    [[maybe_unused]] ssize_t rc = write(a.wake[1], &sig, sizeof sig);
    pollfd p{a.done[0], POLLIN, 0};
    while (poll(&p, 1, kFlushTimeoutMs) < 0 && errno == EINTR) {
    }
  }
  // Die the way the signal would have killed the program without us.
  struct sigaction dfl {};
  dfl.sa_handler = SIG_DFL;
  sigemptyset(&dfl.sa_mask);
  sigaction(sig, &dfl, nullptr);
  errno = saved_errno;
  raise(sig);
}

void install_handlers() {
  // An alternate stack, so that a stack overflow of the main thread still reaches the handler.
  static char alt_stack[64 * 1024];
  stack_t ss{};
  ss.ss_sp = alt_stack;
  ss.ss_size = sizeof alt_stack;
  sigaltstack(&ss, nullptr);
  struct sigaction sa {};
  sa.sa_sigaction = on_signal;
  sa.sa_flags = SA_SIGINFO | SA_ONSTACK;
  sigemptyset(&sa.sa_mask);
  for (int sig : kFatalSignals) sigaction(sig, &sa, nullptr);
  for (int sig : kStopSignals) {
    struct sigaction old {};
    sigaction(sig, nullptr, &old);
    if (old.sa_handler == SIG_IGN) continue;  // e.g. nohup: keep ignoring, as the program would
    sigaction(sig, &sa, nullptr);
  }
}

void at_exit() { write_profile("the program exited"); }

__attribute__((constructor(102))) void nnprof_agent_start() {
  Agent& a = agent();
  a.pid = getpid();
  try {
    a.out = output_path(a.pid);
    if (const char* m = std::getenv("NNPROF_RECORD_MANIFEST")) a.manifest = m;
    nnprof::MemoryTrackingOptions options;
    options.source = "preload";
    options.partial_ok = true;
    options.stack_sample_bytes = env_u64("NNPROF_STACK_SAMPLE_BYTES", options.stack_sample_bytes);
    options.interval = std::chrono::milliseconds(env_u64("NNPROF_MEMORY_INTERVAL_MS", 100));
    if (options.interval.count() == 0) options.interval = std::chrono::milliseconds(100);
    const bool track_memory = env_u64("NNPROF_RECORD_MEMORY", 1) != 0;
    std::string why;
    if (track_memory && !nnprof::heap_hooks_available(&why)) say("warning: " + why);
    // The flusher first, so that its own allocations are not the program's.
    const bool handlers = pipe2(a.wake, O_CLOEXEC) == 0 && pipe2(a.done, O_CLOEXEC) == 0;
    if (handlers)
      std::thread(flusher_main).detach();
    else
      say(std::string("no crash handler (pipe: ") + std::strerror(errno) + "); the profile is written at exit only");
    nnprof::global_profiler();
    if (track_memory) {
      try {
        a.tracking = new nnprof::MemoryTracking(nnprof::global_profiler(), options);
      } catch (const std::exception& e) {
        say(std::string("heap tracking is off: ") + e.what());
      }
    }
    if (const std::uint64_t hz = env_u64("NNPROF_SAMPLE_HZ", 0); hz != 0) {
      nnprof::CpuProfilerOptions cpu;
      cpu.hz = static_cast<double>(hz);
      if (env_u64("NNPROF_SAMPLE_WALL", 0) != 0) cpu.clock = nnprof::SamplingClock::Wall;
      if (const char* u = std::getenv("NNPROF_SAMPLE_UNWIND")) {
        const std::string_view unwind(u);
        if (unwind == "kernel") cpu.unwinder = nnprof::Unwinder::Kernel;
        if (unwind == "libunwind") cpu.unwinder = nnprof::Unwinder::Libunwind;
        if (unwind == "frame-pointer") cpu.unwinder = nnprof::Unwinder::FramePointer;
      }
      try {
        a.sampler = new nnprof::CpuProfiler(nnprof::global_profiler(), cpu);
      } catch (const std::exception& e) {
        say(std::string("CPU sampling is off: ") + e.what());
      }
    }
    if (env_u64("NNPROF_RECORD_GPU", 0) != 0) {
      a.gpu = new nnprof::CudaProfiler(nnprof::global_profiler());
      say(a.gpu->status().tracing() ? "GPU: " + a.gpu->status().message : "warning: " + a.gpu->status().message);
    }
    if (handlers) {
      a.started.store(true);
      install_handlers();
    }
    std::atexit(at_exit);
  } catch (const std::exception& e) {
    say(std::string("profiling is off: ") + e.what());
  }
}

}  // namespace
