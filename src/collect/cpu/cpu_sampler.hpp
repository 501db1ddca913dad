// The CPU sampler: the process-wide owner of the profiling signal (SIGPROF), the per-thread
// sampling timers and the sample buffers. It hands a RawCpu to snapshots of the profiler it
// samples into.
//
// Mechanism, chosen per rate by measurement (docs/PERFORMANCE.md, "Issue 5"):
// - up to 250 Hz: a POSIX timer per thread on that thread's CPU-time clock, delivered to that
//   thread (SIGEV_THREAD_ID). Busy threads are sampled in proportion to their CPU use; the
//   kernel fires these timers on its tick (HZ = 250 here), so higher rates would be capped;
// - above 250 Hz: a perf_event_open software CPU-clock event per thread. Exact up to 10 kHz.
//   By default (Unwinder::Auto or Kernel) the kernel walks the user stack's frame pointers when
//   it takes the sample and writes it into the event's ring, which the manager thread reads:
//   no signal per sample, so the cost is that of `perf record -g`; the sample's scope is found
//   from the spans by time when the profile is built. With Unwinder::Libunwind or
//   FramePointer, the overflow signals the thread instead (F_SETOWN_EX + F_SETSIG) and the
//   handler walks the stack. When perf_event_open is not allowed (perf_event_paranoid,
//   seccomp), timers are used and the profile says that the rate was capped;
// - wall-clock mode: a POSIX timer per thread on CLOCK_MONOTONIC, delivered to that thread,
//   so threads are sampled whether they run or wait.
// The signal handler walks the interrupted stack (libunwind, or frame pointers), reads the
// thread's innermost open nnprof scope, and writes both into that thread's SampleRing. A
// manager thread finds new threads (/proc/self/task) and drains the rings.
#pragma once

#include <signal.h>

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <unordered_map>
#include <vector>

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
  std::uintptr_t stack_end = 0;  ///< end of the thread's stack, for frame-pointer walks (handler only)
  bool stack_looked_up = false;  ///< (handler only)
  std::atomic<std::uint64_t> dropped{0};
  std::atomic<std::uint64_t> truncated{0};
  std::uint64_t seen_in_scan = 0;
};

class CpuSampler {
 public:
  /// The one sampler of the process. Never destroyed (late signals may still arrive).
  static CpuSampler& instance();

  /// Starts sampling into `profiler`; returns the run id. Throws nnprof::Error.
  std::uint64_t start(Profiler& profiler, const CpuProfilerOptions& options);
  /// Stops run `run` (0: whichever runs). Samples stay available to snapshots.
  void stop(std::uint64_t run = 0) noexcept;
  [[nodiscard]] bool active() const noexcept { return active_.load(std::memory_order_acquire); }
  [[nodiscard]] CpuProfilerStats stats() const noexcept;

  /// Fills `out` with every sample taken so far.
  void snapshot(RawCpu& out);

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
  void disarm(SampledThread& t) noexcept;
  void drain_locked();
  SampledThread* take_free_slot();

  std::atomic<bool> active_{false};
  std::atomic<std::uint64_t> epoch_{0};
  CpuProfilerOptions options_;
  SessionCore* core_ = nullptr;
  bool use_perf_ = false;
  bool kernel_stacks_ = false;  ///< perf events whose stacks the kernel walks (Unwinder::Kernel)
  std::string mechanism_, unwinder_;
  std::uint64_t period_ns_ = 0;
  std::size_t ring_words_ = 0;
  std::int64_t manager_tid_ = 0;

  mutable std::mutex mu_;  // everything below
  std::vector<std::unique_ptr<SampledThread>> threads_;  // every slot ever made
  std::unordered_map<std::int64_t, SampledThread*> by_tid_;  // armed threads of this run
  std::uint64_t scans_ = 0;
  std::uint32_t threads_sampled_ = 0;
  std::uint64_t dropped_ = 0, truncated_ = 0, over_limit_ = 0, throttled_ = 0;
  std::vector<unsigned char> record_bytes_;  // one perf record, copied out of its ring
  std::unique_ptr<collect::FrameRules> frame_rules_;  // for kernel stacks: callers of frameless functions
  std::uint64_t callers_recovered_ = 0;
  std::vector<RawCpuSample> samples_;
  collect::StackIds stack_ids_;
  std::vector<std::vector<std::uintptr_t>> stacks_;
  std::unordered_map<std::int64_t, std::string> names_;  // every thread sampled in this run
  std::vector<std::string> warnings_;
  std::vector<std::uintptr_t> scratch_;

  std::mutex manager_mu_;
  std::condition_variable manager_cv_;
  bool manager_stop_ = false;
  std::thread manager_;

  class Source;
  std::shared_ptr<Source> source_;
};

}  // namespace nnprof::detail
