// The CPU sampler: the process-wide owner of the profiling signal (a real-time signal the
// program does not use, chosen at start: never SIGPROF, which programs use), the per-thread
// sampling timers and the sample buffers. It hands a RawCpu to snapshots of the profiler it
// samples into.
//
// Mechanism, chosen per rate by measurement (docs/PERFORMANCE.md, "Issue 5"):
// - up to 250 Hz: a POSIX timer per thread on that thread's CPU-time clock, delivered to that
//   thread (SIGEV_THREAD_ID). Busy threads are sampled in proportion to their CPU use; the
//   kernel fires these timers on its tick (HZ = 250 here), so higher rates would be capped;
// - above 250 Hz: a perf_event_open software CPU-clock event per thread. Exact up to 10 kHz.
//   By default (Unwinder::Auto or Kernel) the kernel walks the user stack's frame pointers when
//   it takes the sample and writes it, with rbp, rsp and the top of the stack, into the event's
//   ring, which the manager thread reads and unwinds through the frames the walk skipped (those
//   without frame pointers; FrameRules::unwind_copy): no signal per sample, so the cost is
//   that of `perf record -g`; the sample's scope is found
//   from the spans by time when the profile is built. With Unwinder::Dwarf (alias Libunwind)
//   or FramePointer, the overflow signals the thread instead (F_SETOWN_EX + F_SETSIG) and the
//   handler records the stack. When perf_event_open is not allowed (perf_event_paranoid,
//   seccomp), timers are used and the profile says that the rate was capped;
// - wall-clock mode: a POSIX timer per thread on CLOCK_MONOTONIC, delivered to that thread,
//   so threads are sampled whether they run or wait.
// The signal handler reads the thread's innermost open nnprof scope and records the stack into
// that thread's SampleRing: with Unwinder::Dwarf (and Auto, Kernel where the kernel cannot walk)
// the registers, a copy of the top of the stack and the frame records beyond it, which the
// manager thread unwinds with the DWARF tables (FrameRules::unwind_copy, as `perf record
// --call-graph dwarf`); with FramePointer the frame-pointer chain. It never calls an unwinder
// library (docs/ARCHITECTURE.md, "What may run in a signal handler, and why"). The manager
// thread finds new threads (/proc/self/task), drains and unwinds the rings, and stops sampling,
// with a warning in the profile, when the program takes the sampler's signal.
#pragma once

#include <signal.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <thread>
#include <unordered_map>
#include <vector>

#include "collect/cpu/python_frames.hpp"
#include "collect/cpu/sample_ring.hpp"
#include "nnprof/cpu_profiler.hpp"
#include "record/heap_source.hpp"
#include "collect/stack/frame_rules.hpp"
#include "collect/stack/stack_ids.hpp"
#include "record/raw_snapshot.hpp"

namespace nnprof::detail {

/// One sampled kernel thread. Never freed while the process runs: a signal generated before
/// its timer was deleted may still arrive and name it. Reused for later threads.
struct SampledThread {
  std::atomic<bool> armed{false};  ///< the handler records samples only while set
  std::int64_t tid = 0;
  std::string name;
  bool has_timer = false;
  timer_t timer{};
  int perf_fd = -1;
  void* perf_page = nullptr;  ///< the event's ring buffer: emptied by the handler, or read by the manager (kernel_ring)
  bool kernel_ring = false;   ///< its samples and stacks come from the kernel, in perf_page; no signal
  std::size_t perf_bytes = 0;
  collect::SampleRing ring;
  /// The mapping of the thread's stack, found by the handler when the stack pointer leaves it
  /// (handler only): every read of the stack stays inside it.
  std::uintptr_t stack_begin = 0, stack_end = 0;
  std::atomic<std::uint64_t> dropped{0};
  std::atomic<std::uint64_t> truncated{0};
  std::uint64_t seen_in_scan = 0;
  /// The handler's Python frame cache and scratch (collect/cpu/python_frames.hpp): made, or
  /// emptied, when the thread is armed while a CPython 3.11 interpreter is read.
  collect::PythonThreadCachePtr python;
};

/// Nonzero while this thread runs the sampler's signal handler: tests count the allocations
/// made then (there must be none).
extern constinit thread_local int tls_in_sample_handler [[gnu::tls_model("initial-exec")]];

class CpuSampler {
 public:
  /// The one sampler of the process. Never destroyed (late signals may still arrive).
  static CpuSampler& instance();

