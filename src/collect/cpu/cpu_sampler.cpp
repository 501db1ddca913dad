#include "collect/cpu/cpu_sampler.hpp"

#include <dirent.h>
#include <dlfcn.h>
#include <fcntl.h>
#include <asm/perf_regs.h>
#include <linux/perf_event.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cmath>
#include <cstring>
#include <fstream>
#include <string_view>

#include <fmt/format.h>

#include "collect/stack/stack_capture.hpp"
#include "nnprof/detail/clock_read.hpp"
#include "nnprof/error.hpp"
#include "record/internal_allocations.hpp"
#include "record/session.hpp"

namespace nnprof::detail {

constinit thread_local int tls_in_sample_handler [[gnu::tls_model("initial-exec")]] = 0;

namespace {

// Above this rate CPU-time timers cannot keep up: the kernel checks them on its tick.
constexpr double kTimerMaxHz = 250.0;
constexpr double kMinHz = 1.0, kMaxHz = 10'000.0;
constexpr std::uint32_t kMaxStackDepth = 240;  // frames per sample at most
constexpr int kFdTableSize = 1 << 16;
constexpr std::size_t kKernelRingPages = 64;
// Bytes of the user stack the kernel copies per sample with its frame-pointer walk: the frames
// of the functions without frame pointers above the interrupted one are unwound through this
// copy (FrameRules::unwind_copy). As for the handler's copy (copy_bytes_for), but at most 4 KiB,
// so that even a ring halved down to 16 KiB holds several records.
constexpr std::uint32_t kMaxKernelCopyBytes = 4 * 1024;
constexpr std::chrono::milliseconds kKernelDrainEvery{4};
// Rings of stack copies are drained at least this often, so that they can be smaller.
constexpr std::uint32_t kCopyDrainEveryMs = 10;
// DWARF unwinding: bytes of the top of the stack the handler copies per sample. perf's default
// is 8 KiB; 16 KiB holds deeper stacks of frames without frame pointers. Above 250 Hz the copy
// shrinks so that a thread copies at most about 4 MiB per second (the ring must hold it).
constexpr std::uint32_t kMaxCopyBytes = 16 * 1024, kMinCopyBytes = 2 * 1024;
constexpr double kCopyBytesPerSecond = 4.0 * 1024 * 1024;
// A DWARF sample record: header, ticks, weight, scope, pc, sp, fp, sizes; then frame records
// (3 words each) and the stack copy.
constexpr std::uint32_t kDwarfHeaderWords = 8;
// Header flags of a sample record.
// kFlagPython: the record ends with a Python section (collect/cpu/python_frames.hpp), whose
// last word says how long it is.
constexpr std::uint32_t kFlagTruncated = 1, kFlagDwarf = 2, kFlagPython = 4;

// What the signal handler reads. Plain globals set before any timer is armed.
struct HandlerConfig {
  std::atomic<bool> running{false};
  std::uint64_t core_id = 0;
  std::uint64_t period_ns = 0;
  bool call_graph = true;
  bool dwarf = false;  ///< copy the stack for the manager to unwind; else walk frame pointers here
  std::uint32_t copy_bytes = 0;
  int max_depth = 128;
};
constinit HandlerConfig g_config;
constinit CpuSampler* g_sampler = nullptr;
// perf_event overflow signals carry the event's fd, not a pointer: fd -> its thread.
constinit std::atomic<SampledThread*> g_fd_owner[kFdTableSize] = {};
// Handlers running now, per process: stop() waits for them before it reads the rings.
constinit std::atomic<int> g_in_handler{0};
// The sampler's signal: a real-time signal nobody else in the process handled when it was
// chosen (0: none yet). Kept across runs while our handler is on it.
constinit std::atomic<int> g_signal{0};

std::int64_t current_tid() noexcept { return static_cast<std::int64_t>(syscall(SYS_gettid)); }

void on_sample_signal(int, siginfo_t* info, void* ucontext) {
  const int saved_errno = errno;
  ++tls_in_sample_handler;
  g_in_handler.fetch_add(1, std::memory_order_acquire);
  if (CpuSampler* s = g_sampler) s->on_signal(info, ucontext);
  g_in_handler.fetch_sub(1, std::memory_order_release);
  --tls_in_sample_handler;
  errno = saved_errno;
}

bool our_handler_installed(const struct sigaction& sa) {
  return (sa.sa_flags & SA_SIGINFO) != 0 && sa.sa_sigaction == &on_sample_signal;
}

bool our_handler_on(int sig) {
  struct sigaction sa{};
  return sig != 0 && sigaction(sig, nullptr, &sa) == 0 && our_handler_installed(sa);
}

// A signal the program does not use: ours from an earlier run (one of its signals may still be
// pending), else the highest real-time signal whose disposition is the default. glibc keeps
// the signals below SIGRTMIN for itself (thread cancellation, setxid); programs that use
// real-time signals usually count up from SIGRTMIN, so the search counts down from SIGRTMAX.
// 0 when every one is taken.
int choose_signal() {
  if (const int ours = g_signal.load(std::memory_order_acquire); our_handler_on(ours)) return ours;
  for (int sig = SIGRTMAX; sig >= SIGRTMIN; --sig) {
    struct sigaction sa{};
    if (sigaction(sig, nullptr, &sa) == 0 && (sa.sa_flags & SA_SIGINFO) == 0 && sa.sa_handler == SIG_DFL) return sig;
  }
  return 0;
}

std::string signal_name(int sig) {
  return sig >= SIGRTMIN ? fmt::format("SIGRTMIN+{} (signal {})", sig - SIGRTMIN, sig) : fmt::format("signal {}", sig);
}

// Bytes of stack a DWARF sample copies at `hz` samples per second of a thread.
std::uint32_t copy_bytes_for(double hz) {
  std::uint32_t bytes = kMaxCopyBytes;
  while (bytes > kMinCopyBytes && bytes * hz > kCopyBytesPerSecond) bytes /= 2;
  return bytes;
}

std::string read_comm(std::int64_t tid) {
  std::ifstream in(fmt::format("/proc/self/task/{}/comm", tid));
  std::string name;
  std::getline(in, name);
  return name;
}

// How a perf event delivers its samples.
enum class PerfDelivery {
  Signal,       // overflow signals the thread, whose handler walks its own stack
  KernelStack,  // the kernel walks the frame pointers into the event's ring; no signal
};

// The deepest user callchain the kernel records (kernel.perf_event_max_stack, 127 by default).
std::uint32_t kernel_max_stack() {
  static const std::uint32_t value = [] {
    std::uint32_t v = 127;
    std::ifstream("/proc/sys/kernel/perf_event_max_stack") >> v;
    return v;
  }();
  return value;
}

int open_perf_event(std::int64_t tid, std::uint64_t period_ns, PerfDelivery delivery, bool call_graph,
                    std::uint32_t max_depth, std::uint32_t stack_bytes = 0) noexcept {
  perf_event_attr attr{};
  attr.size = sizeof attr;
  attr.type = PERF_TYPE_SOFTWARE;
  attr.config = PERF_COUNT_SW_CPU_CLOCK;  // per thread: counts while the thread runs
  attr.sample_period = period_ns;
  attr.disabled = 1;
  attr.exclude_kernel = 1;
  attr.exclude_hv = 1;
  if (delivery == PerfDelivery::Signal) {
    attr.sample_type = PERF_SAMPLE_IP;  // the smallest record: the stack is walked in the handler
    attr.wakeup_events = 1;             // a wakeup, hence a signal, per sample
  } else {
    attr.sample_type = PERF_SAMPLE_IP | PERF_SAMPLE_TID | PERF_SAMPLE_TIME;
    if (call_graph) {
      attr.sample_type |= PERF_SAMPLE_CALLCHAIN | PERF_SAMPLE_REGS_USER | PERF_SAMPLE_STACK_USER;
      attr.exclude_callchain_kernel = 1;
      attr.sample_max_stack = static_cast<std::uint16_t>(std::min(max_depth, kernel_max_stack()));
      // rbp, rsp and the top of the stack: enough to unwind the functions that have no frame
      // pointer of their own, which the kernel's walk skips (collect/stack/frame_rules.hpp).
      attr.sample_regs_user = (std::uint64_t{1} << PERF_REG_X86_BP) | (std::uint64_t{1} << PERF_REG_X86_SP);
      attr.sample_stack_user = stack_bytes;
    }
    attr.use_clockid = 1;  // times comparable with the session's spans
    attr.clockid = CLOCK_MONOTONIC;
    // Nobody waits on the event: the manager thread reads its ring on a timer.
    attr.watermark = 1;
    attr.wakeup_watermark = ~std::uint32_t{0} >> 1;
  }
  return static_cast<int>(syscall(SYS_perf_event_open, &attr, static_cast<pid_t>(tid), -1, -1, PERF_FLAG_FD_CLOEXEC));
}

// Copies `n` bytes at ring offset `at` (which may wrap) out of a perf data area.
void copy_from_perf_ring(const unsigned char* data, std::uint64_t size, std::uint64_t at, void* out, std::size_t n) {
  const std::uint64_t offset = at & (size - 1);
  const std::size_t first = static_cast<std::size_t>(std::min<std::uint64_t>(n, size - offset));
  std::memcpy(out, data + offset, first);
  if (first < n) std::memcpy(static_cast<unsigned char*>(out) + first, data, n - first);
}

std::uint64_t next_power_of_two(std::uint64_t v) {
  std::uint64_t p = 1;
  while (p < v) p *= 2;
  return p;
}

}  // namespace

/// The CPU source a sampled session reads: the live sampler while it runs, then the samples
/// as they were when sampling stopped.
class CpuSampler::Source : public CpuSource {
 public:
  void snapshot_cpu(RawCpu& out) override {
    {
      std::lock_guard lock(mu_);
      if (frozen_) {
        out = cpu_;
        return;
      }
    }
    CpuSampler::instance().snapshot(out);
  }
  void freeze(RawCpu cpu) {
    std::lock_guard lock(mu_);
    cpu_ = std::move(cpu);
    frozen_ = true;
  }

