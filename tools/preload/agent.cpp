// The preload agent (libnnprof_preload.so): profiles an unmodified program. `nnprof record
// [--sample-hz N] [--wall] [--memory] -- CMD` runs CMD with this library in LD_PRELOAD; on
// load it starts CPU sampling and/or heap tracking into the global profiler, and it writes a
// .nnprof when the program ends: at exit, on a terminating signal (SIGHUP, SIGINT, SIGTERM,
// SIGPIPE, ...), and with what was collected so far when the program crashes.
//
// Writing a profile is not async-signal-safe (it allocates, takes locks, runs SQLite), so a
// signal handler never writes it itself: it wakes a flusher thread, started at load and
// blocked on a futex word, waits (bounded) until that thread has written the file, then
// restores the default action and re-raises the signal, so that the process still dies as it
// would have. The handler uses no file descriptor of its own between the two (a program may
// close every descriptor and reuse the numbers): only the futex word, and, when the flush
// cannot finish, a marker file it opens itself in the private run directory.
//
// Environment (set by `nnprof record`; all optional):
//   NNPROF_RECORD_OUT          output path (default: nnprof-<pid>.nnprof in the working directory);
//                              {rank}, {world_size}, {local_rank} are this process's (launcher's
//                              RANK, OMPI_COMM_WORLD_RANK, ...; "none" when it is not a rank);
//                              {{ and }} are braces
//   NNPROF_RECORD_PID          pid of the recorded process; other processes (children that
//                              exec) write <out stem>.<pid>.nnprof instead, unless the path is
//                              a {rank} pattern and they are the first process of their rank
//   NNPROF_RECORD_DIR          record's private run directory (mode 0700): the agent appends
//                              "<pid> <profile path>" lines to its `manifest` for every profile
//                              written and leaves markers that tell record how a process ended:
//                              loaded.<pid> (the agent ran), error.<pid> (why the profile could
//                              not be written), stuck.<pid> (the flush did not finish in time)
//   NNPROF_RECORD_MEMORY       1: track the heap (the default), 0: do not
//   NNPROF_STACK_SAMPLE_BYTES  MemoryTrackingOptions::stack_sample_bytes
//   NNPROF_MEMORY_INTERVAL_MS  MemoryTrackingOptions::interval
//   NNPROF_SAMPLE_HZ           CPU samples per second per thread (CpuProfilerOptions::hz); 0 or
//                              unset: no CPU sampling
//   NNPROF_SAMPLE_WALL         1: sample wall-clock time instead of CPU time
//   NNPROF_SAMPLE_UNWIND       auto (default), kernel, dwarf (libunwind: its older name) or frame-pointer (CpuProfilerOptions::unwinder)
//   NNPROF_PYTHON_FRAMES       0: do not read CPython 3.11's frames into the samples (read by the
//                              CPU sampler itself, so it holds however sampling is started); by
//                              default a program running CPython 3.11 has its Python call
//                              stack spliced into every sample (collect/cpu/python_frames.hpp)
//   NNPROF_RECORD_GPU          1: trace NVIDIA GPUs with CUPTI (nnprof::CudaProfiler)
//   NNPROF_RECORD_TORCH        1 (default): record PyTorch operators when LibTorch loads; 0: do not
//   NNPROF_RECORD_SYSTEM_MS    > 0: run the system monitor (nnprof::SystemMonitor) at this interval
//   NNPROF_RECORD_TDP          the CPU's TDP in W for the energy model where RAPL is unreadable
//   NNPROF_RECORD_SYSTEM_THREAD the thread whose innermost scope each system sample carries
//   NNPROF_RECORD_MPI          1: libnnprof_mpi is preloaded too (it aligns the clock over MPI)
//   NNPROF_RECORD_CLOCK        0: no TCP clock exchange with rank 0 (by default a rank with
//                              MASTER_ADDR/MASTER_PORT and no MPI measures its offset there;
//                              NNPROF_CLOCK_PORT overrides the port, MASTER_PORT + 1)
//   NNPROF_RECORD_CONTINUOUS_MS > 0: continuous profiling (nnprof::ContinuousProfiler) with
//                              windows of this length, appended to the output as the run goes
//   NNPROF_RECORD_STEP_SCOPE   the scope whose ends close those windows (default: the scope
//                              that reported work items)
//   NNPROF_RECORD_SERVE        [ADDR:]PORT: serve the profile live (nnprof::LiveServer) from the
//                              recorded process (not from its children, which would contend
//                              for the port); a public address without NNPROF_TOKEN gets a
//                              token, printed
#include <dlfcn.h>
#include <fcntl.h>
#include <linux/futex.h>
#include <signal.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <climits>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <filesystem>
#include <memory>
#include <string>
#include <string_view>
#include <thread>