  /// Starts sampling into `session`, which keeps the samples as its CPU source; returns the
  /// run id. Throws nnprof::Error.
  std::uint64_t start(Session& session, const CpuProfilerOptions& options);
  /// Stops run `run` (0: whichever runs). Samples stay available to snapshots. A non-empty
  /// `why` says in the profile why sampling stopped before its owner stopped it.
  void stop(std::uint64_t run = 0, std::string_view why = {}) noexcept;
  /// Whether some run samples now (not halted because the program took the signal).
  [[nodiscard]] bool active() const noexcept {
    return active_.load(std::memory_order_acquire) && !halted_.load(std::memory_order_acquire);
  }
  /// Whether run `run` samples now.
  [[nodiscard]] bool active(std::uint64_t run) const noexcept;
  [[nodiscard]] CpuProfilerStats stats() const noexcept;

  /// Fills `out` with every sample taken so far.
  void snapshot(RawCpu& out);
  /// Forgets the first `count` samples kept (those a snapshot returned and a continuous
  /// profile has folded into its windows), so that a long run does not keep every sample.
  /// Samples kept since that snapshot stay. The distinct stacks stay too (they are shared).
  void discard_samples(std::size_t count);

  /// The signal handler's body (async-signal-safe).
  void on_signal(siginfo_t* info, void* ucontext) noexcept;

 private:
  CpuSampler() = default;
  void manager_main();
  void scan_threads();
  bool arm(SampledThread& t, std::string& why) noexcept;
  bool arm_kernel_ring(SampledThread& t, std::string& why) noexcept;
  /// Moves the samples of a kernel-stack perf ring into samples_ (mu_ held).
  void read_kernel_ring(SampledThread& t);
  std::uint32_t intern_stack_locked(const std::uintptr_t* pcs, std::size_t depth);
  /// Unwinds a DWARF sample record (stack copy, `words` words without its Python section) into
  /// `pcs` (mu_ held); returns the depth.
  std::size_t unwind_record_locked(const std::uint64_t* rec, std::uint32_t words, std::uintptr_t* pcs);
  /// Splices a record's Python section into `pcs` and interns the stack (mu_ held).
  std::uint32_t intern_with_python_locked(const std::uintptr_t* pcs, std::size_t depth, const std::uint64_t* section,
                                          std::uint32_t section_words);
  /// Disarms every thread and takes in their last samples; a non-empty `why` goes into the
  /// profile as the reason sampling stopped early (mu_ held).
  void halt_locked(std::string_view why);
  void disarm(SampledThread& t) noexcept;
  void drain_locked();
  SampledThread* take_free_slot();

  std::atomic<bool> active_{false};  ///< a run is open (until its owner or a yield stops it)
  std::atomic<bool> halted_{false};  ///< its sampling stopped early: the program took the signal
  std::atomic<std::uint64_t> epoch_{0};
  CpuProfilerOptions options_;
  bool use_perf_ = false;
  bool kernel_stacks_ = false;  ///< perf events whose stacks the kernel walks (Unwinder::Kernel)
  std::string mechanism_, unwinder_;
  int signal_ = 0;                  ///< the signal of this run's timers and perf events
  std::uint32_t copy_bytes_ = 0;    ///< stack bytes copied per sample (DWARF unwinding), else 0
  std::uint32_t kernel_copy_bytes_ = 0;  ///< stack bytes the kernel copies per sample (kernel stacks)
  std::chrono::steady_clock::time_point started_{};
  std::uint64_t period_ns_ = 0;
  std::size_t ring_words_ = 0;
  std::int64_t manager_tid_ = 0;

  mutable std::mutex mu_;  // everything below
  std::vector<std::unique_ptr<SampledThread>> threads_;  // every slot ever made
  std::unordered_map<std::int64_t, SampledThread*> by_tid_;  // armed threads of this run
  std::uint64_t scans_ = 0;
  std::uint32_t threads_sampled_ = 0;
  std::uint64_t dropped_ = 0, truncated_ = 0, incomplete_ = 0, over_limit_ = 0, throttled_ = 0;
  bool stopped_early_ = false;
  std::vector<unsigned char> record_bytes_;  // one perf record, copied out of its ring
  std::unique_ptr<collect::FrameRules> frame_rules_;  // DWARF unwinding; kernel stacks: frames without frame pointers
  std::vector<RawCpuSample> samples_;
  collect::StackIds stack_ids_;
  std::vector<std::vector<std::uintptr_t>> stacks_;
  std::unordered_map<std::int64_t, std::string> names_;  // every thread sampled in this run
  std::vector<std::string> warnings_;
  std::vector<std::uintptr_t> scratch_;
  collect::PythonInterpreter python_;   // the CPython this run reads, if any
  collect::PythonStacks python_stacks_;  // Python frames of this run's stacks

  std::mutex manager_mu_;
  std::condition_variable manager_cv_;
  bool manager_stop_ = false;
  std::thread manager_;

  class Source;
  std::shared_ptr<Source> source_;
};

}  // namespace nnprof::detail