 private:
  std::mutex mu_;
  bool frozen_ = false;
  RawCpu cpu_;
};

CpuSampler& CpuSampler::instance() {
  static CpuSampler* sampler = [] {
    InternalAllocations internal;
    auto* s = new CpuSampler;
    g_sampler = s;
    return s;
  }();
  return *sampler;
}

// ---- start / stop ------------------------------------------------------------------------

std::uint64_t CpuSampler::start(Session& session, const CpuProfilerOptions& options) {
  InternalAllocations internal;
  if (!(options.hz >= kMinHz && options.hz <= kMaxHz))
    throw Error(fmt::format("CPU sampling rate {} Hz is out of range: choose 1 to 10000 samples per second", options.hz));
  if (options.max_stack_depth == 0 || options.max_stack_depth > kMaxStackDepth)
    throw Error(fmt::format("stack depth {} is out of range: choose 1 to {} frames", options.max_stack_depth, kMaxStackDepth));

  std::unique_lock start_lock(manager_mu_);
  while (active_.load(std::memory_order_acquire)) {
    bool yields = false;
    {
      std::lock_guard lock(mu_);
      yields = options_.yield_to_program;
    }
    const bool halted = halted_.load(std::memory_order_acquire);
    if (!yields && !halted)
      throw Error("CPU sampling is already on in this process; stop the other nnprof::CpuProfiler first");
    // The running sampler gives way (nnprof record's agent does, to the program's own), or
    // had already stopped sampling (its signal was taken): its run ends here.
    const std::uint64_t running = epoch_.load(std::memory_order_acquire);
    start_lock.unlock();
    stop(running, halted ? std::string_view{}
                         : "another nnprof::CpuProfiler was started in this process, and this one was set to give way "
                           "to it (CpuProfilerOptions::yield_to_program)");
    start_lock.lock();
  }
  if (manager_.joinable()) manager_.join();

  const int sig = choose_signal();
  if (sig == 0)
    throw Error("every real-time signal already has a handler in this process: nnprof's CPU sampler needs one that the "
                "program does not use");

  // No collect::stack_capture_init (libunwind) here: the sampler never uses an unwinder
  // library, and loading one mid-run would bump glibc's TLS generation for every thread.
  const bool wall = options.clock == SamplingClock::Wall;
  std::vector<std::string> warnings;
  use_perf_ = false;
  if (!wall && options.hz > kTimerMaxHz) {
    const std::uint64_t period = static_cast<std::uint64_t>(1e9 / options.hz);
    const int fd = open_perf_event(current_tid(), period, PerfDelivery::Signal, false, 1);
    if (fd >= 0) {
      close(fd);
      use_perf_ = true;
    } else {
      int paranoid = -1;
      std::ifstream("/proc/sys/kernel/perf_event_paranoid") >> paranoid;
      warnings.push_back(fmt::format(
          "{} Hz needs perf_event_open, which failed ({}; kernel.perf_event_paranoid = {}): sampled with CPU-time "
          "timers instead, which the kernel fires at most about {:.0f} times per second per thread; each sample is "
          "weighted by the CPU time it stands for, so times stay right but resolution is lower",
          options.hz, std::strerror(errno), paranoid, kTimerMaxHz));
    }
  }
  if (dlsym(RTLD_DEFAULT, "__tsan_init") != nullptr)
    warnings.push_back("this program runs under ThreadSanitizer, which delivers signals late, at its own safe "
                       "points: the stacks of the samples show those points, not where the threads were");
  // Kernel-walked stacks need a perf event; where there is none (timers), Unwinder::Kernel
  // means what Auto means.
  // CPython's frames can only be read by the handler, on the interrupted thread: a process
  // running CPython 3.11 is sampled through signals under Auto, so its samples show Python.
  collect::PythonInterpreter python = options.call_graph ? collect::find_python_interpreter() : collect::PythonInterpreter{};
  if (!python.problem.empty()) warnings.push_back(python.problem);
  const bool kernel_stacks =
      use_perf_ && (options.unwinder == Unwinder::Kernel || (options.unwinder == Unwinder::Auto && !python.readable));
  if (python.readable && (kernel_stacks || options.unwinder == Unwinder::Kernel)) {
    warnings.push_back(fmt::format("this process runs CPython {}, whose frames nnprof reads in the sampler's signal "
                                   "handler; the kernel-walked stacks asked for (Unwinder::Kernel) have no handler, so "
                                   "the samples show the interpreter's native frames",
                                   python.version));
    python.readable = false;
  }
  if (options.unwinder == Unwinder::Kernel && !use_perf_)
    warnings.push_back("kernel-walked stacks need perf_event sampling (CPU time above 250 Hz): the handler copies "
                       "the top of each stack instead, which is unwound with the DWARF unwind tables");
  const bool dwarf = options.unwinder != Unwinder::FramePointer;
  const double handler_hz = std::min(options.hz, wall || use_perf_ ? kMaxHz : kTimerMaxHz);

  {
    std::lock_guard lock(mu_);
    for (auto& t : threads_) t->ring.drain([](const std::uint64_t*, std::uint32_t) {});
    by_tid_.clear();
    scans_ = 0;
    threads_sampled_ = 0;
    dropped_ = truncated_ = incomplete_ = over_limit_ = throttled_ = 0;
    stopped_early_ = false;
    samples_.clear();
    stack_ids_.clear();
    stacks_.clear();
    names_.clear();
    warnings_ = std::move(warnings);
    options_ = options;
    options_.thread_scan_ms = std::clamp<std::uint32_t>(options.thread_scan_ms, 1, 1000);
    signal_ = sig;
    started_ = std::chrono::steady_clock::now();
    period_ns_ = static_cast<std::uint64_t>(std::llround(1e9 / options.hz));
    mechanism_ = wall ? "wall-timer" : use_perf_ ? "perf_event" : "thread-cpu-timer";
    kernel_stacks_ = kernel_stacks;
    unwinder_ = !options.call_graph ? "none"
                : kernel_stacks    ? "kernel-frame-pointer"
                : dwarf            ? "dwarf"
                                   : "frame-pointer";
    copy_bytes_ = options.call_graph && dwarf ? copy_bytes_for(handler_hz) : 0;
    kernel_copy_bytes_ = kernel_stacks ? std::min(copy_bytes_for(options.hz), kMaxKernelCopyBytes) : 0;
    const double record_words =
        copy_bytes_ > 0 ? kDwarfHeaderWords + copy_bytes_ / 8.0 + 3.0 * std::min<std::uint32_t>(options.max_stack_depth, 16)
                        : 4.0 + std::min<std::uint32_t>(options.max_stack_depth, 64);
    // Four drain intervals of samples, so a late drain still finds room; and room for the
    // largest record (a ring takes records of at most half its size).
    // A sample's Python section is one word per frame, plus descriptions of code objects the
    // thread has not described yet (rare after its first samples; the largest record has all).
    const double python_words = python.readable ? collect::python_section_words_max() : 0.0;
    const double largest = (copy_bytes_ > 0 ? kDwarfHeaderWords + copy_bytes_ / 8.0 + 3.0 * options.max_stack_depth
                                            : 4.0 + options.max_stack_depth) +
                           python_words;
    const std::uint32_t drain_ms =
        copy_bytes_ > 0 ? std::min(options_.thread_scan_ms, kCopyDrainEveryMs) : options_.thread_scan_ms;
    ring_words_ = next_power_of_two(static_cast<std::uint64_t>(
        std::max({8192.0, handler_hz * (record_words + (python.readable ? 64.0 : 0.0)) * 4.0 * drain_ms / 1000.0,
                  2.0 * largest})));
    python_ = python;
    python_stacks_.clear();
    python_stacks_.set_interpreter(python);
  }
  collect::set_handler_python(python);
  g_config.core_id = session.profiler_id();
  g_config.period_ns = period_ns_;
  g_config.call_graph = options.call_graph;
  g_config.dwarf = copy_bytes_ > 0;
  g_config.copy_bytes = copy_bytes_;
  g_config.max_depth = static_cast<int>(options.max_stack_depth);

  struct sigaction sa{};
  sa.sa_sigaction = &on_sample_signal;
  sa.sa_flags = SA_SIGINFO | SA_RESTART;
  sigemptyset(&sa.sa_mask);
  if (sigaction(sig, &sa, nullptr) != 0)
    throw Error(fmt::format("could not install the sampler's handler on {}: {}", signal_name(sig), std::strerror(errno)));
  g_signal.store(sig, std::memory_order_release);

  source_ = std::make_shared<Source>();
  session.set_cpu_source(source_);
  const std::uint64_t run = epoch_.fetch_add(1, std::memory_order_acq_rel) + 1;
  g_config.running.store(true, std::memory_order_release);
  halted_.store(false, std::memory_order_release);
  active_.store(true, std::memory_order_release);
  manager_stop_ = false;
  scan_threads();  // the threads that exist now are sampled from the start
  manager_ = std::thread([this] { manager_main(); });
  return run;
}

void CpuSampler::stop(std::uint64_t run, std::string_view why) noexcept {
  InternalAllocations internal;
  {
    std::unique_lock lock(manager_mu_);
    if (!active_.load(std::memory_order_acquire) || (run != 0 && run != epoch_.load(std::memory_order_acquire)))
      return;
    active_.store(false, std::memory_order_release);
    manager_stop_ = true;
  }
  manager_cv_.notify_all();
  if (manager_.joinable() && manager_.get_id() != std::this_thread::get_id()) manager_.join();
  try {
    std::lock_guard lock(mu_);
    halt_locked(why);
  } catch (...) {
  }
  // The handler stays installed: a signal generated before a timer was deleted may still be
  // pending, and a real-time signal's default action would end the process.
  RawCpu frozen;
  try {
    snapshot(frozen);
  } catch (...) {
    frozen = RawCpu{};
  }
  if (source_) source_->freeze(std::move(frozen));
  source_.reset();
}

void CpuSampler::halt_locked(std::string_view why) {
  g_config.running.store(false, std::memory_order_release);
  for (auto& [tid, t] : by_tid_) disarm(*t);
  by_tid_.clear();
  // A handler that passed its checks before the timers were deleted finishes its sample.
  while (g_in_handler.load(std::memory_order_acquire) != 0) std::this_thread::yield();
  drain_locked();
  if (!why.empty()) {
    const double after = std::chrono::duration<double>(std::chrono::steady_clock::now() - started_).count();
    warnings_.push_back(fmt::format("CPU sampling stopped {:.3f} s after it started: {}. The samples taken until then "
                                    "are kept.",
                                    after, why));
    stopped_early_ = true;
  }
}

bool CpuSampler::active(std::uint64_t run) const noexcept {
  return active() && run == epoch_.load(std::memory_order_acquire);
}

CpuProfilerStats CpuSampler::stats() const noexcept {
  CpuProfilerStats s;
  std::lock_guard lock(mu_);
  s.samples = samples_.size();
  s.dropped = dropped_ + over_limit_;
  for (const auto& t : threads_) s.dropped += t->dropped.load(std::memory_order_relaxed);
  s.threads_sampled = threads_sampled_;
  const bool capped = mechanism_ == "thread-cpu-timer";
  s.effective_hz = capped ? std::min(options_.hz, kTimerMaxHz) : options_.hz;
  s.mechanism = mechanism_.c_str();
  s.unwinder = unwinder_.c_str();
  return s;
}

// ---- threads -----------------------------------------------------------------------------

SampledThread* CpuSampler::take_free_slot() {
  for (auto& t : threads_)
    if (!t->armed.load(std::memory_order_relaxed) && t->tid == 0) return t.get();
  threads_.push_back(std::make_unique<SampledThread>());
  return threads_.back().get();
}

bool CpuSampler::arm_kernel_ring(SampledThread& t, std::string& why) noexcept {
  const int fd =
      open_perf_event(t.tid, period_ns_, PerfDelivery::KernelStack, options_.call_graph, options_.max_stack_depth,
                      kernel_copy_bytes_);
  if (fd < 0) {
    why = fmt::format("perf_event_open: {}", std::strerror(errno));
    return false;
  }
  // 256 KiB holds ~25 ms of 10 kHz samples 128 frames deep, several drains; smaller rings
  // when the locked-memory limits (kernel.perf_event_mlock_kb, RLIMIT_MEMLOCK) refuse it.
  const auto page = static_cast<std::size_t>(sysconf(_SC_PAGESIZE));
  void* ring = MAP_FAILED;
  std::size_t bytes = 0;
  for (std::size_t pages = kKernelRingPages; pages >= 4 && ring == MAP_FAILED; pages /= 2) {
    bytes = (1 + pages) * page;
    ring = mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  }
  if (ring == MAP_FAILED) {
    why = fmt::format("its perf ring could not be mapped ({}; see kernel.perf_event_mlock_kb)", std::strerror(errno));
    close(fd);
    return false;
  }
  t.perf_fd = fd;
  t.perf_page = ring;
  t.perf_bytes = bytes;
  t.kernel_ring = true;
  t.armed.store(true, std::memory_order_release);
  ioctl(fd, PERF_EVENT_IOC_RESET, 0);
  if (ioctl(fd, PERF_EVENT_IOC_ENABLE, 0) != 0) {
    why = fmt::format("perf event enable: {}", std::strerror(errno));
    disarm(t);
    return false;
  }
  return true;
}

bool CpuSampler::arm(SampledThread& t, std::string& why) noexcept {
  if (python_.readable) {
    // An empty cache: its descriptions may name ids the new run never saw. Without memory
    // for one, the thread is sampled without Python frames.
    if (t.python)
      t.python->reset();
    else
      t.python.reset(collect::PythonThreadCache::create());
  }
  t.dropped.store(0, std::memory_order_relaxed);
  t.truncated.store(0, std::memory_order_relaxed);
  t.stack_begin = t.stack_end = 0;
  t.kernel_ring = false;
  const auto tid = static_cast<pid_t>(t.tid);
  if (use_perf_) {
    if (t.perf_page != nullptr) munmap(t.perf_page, t.perf_bytes);  // of an earlier thread, long gone
    t.perf_page = nullptr;
    if (kernel_stacks_) {
      if (arm_kernel_ring(t, why)) return true;
      // This thread is sampled through signals instead; the profile says why.
      if (warnings_.size() < 20)
        warnings_.push_back(fmt::format("thread {}: kernel-walked stacks unavailable ({}); its stacks are walked in "
                                        "a signal handler instead",
                                        t.tid, why));
      why.clear();
    }
  }
  if (!t.ring.init(ring_words_)) {
    why = "no memory for its sample buffer";
    return false;
  }
  if (use_perf_) {
    const int fd = open_perf_event(t.tid, period_ns_, PerfDelivery::Signal, false, 1);
    if (fd < 0) {
      why = fmt::format("perf_event_open: {}", std::strerror(errno));
      return false;
    }
    if (fd >= kFdTableSize) {
      close(fd);
      why = "too many open files";
      return false;
    }
    const auto page = static_cast<std::size_t>(sysconf(_SC_PAGESIZE));
    void* ring = mmap(nullptr, 2 * page, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    f_owner_ex owner{F_OWNER_TID, tid};
    if (ring == MAP_FAILED || fcntl(fd, F_SETFL, O_RDWR | O_NONBLOCK | O_ASYNC) != 0 ||
        fcntl(fd, F_SETSIG, signal_) != 0 || fcntl(fd, F_SETOWN_EX, &owner) != 0) {
      why = fmt::format("perf event setup: {}", std::strerror(errno));
      if (ring != MAP_FAILED) munmap(ring, 2 * page);
      close(fd);
      return false;
    }
    t.perf_fd = fd;
    t.perf_page = ring;
    t.perf_bytes = 2 * page;
    g_fd_owner[fd].store(&t, std::memory_order_release);
    t.armed.store(true, std::memory_order_release);
    ioctl(fd, PERF_EVENT_IOC_RESET, 0);
    if (ioctl(fd, PERF_EVENT_IOC_ENABLE, 0) != 0) {
      why = fmt::format("perf event enable: {}", std::strerror(errno));
      disarm(t);
      return false;
    }
    return true;
  }
  const bool wall = options_.clock == SamplingClock::Wall;
  // The CPU-time clock of thread `tid` (the kernel's MAKE_THREAD_CPUCLOCK(tid, CPUCLOCK_SCHED)).
  const clockid_t clock = wall ? CLOCK_MONOTONIC : static_cast<clockid_t>((~static_cast<clockid_t>(tid) << 3) | 6);
  sigevent ev{};
  ev.sigev_notify = SIGEV_THREAD_ID;
  ev.sigev_signo = signal_;
  ev._sigev_un._tid = tid;  // glibc 2.36 has no sigev_notify_thread_id macro
  ev.sigev_value.sival_ptr = &t;
  if (timer_create(clock, &ev, &t.timer) != 0) {
    why = fmt::format("timer_create: {}", std::strerror(errno));
    return false;
  }
  t.has_timer = true;
  t.armed.store(true, std::memory_order_release);
  itimerspec spec{};
  spec.it_interval.tv_sec = static_cast<time_t>(period_ns_ / 1'000'000'000);
  spec.it_interval.tv_nsec = static_cast<long>(period_ns_ % 1'000'000'000);
  spec.it_value = spec.it_interval;
  if (timer_settime(t.timer, 0, &spec, nullptr) != 0) {
    why = fmt::format("timer_settime: {}", std::strerror(errno));
    disarm(t);
    return false;
  }
  return true;
}

void CpuSampler::disarm(SampledThread& t) noexcept {
  t.armed.store(false, std::memory_order_release);
  if (t.has_timer) {
    timer_delete(t.timer);
    t.has_timer = false;
  }
  if (t.perf_fd >= 0) {
    ioctl(t.perf_fd, PERF_EVENT_IOC_DISABLE, 0);
    if (t.kernel_ring) {
      try {
        read_kernel_ring(t);  // the thread's last samples
      } catch (...) {
        // Out of memory: they are lost with the ring.
      }
    }
    g_fd_owner[t.perf_fd].store(nullptr, std::memory_order_release);
    close(t.perf_fd);
    t.perf_fd = -1;
    // The mapping is unmapped when the slot is armed again: a handler may still be reading it.
  }
}

void CpuSampler::scan_threads() {
  std::lock_guard lock(mu_);
  ++scans_;
  DIR* dir = opendir("/proc/self/task");
  if (dir == nullptr) return;
  while (dirent* e = readdir(dir)) {
    char* end = nullptr;
    const long long tid = std::strtoll(e->d_name, &end, 10);
    if (end == e->d_name || *end != '\0' || tid <= 0 || tid == manager_tid_) continue;
    if (!options_.threads.empty() &&
        std::find(options_.threads.begin(), options_.threads.end(), tid) == options_.threads.end())
      continue;
    if (auto it = by_tid_.find(tid); it != by_tid_.end()) {
      it->second->seen_in_scan = scans_;
      continue;
    }
    SampledThread* t = take_free_slot();
    t->tid = tid;
    t->name = read_comm(tid);
    std::string why;
    if (!arm(*t, why)) {
      t->tid = 0;
      if (warnings_.size() < 20) warnings_.push_back(fmt::format("thread {} was not sampled: {}", tid, why));
      continue;
    }
    t->seen_in_scan = scans_;
    by_tid_.emplace(tid, t);
    names_[tid] = t->name;
    ++threads_sampled_;
  }
  closedir(dir);
  const bool refresh_names = scans_ % 25 == 0;
  for (auto it = by_tid_.begin(); it != by_tid_.end();) {
    SampledThread* t = it->second;
    if (t->seen_in_scan == scans_) {
      if (refresh_names) {
        // Threads often name themselves just after they start.
        std::string name = read_comm(t->tid);
        if (!name.empty()) names_[t->tid] = t->name = std::move(name);
      }
      ++it;
      continue;
    }
    // The thread has exited: nothing can interrupt it any more. Its last samples are read
    // by the next drain, which then frees the slot.
    disarm(*t);
    it = by_tid_.erase(it);
  }
}

void CpuSampler::manager_main() {
  InternalAllocations internal;  // for good: nothing this thread allocates is the program's
  {
    std::lock_guard lock(mu_);
    manager_tid_ = current_tid();
  }
  pthread_setname_np(pthread_self(), "nnprof-sampler");
  // Kernel rings are drained every few milliseconds, so that small rings (locked-memory
  // limits) keep up with 10 kHz, rings of stack copies every 10 ms; threads are looked for
  // every thread_scan_ms.
  const auto scan_every = std::chrono::milliseconds(options_.thread_scan_ms);
  auto next_scan = std::chrono::steady_clock::now() + scan_every;
  const auto drain_every = kernel_stacks_    ? std::min(scan_every, kKernelDrainEvery)
                           : copy_bytes_ > 0 ? std::min(scan_every, std::chrono::milliseconds(kCopyDrainEveryMs))
                                             : scan_every;
  std::unique_lock lock(manager_mu_);
  while (!manager_stop_) {
    manager_cv_.wait_for(lock, drain_every);
    if (manager_stop_) break;
    lock.unlock();
    if (!our_handler_on(signal_)) {
      // The program installed its own handler on our signal: it is the program's now. Stop
      // before more of our timers' signals reach its handler, and say so in the profile; the
      // run stays open until its owner stops it.
      try {
        std::lock_guard data(mu_);
        halt_locked(fmt::format("the program installed its own handler for {}, the signal the sampler used",
                                signal_name(signal_)));
      } catch (...) {
      }
      halted_.store(true, std::memory_order_release);
      lock.lock();
      break;
    }
    try {
      if (std::chrono::steady_clock::now() >= next_scan) {
        scan_threads();
        next_scan = std::chrono::steady_clock::now() + scan_every;
      }
      std::lock_guard data(mu_);
      drain_locked();
    } catch (...) {
      // Out of memory: samples stay in the rings until the next round.
    }
    lock.lock();
  }
}

// ---- samples ------------------------------------------------------------------------------

std::uint32_t CpuSampler::intern_stack_locked(const std::uintptr_t* pcs, std::size_t depth) {
  if (depth == 0) return 0;
  scratch_.assign(pcs, pcs + depth);
  auto it = stack_ids_.find(scratch_);
  if (it == stack_ids_.end()) {
    stacks_.push_back(scratch_);
    it = stack_ids_.emplace(scratch_, static_cast<std::uint32_t>(stacks_.size())).first;
  }
  return it->second;
}

void CpuSampler::read_kernel_ring(SampledThread& t) {
  if (t.perf_page == nullptr) return;
  auto* meta = static_cast<perf_event_mmap_page*>(t.perf_page);
  const auto page = static_cast<std::uint64_t>(sysconf(_SC_PAGESIZE));
  const std::uint64_t size = meta->data_size != 0 ? meta->data_size : t.perf_bytes - page;
  const auto* data = static_cast<const unsigned char*>(t.perf_page) + (meta->data_offset != 0 ? meta->data_offset : page);
  const std::uint64_t head = __atomic_load_n(&meta->data_head, __ATOMIC_ACQUIRE);
  std::uint64_t tail = meta->data_tail;
  std::uintptr_t pcs[kMaxStackDepth];
  while (head - tail >= sizeof(perf_event_header)) {
    perf_event_header h;
    copy_from_perf_ring(data, size, tail, &h, sizeof h);
    if (h.size < sizeof h || h.size > head - tail) break;  // never from a correct kernel; do not spin on it
    record_bytes_.resize(h.size);
    copy_from_perf_ring(data, size, tail, record_bytes_.data(), h.size);
    tail += h.size;
    const unsigned char* body = record_bytes_.data() + sizeof h;
    const std::size_t body_words = (h.size - sizeof h) / 8;
    std::uint64_t w[4];
    if (h.type == PERF_RECORD_LOST && body_words >= 2) {
      std::memcpy(w, body, 16);
      dropped_ += w[1];  // {id, lost}
      continue;
    }
    if (h.type == PERF_RECORD_THROTTLE) {
      ++throttled_;
      continue;
    }
    if (h.type != PERF_RECORD_SAMPLE || body_words < 3) continue;
    if (samples_.size() >= options_.max_samples) {
      ++over_limit_;
      continue;
    }
    // ip; pid, tid; time; then with a call graph: nr, nr addresses; abi, sp; size, stack
    // bytes, dyn_size.
    std::memcpy(w, body, 24);
    RawCpuSample s;
    s.tid = static_cast<std::int64_t>(static_cast<std::uint32_t>(w[1] >> 32));
    s.monotonic_ns = w[2];
    s.weight_ns = period_ns_;
    std::size_t depth = 0;
    const std::size_t end = h.size - sizeof h;
    auto word_at = [&](std::size_t offset) {
      std::uint64_t v = 0;
      if (offset + 8 <= end) std::memcpy(&v, body + offset, 8);
      return v;
    };
    if (options_.call_graph && end >= 32) {
      const std::uint64_t nr = std::min<std::uint64_t>(word_at(24), (end - 32) / 8);
      std::uint64_t chain[kMaxStackDepth];
      std::size_t n = 0;
      for (std::uint64_t i = 0; i < nr && n < kMaxStackDepth; ++i) {
        const std::uint64_t pc = word_at(32 + 8 * i);
        if (pc < static_cast<std::uint64_t>(PERF_CONTEXT_MAX) && pc != 0) chain[n++] = pc;  // not a context marker
      }
      // The registers (rbp, rsp) and the copy of the top of the user stack: every function
      // that has no frame of its own there, which the kernel's walk skipped, is stepped through
      // by its unwind rule, and the kernel's chain goes on from the first frame record the
      // copy does not hold (FrameRules::unwind_copy).
      std::size_t at = 32 + 8 * nr;
      const std::uint64_t abi = word_at(at);
      const bool regs = abi != PERF_SAMPLE_REGS_ABI_NONE;
      const std::uint64_t bp = regs ? word_at(at + 8) : 0, sp = regs ? word_at(at + 16) : 0;
      at += 8 + (regs ? 16 : 0);
      const std::uint64_t copied = word_at(at);
      const unsigned char* stack = at + 8 + copied <= end ? body + at + 8 : nullptr;
      const std::uint64_t valid = stack != nullptr ? std::min(copied, word_at(at + 8 + copied)) : 0;
      if (n > 0 && regs) {
        if (!frame_rules_) frame_rules_ = std::make_unique<collect::FrameRules>();
        collect::StackCopy copy;
        copy.pc = static_cast<std::uintptr_t>(chain[0]);
        copy.sp = static_cast<std::uintptr_t>(sp);
        copy.fp = static_cast<std::uintptr_t>(bp);
        copy.bytes = stack;
        copy.size = static_cast<std::size_t>(valid);
        copy.kernel_returns = chain + 1;
        copy.kernel_return_count = n - 1;
        collect::UnwindEnd unwind_end = collect::UnwindEnd::Complete;
        depth = frame_rules_->unwind_copy(copy, pcs, options_.max_stack_depth, unwind_end);
        if (unwind_end == collect::UnwindEnd::Incomplete) ++incomplete_;
      } else {
        // The interrupted instruction first, then return addresses: minus one names the call.
        for (std::size_t i = 0; i < n && depth < options_.max_stack_depth; ++i)
          pcs[depth++] = static_cast<std::uintptr_t>(i == 0 ? chain[i] : chain[i] - 1);
      }
      if (nr >= std::min(options_.max_stack_depth, kernel_max_stack())) ++truncated_;
    }
    if (depth == 0) pcs[depth++] = static_cast<std::uintptr_t>(w[0]);
    s.stack = intern_stack_locked(pcs, depth);
    samples_.push_back(s);
  }
  __atomic_store_n(&meta->data_tail, tail, __ATOMIC_RELEASE);
}

std::size_t CpuSampler::unwind_record_locked(const std::uint64_t* rec, std::uint32_t words, std::uintptr_t* pcs) {
  if (words < kDwarfHeaderWords) return 0;
  collect::StackCopy copy;
  copy.pc = static_cast<std::uintptr_t>(rec[4]);
  copy.sp = static_cast<std::uintptr_t>(rec[5]);
  copy.fp = static_cast<std::uintptr_t>(rec[6]);
  copy.chain_frames = static_cast<std::size_t>(rec[7] >> 32);
  copy.size = static_cast<std::size_t>(rec[7] & 0xFFFFFFFF);
  if (kDwarfHeaderWords + 3 * copy.chain_frames + copy.size / 8 > words) return 0;  // never from our handler
  copy.chain = rec + kDwarfHeaderWords;
  copy.bytes = reinterpret_cast<const unsigned char*>(rec + kDwarfHeaderWords + 3 * copy.chain_frames);
  if (!frame_rules_) frame_rules_ = std::make_unique<collect::FrameRules>();
  collect::UnwindEnd end = collect::UnwindEnd::Complete;
  const std::size_t depth = frame_rules_->unwind_copy(copy, pcs, options_.max_stack_depth, end);
  if (end == collect::UnwindEnd::Depth) ++truncated_;
  if (end == collect::UnwindEnd::Incomplete) ++incomplete_;
  return depth;
}

std::uint32_t CpuSampler::intern_with_python_locked(const std::uintptr_t* pcs, std::size_t depth,
                                                    const std::uint64_t* section, std::uint32_t section_words) {
  if (section == nullptr) return intern_stack_locked(pcs, depth);
  std::uintptr_t spliced[kMaxStackDepth];
  const std::size_t n = python_stacks_.splice(section, section_words, pcs, depth, spliced, options_.max_stack_depth);
  return intern_stack_locked(spliced, n);
}

void CpuSampler::drain_locked() {
  for (auto& slot : threads_) {
    SampledThread& t = *slot;
    const std::int64_t tid = t.tid;
    if (t.kernel_ring && t.perf_fd >= 0) read_kernel_ring(t);
    t.ring.drain([&](const std::uint64_t* rec, std::uint32_t words) {
      if (words < 4) return;
      if (samples_.size() >= options_.max_samples) {
        ++over_limit_;
        return;
      }
      RawCpuSample s;
      s.ticks = rec[1];
      s.weight_ns = rec[2];
      s.tid = tid;
      s.node_thread = static_cast<std::uint32_t>(rec[3] >> 32);
      s.node = static_cast<std::uint32_t>(rec[3]);
      const auto flags = static_cast<std::uint32_t>(rec[0] >> 8) & 0xFFFFFF;
      const std::uint32_t section_words = (flags & kFlagPython) != 0 ? collect::python_section_words(rec, words) : 0;
      const std::uint64_t* section = section_words != 0 ? rec + words - section_words : nullptr;
      const std::uint32_t native_words = words - section_words;
      if ((flags & kFlagDwarf) != 0) {
        std::uintptr_t pcs[kMaxStackDepth];
        const std::size_t depth = unwind_record_locked(rec, native_words, pcs);
        s.stack = intern_with_python_locked(pcs, depth, section, section_words);
      } else {
        s.stack = intern_with_python_locked(reinterpret_cast<const std::uintptr_t*>(rec + 4),
                                            native_words > 4 ? native_words - 4 : 0, section, section_words);
        if ((flags & kFlagTruncated) != 0) ++truncated_;
      }
      samples_.push_back(s);
    });
    dropped_ += t.dropped.exchange(0, std::memory_order_relaxed);
    // A slot whose thread exited and whose ring is now empty can serve another thread.
    if (!t.armed.load(std::memory_order_acquire) && by_tid_.find(tid) == by_tid_.end()) t.tid = 0;
  }
}

void CpuSampler::discard_samples(std::size_t count) {
  std::lock_guard lock(mu_);
  count = std::min(count, samples_.size());
  samples_.erase(samples_.begin(), samples_.begin() + static_cast<std::ptrdiff_t>(count));
}

void CpuSampler::snapshot(RawCpu& out) {
  InternalAllocations internal;
  std::lock_guard lock(mu_);
  drain_locked();
  out.sampled = true;
  out.mode = options_.clock == SamplingClock::Wall ? "wall" : "cpu";
  out.mechanism = mechanism_;
  out.unwinder = unwinder_;
  out.requested_hz = options_.hz;
  out.period_ns = period_ns_;
  out.dropped = dropped_ + over_limit_;
  out.truncated = truncated_ + incomplete_;
  out.threads_sampled = threads_sampled_;
  out.samples = samples_;
  out.stacks = stacks_;
  out.thread_names.assign(names_.begin(), names_.end());
  out.python_frames = python_stacks_.frames();
  out.warnings = warnings_;
  if (over_limit_ > 0)
    out.warnings.push_back(fmt::format("{} samples beyond the limit of {} were not kept (CpuProfilerOptions::max_samples)",
                                       over_limit_, options_.max_samples));
  if (dropped_ > 0)
    out.warnings.push_back(fmt::format(
        "{} samples were lost because a thread's sample buffer was full before it was drained", dropped_));
  if (incomplete_ > 0)
    out.warnings.push_back(fmt::format(
        "the stacks of {} samples end early: the unwind tables could not step further (code without tables, or a "
        "stack deeper than the {} bytes copied per sample) and no frame-pointer chain went on from there",
        incomplete_, kernel_stacks_ ? kernel_copy_bytes_ : copy_bytes_));
  if (samples_.empty()) {
    const double period_ms = static_cast<double>(period_ns_) / 1e6;
    std::string why;
    if (stopped_early_)
      why = "sampling stopped early (see the warning above)";
    else if (threads_sampled_ == 0)
      why = "no thread could be sampled (see the warnings above)";
    else if (options_.clock == SamplingClock::Wall)
      why = fmt::format("sampling was on for less than one period ({:.3g} ms)", period_ms);
    else
      why = fmt::format("the {} sampled threads used less than one period ({:.3g} ms) of CPU time each while sampling "
                        "was on",
                        threads_sampled_, period_ms);
    out.warnings.push_back("no CPU samples were taken: " + why);
  }
  if (throttled_ > 0)
    out.warnings.push_back(fmt::format(
        "the kernel throttled sampling {} times (kernel.perf_cpu_time_max_percent): fewer samples than the rate asks",
        throttled_));
}

// ---- the signal handler ---------------------------------------------------------------------

void CpuSampler::on_signal(siginfo_t* info, void* ucontext) noexcept {
  if (!g_config.running.load(std::memory_order_acquire)) return;
  SampledThread* t = nullptr;
  std::uint64_t weight = g_config.period_ns;
  if (info->si_code == SI_TIMER) {
    t = static_cast<SampledThread*>(info->si_value.sival_ptr);
    // Expirations that came while this one was pending: the sample stands for them too.
    if (info->si_overrun > 0) weight *= 1 + static_cast<std::uint64_t>(info->si_overrun);
  } else if (info->si_code > 0 && info->si_fd >= 0 && info->si_fd < kFdTableSize) {
    // Only the kernel's POLL_* codes carry si_fd: a signal queued by hand (si_code < 0)
    // must not name another thread's ring.
    t = g_fd_owner[info->si_fd].load(std::memory_order_acquire);
    if (t != nullptr && t->perf_page != nullptr) {
      // Empty the event's own ring (it holds only the sample's ip): the kernel signals again
      // only while it has room.
      auto* meta = static_cast<perf_event_mmap_page*>(t->perf_page);
      const std::uint64_t head = __atomic_load_n(&meta->data_head, __ATOMIC_ACQUIRE);
      __atomic_store_n(&meta->data_tail, head, __ATOMIC_RELEASE);
    }
  }
  if (t == nullptr || !t->armed.load(std::memory_order_acquire)) return;

  const std::uint64_t ticks = read_ticks();
  // The innermost open scope: this thread's state, if it records into the sampled profiler.
  std::uint64_t scope = ~std::uint64_t{0} << 32;
  if (tls_current.owner == g_config.core_id && tls_current.state != nullptr) {
    const Frame* top = tls_current.state->top;
    if (const Node* n = top != nullptr ? top->node.load(std::memory_order_relaxed) : nullptr)
      scope = (std::uint64_t{n->thread} << 32) | n->index;
  }

  const auto* context = static_cast<const ucontext_t*>(ucontext);
  const auto pc = static_cast<std::uintptr_t>(context->uc_mcontext.gregs[REG_RIP]);
  const auto sp = static_cast<std::uintptr_t>(context->uc_mcontext.gregs[REG_RSP]);
  const auto fp = static_cast<std::uintptr_t>(context->uc_mcontext.gregs[REG_RBP]);
  if (g_config.call_graph && (sp < t->stack_begin || sp >= t->stack_end)) {
    // Once per thread, and again when it runs on another stack (sigaltstack, a coroutine):
    // the mapping of its stack bounds every read below.
    std::uintptr_t begin = 0, end = 0;
    if (collect::find_mapping(sp, begin, end)) {
      t->stack_begin = begin;
      t->stack_end = end;
    } else {
      t->stack_begin = t->stack_end = 0;
    }
  }
  const std::uintptr_t stack_end = sp >= t->stack_begin && sp < t->stack_end ? t->stack_end : 0;

  if (g_config.dwarf) {
    // The registers, the top of the stack and the frame records beyond it; the manager thread
    // unwinds them with the DWARF tables (FrameRules::unwind_copy).
    const std::uint32_t copy =
        stack_end == 0 ? 0 : static_cast<std::uint32_t>(std::min<std::uintptr_t>(g_config.copy_bytes, stack_end - sp) & ~7u);
    std::uint32_t python_most = 0;
    collect::PythonThreadCache* python = t->python.get();
    const int python_frames =
        python != nullptr ? python->collect(python_most, stack_end != 0 ? t->stack_begin : 0, stack_end) : 0;
    const auto most = static_cast<std::uint32_t>(kDwarfHeaderWords + 3 * g_config.max_depth + copy / 8 + python_most);
    std::uint64_t* rec = t->ring.begin_write(most);
    if (rec == nullptr) {
      t->dropped.fetch_add(1, std::memory_order_relaxed);
      return;
    }
    const int frames =
        stack_end == 0 ? 0
                       : collect::frame_records_from(fp, sp, sp + copy, stack_end, rec + kDwarfHeaderWords, g_config.max_depth);
    auto words = static_cast<std::uint32_t>(kDwarfHeaderWords + 3 * frames + copy / 8);
    collect::copy_stack_words(sp, rec + kDwarfHeaderWords + 3 * frames, copy / 8);
    const std::uint32_t python_words = python != nullptr ? python->write(python_frames, rec + words) : 0;
    words += python_words;
    rec[0] = collect::SampleRing::header(words, collect::SampleRing::kSample,
                                         kFlagDwarf | (python_words != 0 ? kFlagPython : 0));
    rec[1] = ticks;
    rec[2] = weight;
    rec[3] = scope;
    rec[4] = pc;
    rec[5] = sp;
    rec[6] = fp;
    rec[7] = (std::uint64_t{static_cast<std::uint32_t>(frames)} << 32) | copy;
    t->ring.commit(words);
    return;
  }

  std::uintptr_t pcs[kMaxStackDepth];
  int depth = 1;
  bool truncated = false;
  pcs[0] = pc;
  if (g_config.call_graph) depth = collect::capture_interrupted_stack(ucontext, pcs, g_config.max_depth, stack_end, truncated);
  std::uint32_t python_most = 0;
  collect::PythonThreadCache* python = g_config.call_graph ? t->python.get() : nullptr;
  const int python_frames =
      python != nullptr ? python->collect(python_most, stack_end != 0 ? t->stack_begin : 0, stack_end) : 0;
  auto words = static_cast<std::uint32_t>(4 + depth);
  std::uint64_t* rec = t->ring.begin_write(words + python_most);
  if (rec == nullptr) {
    t->dropped.fetch_add(1, std::memory_order_relaxed);
    return;
  }
  for (int i = 0; i < depth; ++i) rec[4 + i] = pcs[i];
  const std::uint32_t python_words = python != nullptr ? python->write(python_frames, rec + words) : 0;
  words += python_words;
  rec[0] = collect::SampleRing::header(words, collect::SampleRing::kSample,
                                       (truncated ? kFlagTruncated : 0) | (python_words != 0 ? kFlagPython : 0));
  rec[1] = ticks;
  rec[2] = weight;
  rec[3] = scope;
  t->ring.commit(words);
}

}  // namespace nnprof::detail