#include "nnprof/continuous.hpp"
#include "nnprof/cpu_profiler.hpp"
#include "nnprof/gpu.hpp"
#include "nnprof/live_server.hpp"
#include "nnprof/memory.hpp"
#include "nnprof/profiler.hpp"
#include "nnprof/rank_recording.hpp"
#include "nnprof/system.hpp"
#include "say.hpp"
#include "tcp_clock.hpp"
#include "torch_ops.hpp"

namespace {

/// Signals whose default action ends the process, with their names. The agent takes those the
/// program inherited at SIG_DFL; SIGPROF and the real-time signals stay free for samplers.
struct SignalName {
  int sig;
  const char* name;
};
constexpr SignalName kEndingSignals[] = {
    {SIGHUP, "SIGHUP"},   {SIGINT, "SIGINT"},       {SIGQUIT, "SIGQUIT"},     {SIGILL, "SIGILL"},
    {SIGTRAP, "SIGTRAP"}, {SIGABRT, "SIGABRT"},     {SIGBUS, "SIGBUS"},       {SIGFPE, "SIGFPE"},
    {SIGUSR1, "SIGUSR1"}, {SIGSEGV, "SIGSEGV"},     {SIGUSR2, "SIGUSR2"},     {SIGPIPE, "SIGPIPE"},
    {SIGALRM, "SIGALRM"}, {SIGTERM, "SIGTERM"},     {SIGSTKFLT, "SIGSTKFLT"}, {SIGXCPU, "SIGXCPU"},
    {SIGXFSZ, "SIGXFSZ"}, {SIGVTALRM, "SIGVTALRM"}, {SIGIO, "SIGIO"},         {SIGPWR, "SIGPWR"},
    {SIGSYS, "SIGSYS"}};

const char* signal_name(int sig) {
  for (const auto& s : kEndingSignals)
    if (s.sig == sig) return s.name;
  return "a signal";
}

bool is_crash(int sig) {
  return sig == SIGSEGV || sig == SIGBUS || sig == SIGFPE || sig == SIGILL || sig == SIGABRT || sig == SIGTRAP ||
         sig == SIGSYS;
}

// The whole flush may take this long (a large profile is symbolized and written by SQLite).
constexpr std::int64_t kFlushTimeoutNs = 30'000'000'000;
// Stopping the collectors never takes long; stuck there means the program died holding a
// lock the collector needs (it crashed inside nnprof), so waiting longer helps no one.
constexpr std::int64_t kStopStallNs = 5'000'000'000;

/// What the flusher is doing, for the handler's verdict when it gives up.
enum Stage : std::uint32_t { kIdle, kStoppingSampler, kStoppingGpu, kStoppingSystem, kFreezingHeap, kSaving, kDone };
constexpr const char* kStageText[] = {"had not started",        "was stopping the CPU sampler",
                                      "was stopping GPU tracing", "was stopping the system monitor",
                                      "was freezing the heap",
                                      "was writing the profile",  "had finished"};

// Flush handshake: the handler moves kFlushIdle -> kFlushRequested, the flusher moves it on
// to kFlushDone once the profile is written; both sides wait with FUTEX_WAIT on this word.
enum FlushState : std::uint32_t { kFlushIdle, kFlushRequested, kFlushDone };

struct Agent {
  pid_t pid = 0;
  std::string out;
  std::string run_dir;  // empty when not run by `nnprof record`
  // Built at load: the handler may not allocate to make a path.
  char stuck_marker[PATH_MAX] = {};
  nnprof::MemoryTracking* tracking = nullptr;
  nnprof::CpuProfiler* sampler = nullptr;
  nnprof::CudaProfiler* gpu = nullptr;
  nnprof::SystemMonitor* system = nullptr;
  nnprof::ContinuousProfiler* continuous = nullptr;
  nnprof::LiveServer* server = nullptr;
  std::atomic<bool> written{false};
  alignas(4) std::uint32_t flush_state = kFlushIdle;  // a futex word, accessed through std::atomic_ref
  alignas(4) std::uint32_t stage = kIdle;              // likewise (the handler reads it while waiting)
  std::atomic<int> flush_signal{0};
  std::atomic<pthread_t> flusher{};
  std::atomic<bool> started{false};
};

Agent& agent() {
  static Agent* a = new Agent;  // never destroyed: used until the very end of the process
  return *a;
}

void futex_wait(std::uint32_t* word, std::uint32_t expected, const timespec* timeout) {
  syscall(SYS_futex, word, FUTEX_WAIT_PRIVATE, expected, timeout, nullptr, 0);
}

void futex_wake(std::uint32_t* word) { syscall(SYS_futex, word, FUTEX_WAKE_PRIVATE, INT_MAX, nullptr, nullptr, 0); }

void set_stage(Stage s) { std::atomic_ref<std::uint32_t>(agent().stage).store(s); }

using SigactionFn = int (*)(int, const struct sigaction*, struct sigaction*);
SigactionFn real_sigaction();

/// Signals (bit sig - 1) on which the agent's handler stands in for SIG_DFL, and the action
/// it installs there (set before any bit). See the interposed sigaction at the end.
std::atomic<std::uint64_t> g_managed_signals{0};
struct sigaction g_agent_action {};

bool managed(int sig) {
  return sig > 0 && sig <= 64 && (g_managed_signals.load(std::memory_order_acquire) >> (sig - 1) & 1) != 0;
}

using nnprof::agent::say;

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

/// True when this process is the first of its rank in the run to ask: it creates rank.<r> in
/// the run directory (O_EXCL, so exactly one process wins). The first process of a rank under
/// `nnprof record -- torchrun` is the rank's worker; later ones (its exec'd helpers, spawned
/// data loaders, which inherit RANK) get a file of their own.
/// The claim holds the winner's pid, so that a process that execs keeps its claim.
bool claim_rank_file(const std::string& run_dir, std::int32_t rank, pid_t pid) {
  if (run_dir.empty()) return false;
  const std::string path = run_dir + "/rank." + std::to_string(rank);
  const std::string me = std::to_string(pid);
  int fd = open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
  if (fd >= 0) {
    [[maybe_unused]] ssize_t rc = write(fd, me.data(), me.size());
    close(fd);
    return true;
  }
  fd = open(path.c_str(), O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
  if (fd < 0) return false;
  char holder[32] = {};
  const ssize_t n = read(fd, holder, sizeof holder - 1);
  close(fd);
  return n > 0 && me == std::string_view(holder, static_cast<std::size_t>(n));
}

/// The profile's path for this process; `rank_owner` is set when the process is its rank's main
/// one (the recorded process, or the first of its rank under a {rank} pattern).
std::string output_path(pid_t pid, bool* rank_owner) {
  namespace fs = std::filesystem;
  const char* out = std::getenv("NNPROF_RECORD_OUT");
  const char* root = std::getenv("NNPROF_RECORD_PID");
  const char* run_dir = std::getenv("NNPROF_RECORD_DIR");
  fs::path path = out != nullptr && *out != '\0' ? fs::path(out) : fs::path("nnprof-" + std::to_string(pid) + ".nnprof");
  // A path pattern ({rank}): each process writes the file its own rank names.
  const bool rank_pattern = nnprof::is_rank_pattern(path.string());
  const nnprof::RankEnvironment env = nnprof::read_rank_environment();
  path = nnprof::expand_rank_pattern(path.string(), env.rank);  // also turns {{ and }} into braces
  const bool is_root = root == nullptr || *root == '\0' || std::to_string(pid) == root;
  const bool owns_rank_file =
      rank_pattern && env.rank && claim_rank_file(run_dir != nullptr ? run_dir : "", env.rank->rank, pid);
  *rank_owner = env.rank && (is_root || owns_rank_file);
  if (!is_root && !owns_rank_file) {
    // A process that the recorded one started (and that exec'd): a file of its own.
    path.replace_filename(path.stem().string() + "." + std::to_string(pid) + path.extension().string());
  }
  std::error_code ec;
  const fs::path absolute = fs::absolute(path, ec);
  return ec ? path.string() : absolute.string();
}

/// Writes `text` to `name` in the run directory. The directory is record's own (mkdtemp,
/// 0700), and O_NOFOLLOW refuses a symlink all the same; `flags` adds O_EXCL or O_APPEND.
void write_run_file(const std::string& name, const std::string& text, int flags) {
  Agent& a = agent();
  if (a.run_dir.empty()) return;
  const std::string path = a.run_dir + "/" + name;
  const int fd = open(path.c_str(), O_WRONLY | O_CREAT | O_NOFOLLOW | O_CLOEXEC | flags, 0600);
  if (fd < 0) return;
  [[maybe_unused]] ssize_t rc = write(fd, text.data(), text.size());
  close(fd);
}

/// Writes the profile once per process; later calls (atexit after a signal) do nothing.
void write_profile(const std::string& why) {
  Agent& a = agent();
  if (getpid() != a.pid) return;  // a forked child that did not exec: not tracked
  if (a.written.exchange(true)) return;
  try {
    set_stage(kStoppingSampler);
    if (a.sampler != nullptr) a.sampler->stop();  // keeps every sample taken so far
    set_stage(kStoppingGpu);
    if (a.gpu != nullptr) a.gpu->stop();  // waits for the GPUs and flushes CUPTI's buffers
    set_stage(kStoppingSystem);
    if (a.system != nullptr) a.system->stop();  // a last sample: the energy up to the end
    set_stage(kFreezingHeap);
    if (a.tracking != nullptr) a.tracking->stop_at_exit();  // freezes the heap as it is now
    nnprof::agent::finish_tcp_clock();  // bounded: a rank 0 that has ended answers nothing
    set_stage(kSaving);
    if (a.continuous != nullptr)
      (void)a.continuous->stop();  // closes the last window and writes the whole profile, windows included
    else
      nnprof::global_profiler().save(a.out);
    say("profile written to " + a.out + " (" + why + ")");
    // One write of one short line with O_APPEND: lines of several processes do not mix.
    write_run_file("manifest", std::to_string(a.pid) + " " + a.out + "\n", O_APPEND);
  } catch (const std::exception& e) {
    say("could not write the profile to " + a.out + ": " + e.what());
    write_run_file("error." + std::to_string(a.pid), a.out + ": " + e.what(), O_EXCL);
  }
  set_stage(kDone);
}

void flusher_main() {
  Agent& a = agent();
  a.flusher.store(pthread_self());
  sigset_t all;
  sigfillset(&all);
  pthread_sigmask(SIG_BLOCK, &all, nullptr);  // signals go to the program's threads, not here
  std::atomic_ref<std::uint32_t> state(a.flush_state);
  while (state.load() == kFlushIdle) futex_wait(&a.flush_state, kFlushIdle, nullptr);
  const int sig = a.flush_signal.load();
  write_profile(is_crash(sig) ? std::string("the program crashed with ") + signal_name(sig) + "; data up to the crash"
                              : std::string("ended by ") + signal_name(sig));
  state.store(kFlushDone);
  futex_wake(&a.flush_state);
}

std::int64_t now_ns() {
  timespec t{};
  clock_gettime(CLOCK_MONOTONIC, &t);
  return static_cast<std::int64_t>(t.tv_sec) * 1'000'000'000 + t.tv_nsec;
}

/// Async-signal-safe decimal of a small non-negative number.
std::size_t format_uint(char* buf, std::uint64_t v) {
  char tmp[24];
  std::size_t n = 0;
  do {
    tmp[n++] = static_cast<char>('0' + v % 10);
    v /= 10;
  } while (v != 0);
  for (std::size_t i = 0; i < n; ++i) buf[i] = tmp[n - 1 - i];
  return n;
}

/// From the handler, when the flush did not finish: a marker for `nnprof record` saying what
/// the flusher was doing. Only descriptors opened here; nothing that allocates.
void report_stuck(int sig, std::uint32_t stage, std::int64_t waited_ns) {
  Agent& a = agent();
  if (a.stuck_marker[0] == '\0') return;
  const int fd = open(a.stuck_marker, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
  if (fd < 0) return;
  char text[256];
  std::size_t n = 0;
  auto put = [&](const char* s) {
    for (; *s != '\0' && n < sizeof text; ++s) text[n++] = *s;
  };
  put(signal_name(sig));
  put(" arrived; after ");
  n += format_uint(text + n, static_cast<std::uint64_t>(waited_ns / 1'000'000'000));
  put(" s the agent still ");
  put(kStageText[stage < kDone ? stage : static_cast<std::uint32_t>(kDone)]);
  [[maybe_unused]] ssize_t rc = write(fd, text, n);
  close(fd);
}

/// Waits until the flusher is done, or gives up: 30 s in all, 5 s while stopping collectors.
void wait_for_flush(int sig) {
  Agent& a = agent();
  std::atomic_ref<std::uint32_t> state(a.flush_state);
  std::atomic_ref<std::uint32_t> stage(a.stage);
  const std::int64_t start = now_ns();
  std::uint32_t seen_stage = stage.load();
  std::int64_t stage_since = start;
  for (;;) {
    const std::uint32_t s = state.load();
    if (s == kFlushDone) return;
    const std::int64_t now = now_ns();
    const std::uint32_t st = stage.load();
    if (st != seen_stage) {
      seen_stage = st;
      stage_since = now;
    }
    const bool stalled = st >= kStoppingSampler && st <= kFreezingHeap && now - stage_since > kStopStallNs;
    if (now - start > kFlushTimeoutNs || stalled) {
      report_stuck(sig, st, now - start);
      return;
    }
    // Short slices, to watch the stage and the clock while the flusher works.
    const timespec slice{0, 100'000'000};
    futex_wait(&a.flush_state, s, &slice);
  }
}

void on_signal(int sig, siginfo_t*, void*) {
  Agent& a = agent();
  const int saved_errno = errno;
  // Only the recorded process, only once the flusher runs, and never on the flusher itself
  // (a crash while writing must not wait for itself).
  if (getpid() == a.pid && a.started.load() && !pthread_equal(pthread_self(), a.flusher.load())) {
    int none = 0;
    if (a.flush_signal.compare_exchange_strong(none, sig)) {
      std::atomic_ref<std::uint32_t>(a.flush_state).store(kFlushRequested);
      futex_wake(&a.flush_state);
    }
    wait_for_flush(sig);
  }
  // Die the way the signal would have killed the program without us.
  // Through the real sigaction: the interposed one would put this handler back for SIG_DFL.
  struct sigaction dfl {};
  dfl.sa_handler = SIG_DFL;
  sigemptyset(&dfl.sa_mask);
  if (const SigactionFn real = real_sigaction()) real(sig, &dfl, nullptr);
  errno = saved_errno;
  raise(sig);
}

/// Handles every ending signal the program inherited at SIG_DFL. One it ignores (nohup's
/// SIGHUP) stays ignored; handlers the program installs later replace these, as they should.
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
  // A second asynchronous signal during the wait would only wait again: hold them back.
  for (const auto& s : kEndingSignals)
    if (!is_crash(s.sig)) sigaddset(&sa.sa_mask, s.sig);
  g_agent_action = sa;
  for (const auto& s : kEndingSignals) {
    struct sigaction old {};
    if (sigaction(s.sig, nullptr, &old) != 0) continue;
    if ((old.sa_flags & SA_SIGINFO) != 0 || old.sa_handler != SIG_DFL) continue;
    if (sigaction(s.sig, &sa, nullptr) == 0 && s.sig <= 64)
      g_managed_signals.fetch_or(std::uint64_t{1} << (s.sig - 1), std::memory_order_release);
  }
}

void at_exit() {
  // The server's threads read the profiler: they end before the profile is written and the
  // static destructors run.
  if (nnprof::LiveServer* server = agent().server) server->stop();
  write_profile("the program exited");
}

__attribute__((constructor(102))) void nnprof_agent_start() {
  Agent& a = agent();
  a.pid = getpid();
  try {
    bool rank_owner = false;
    a.out = output_path(a.pid, &rank_owner);
    if (const char* d = std::getenv("NNPROF_RECORD_DIR"); d != nullptr && *d != '\0') {
      a.run_dir = d;
      const std::string stuck = a.run_dir + "/stuck." + std::to_string(a.pid);
      if (stuck.size() < sizeof a.stuck_marker) std::memcpy(a.stuck_marker, stuck.c_str(), stuck.size() + 1);
      // Tells record that the agent ran in this process (a program that execs loads it twice).
      write_run_file("loaded." + std::to_string(a.pid), a.out, O_TRUNC);
    }
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
    std::thread(flusher_main).detach();
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
        if (unwind == "dwarf" || unwind == "libunwind") cpu.unwinder = nnprof::Unwinder::Dwarf;
        if (unwind == "frame-pointer") cpu.unwinder = nnprof::Unwinder::FramePointer;
      }
      // A program that starts a CpuProfiler of its own gets it; ours stops, keeping its samples.
      cpu.yield_to_program = true;
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
    if (const std::uint64_t ms = env_u64("NNPROF_RECORD_SYSTEM_MS", 0); ms != 0) {
      nnprof::SystemOptions system;
      system.interval_ms = static_cast<std::uint32_t>(ms);
      if (const char* tdp = std::getenv("NNPROF_RECORD_TDP"); tdp != nullptr && *tdp != '\0')
        system.cpu_tdp_watts = std::strtod(tdp, nullptr);
      if (const char* thread = std::getenv("NNPROF_RECORD_SYSTEM_THREAD")) system.scope_thread = thread;
      try {
        a.system = new nnprof::SystemMonitor(nnprof::global_profiler(), system);
      } catch (const std::exception& e) {
        say(std::string("system monitoring is off: ") + e.what());
      }
    }
    if (const std::uint64_t ms = env_u64("NNPROF_RECORD_CONTINUOUS_MS", 0); ms != 0) {
      nnprof::ContinuousOptions continuous;
      continuous.interval = std::chrono::milliseconds(ms);
      continuous.metrics = {};  // the collectors above are the agent's own
      continuous.output_path = a.out;
      if (const char* step = std::getenv("NNPROF_RECORD_STEP_SCOPE")) continuous.step_scope = step;
      try {
        auto profiler = std::make_unique<nnprof::ContinuousProfiler>(nnprof::global_profiler(), continuous);
        profiler->start();
        a.continuous = profiler.release();  // never destroyed, like the agent's other collectors
      } catch (const std::exception& e) {
        say(std::string("continuous profiling is off: ") + e.what());
      }
    }
    if (const char* serve = std::getenv("NNPROF_RECORD_SERVE"); serve != nullptr && *serve != '\0') {
      const char* root = std::getenv("NNPROF_RECORD_PID");
      if (root == nullptr || std::strtoll(root, nullptr, 10) == a.pid) {
        try {
          nnprof::LiveServerOptions live = nnprof::parse_serve_address(serve);
          live.generate_token = true;
          a.server = new nnprof::LiveServer(nnprof::global_profiler(), live);
        } catch (const std::exception& e) {
          say(std::string("not serving live: ") + e.what());
        }
      }
    }
    nnprof::agent::start_torch_ops();
    // Ranks without MPI measure their clock against rank 0's over TCP; with the MPI interposer
    // loaded, MPI_Init and MPI_Finalize do it over MPI instead.
    if (rank_owner && env_u64("NNPROF_RECORD_MPI", 0) == 0 && env_u64("NNPROF_RECORD_CLOCK", 1) != 0) {
      if (const auto env = nnprof::read_rank_environment(); env.rank)
        nnprof::agent::start_tcp_clock(env.rank->rank, env.rank->world_size);
    }
    a.started.store(true);
    install_handlers();
    std::atexit(at_exit);
  } catch (const std::exception& e) {
    say(std::string("profiling is off: ") + e.what());
  }
}

}  // namespace

// The program sees the dispositions it would have seen without the agent. The agent's
// handlers sit on signals the program inherited at SIG_DFL, and programs decide things from
// what they find there: CPython installs its KeyboardInterrupt handler only when SIGINT is
// SIG_DFL at start-up (without this, Ctrl-C would kill a training loop instead of running its
// `except KeyboardInterrupt:`), and Python code that saves `signal.getsignal(sig)` to restore
// it later would get None, which `signal.signal` refuses. So sigaction and signal are
// interposed (this library is in LD_PRELOAD, so its definitions win; glibc's signal() calls
// sigaction without the PLT, hence both): on a managed signal the agent's handler is reported
// as SIG_DFL, and setting SIG_DFL there installs the agent's handler, which ends the process
// exactly as SIG_DFL would, after writing the profile. So a crash handler that chains to the
// "previous" action (faulthandler, crash reporters) still leads to a profile. Installing any
// other handler replaces the agent's, as it should.
namespace {

/// The real sigaction, resolved at load (the constructor calls sigaction before installing
/// handlers), so that a signal handler calling sigaction never runs dlsym.
SigactionFn real_sigaction() {
  static std::atomic<SigactionFn> real{nullptr};
  SigactionFn fn = real.load(std::memory_order_acquire);
  if (fn == nullptr) {
    fn = reinterpret_cast<SigactionFn>(dlsym(RTLD_NEXT, "sigaction"));
    real.store(fn, std::memory_order_release);
  }
  return fn;
}

void hide_agent_handler(struct sigaction* old) {
  if (old == nullptr || (old->sa_flags & SA_SIGINFO) == 0 || old->sa_sigaction != &on_signal) return;
  *old = {};
  old->sa_handler = SIG_DFL;
  sigemptyset(&old->sa_mask);
}

}  // namespace

extern "C" __attribute__((visibility("default"))) int sigaction(int sig, const struct sigaction* act,
                                                                 struct sigaction* old) noexcept {
  const SigactionFn real = real_sigaction();
  if (real == nullptr) {
    errno = ENOSYS;
    return -1;
  }
  const bool to_default = act != nullptr && (act->sa_flags & SA_SIGINFO) == 0 && act->sa_handler == SIG_DFL;
  const int rc = real(sig, to_default && managed(sig) ? &g_agent_action : act, old);
  if (rc == 0) hide_agent_handler(old);
  return rc;
}

extern "C" __attribute__((visibility("default"))) sighandler_t signal(int sig, sighandler_t handler) noexcept {
  // glibc's signal(): BSD semantics (restart interrupted calls, block the signal in its handler).
  struct sigaction act {};
  act.sa_handler = handler;
  sigemptyset(&act.sa_mask);
  if (sig > 0 && sig < NSIG) sigaddset(&act.sa_mask, sig);
  act.sa_flags = SA_RESTART;
  struct sigaction old {};
  if (sigaction(sig, &act, &old) != 0) return SIG_ERR;
  return old.sa_handler;  // shares its storage with sa_sigaction, as glibc's signal() returns it
}
