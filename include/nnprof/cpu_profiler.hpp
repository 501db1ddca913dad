// CPU sampling: where the threads of the process spend their time, including the code nobody
// instrumented. A sampler interrupts each thread at a fixed rate of its CPU time (or of wall
// time) and records its call stack and innermost open nnprof scope; symbols (function,
// file:line, inlined frames) are resolved when a profile is taken, never while sampling.
#pragma once

#include <cstdint>
#include <vector>

#include "nnprof/config.hpp"
#include "nnprof/profiler.hpp"

namespace nnprof {

/// What a sample period measures.
enum class SamplingClock : std::uint8_t {
  Cpu,   ///< CPU time of each thread: busy threads are sampled in proportion to their CPU use
  Wall,  ///< elapsed time: every thread is sampled, also while blocked (I/O, locks, sleep)
};

/// How the call stack of an interrupted thread is walked. No unwinder library runs in the
/// signal handler: they may allocate or take the loader's locks, which deadlocks a thread
/// interrupted inside malloc (docs/ARCHITECTURE.md, "What may run in a signal handler").
enum class Unwinder : std::uint8_t {
  /// Above 250 Hz of CPU time: Kernel, so that a sample costs no signal (docs/PERFORMANCE.md,
  /// "Issue 5"). Otherwise Dwarf.
  Auto,
  /// The DWARF unwind tables (.eh_frame), as `perf record --call-graph dwarf`: the signal
  /// handler copies the registers and the top of the stack (16 KiB up to 250 Hz, less above),
  /// and the sampler's own thread unwinds the copy afterwards. Right for code built without
  /// frame pointers; where the tables cannot step (code without them, a stack deeper than the
  /// copy) the frame-pointer chain goes on, else the stack ends there and is counted as
  /// truncated.
  Dwarf,
  /// The name this option had when libunwind walked the stack inside the signal handler,
  /// which could deadlock: now the same as Dwarf, kept so that existing code compiles.
  Libunwind = Dwarf,
  FramePointer,  ///< the frame-pointer chain, walked in a signal handler
  /// The kernel walks the frame-pointer chain when it takes the sample, as `perf record -g`
  /// does, and no signal interrupts the thread: the cheapest per sample. The frames it skips
  /// (functions without frame pointers) are unwound afterwards by their DWARF rules over the
  /// top of the stack the kernel copies with the sample (4 KiB at most), so callers are lost
  /// only where such frames go deeper than that copy. Needs
  /// perf_event_open, so CPU-time sampling above 250 Hz only. The sample's nnprof scope is
  /// found afterwards from the recorded spans (ProfilerOptions::record_spans) by time;
  /// samples that fall where no span was kept have none.
  Kernel,
};

struct CpuProfilerOptions {
  /// Samples per second of each thread's CPU time (or of wall time), 1 to 10000. Rates above
  /// 250 Hz need perf_event_open (the kernel's CPU-time timers tick at most at HZ, 250 here);
  /// without it the rate is capped and the profile says so.
  double hz = 199.0;
  SamplingClock clock = SamplingClock::Cpu;
  /// Record whole call stacks; false records only the interrupted function.
  bool call_graph = true;
  Unwinder unwinder = Unwinder::Auto;
  /// Kernel thread ids to sample; empty: every thread of the process, including threads
  /// created later (found within `thread_scan_ms`).
  std::vector<std::int64_t> threads;
  /// How often new threads are looked for and the sample buffers are drained.
  std::uint32_t thread_scan_ms = 20;
  /// Deepest stack recorded (1 to 256); deeper stacks lose their outermost frames.
  std::uint32_t max_stack_depth = 128;
  /// Samples kept at most (about 40 bytes each plus their distinct stacks); later ones are
  /// counted as dropped.
  std::uint64_t max_samples = 10'000'000;
  /// Give way to another CpuProfiler: when one is started in this process while this one
  /// runs, this one stops (its profile keeps its samples and a warning says when and why) and
  /// the other starts. For a profiler that watches a program from outside (nnprof record's
  /// agent) while the program may start its own. Without it, a second start throws.
  bool yield_to_program = false;
};

/// Figures of a running (or stopped) sampler.
struct CpuProfilerStats {
  std::uint64_t samples = 0;          ///< samples taken so far
  std::uint64_t dropped = 0;          ///< lost to full buffers or max_samples
  std::uint32_t threads_sampled = 0;  ///< threads that had a sampling timer at some point
  double effective_hz = 0.0;          ///< the rate in use (may be capped below the request)
  const char* mechanism = "";         ///< "perf_event", "thread-cpu-timer" or "wall-timer"
  const char* unwinder = "";          ///< "dwarf", "frame-pointer", "kernel-frame-pointer" or "none"
};

/// Samples the process's threads while it lives; its samples go into `profiler`'s snapshots.
/// One at a time per process (signals and timers are process-wide). The timers signal a
/// real-time signal that nothing in the process handled at the start (SIGPROF and the other
/// signals programs use are left alone); if the program installs a handler on it later,
/// sampling stops and the profile says so.
class NNPROF_API CpuProfiler {
 public:
  /// Starts sampling into `profiler`, which must outlive this object. Throws nnprof::Error
  /// for a rate out of range, when another sampler runs (unless that one yields:
  /// CpuProfilerOptions::yield_to_program), or when every real-time signal is taken.
  explicit CpuProfiler(Profiler& profiler, const CpuProfilerOptions& options = {});
  ~CpuProfiler();
  CpuProfiler(const CpuProfiler&) = delete;
  CpuProfiler& operator=(const CpuProfiler&) = delete;

  /// Stops sampling; later snapshots of the profiler still contain every sample taken.
  void stop() noexcept;
  /// False once stopped, also when it stopped early (it yielded, or the program took its signal).
  [[nodiscard]] bool active() const noexcept;
  [[nodiscard]] CpuProfilerStats stats() const noexcept;

 private:
  std::uint64_t run_ = 0;
};

}  // namespace nnprof
