// CPU profiling in one object: a builder for the sampling rate and call graph, then start()
// and stop(), which returns the hot functions of the samples taken in between.
//
//   auto profiler = nnprof::CpuProfilerBuilder().sample_rate(1000).enable_call_graph(true).build();
//   profiler.start();
//   compute_intensive_operation();
//   nnprof::CpuReport report = profiler.stop();
//   for (const nnprof::FunctionStats& f : report.function_stats)
//     std::cout << f.name << ": " << f.total_time_ms << "ms (" << f.percentage << "% of total time)\n";
//
// It is nnprof::CpuProfiler (nnprof/cpu_profiler.hpp) sampling into a Profiler of its own; the
// function figures are those of every report's CPU section (the same grouping of frames into
// functions, the same self and total counts).
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "nnprof/config.hpp"
#include "nnprof/cpu_profiler.hpp"
#include "nnprof/profile.hpp"
#include "nnprof/profiler.hpp"

namespace nnprof {

/// One function of a CPU profile. Times are the CPU (or wall) time the samples stand for:
/// samples x sampling period.
struct FunctionStats {
  std::string name;          ///< demangled name, "module+0x1a2b" without a symbol, or "[unknown]"
  std::string module;        ///< file name of the executable or library; empty when unknown
  std::uint64_t self_samples = 0;   ///< samples taken in the function itself
  std::uint64_t total_samples = 0;  ///< samples with the function anywhere on the stack (once each)
  double self_time_ms = 0.0;        ///< time in the function itself
  double total_time_ms = 0.0;       ///< time in the function and everything it called
  /// total_time_ms as a percentage of all sampled time: "15 ms (30% of total time)". A caller
  /// includes its callees, so these do not add up to 100; self_percentage does (at most).
  double percentage = 0.0;
  double self_percentage = 0.0;     ///< self_time_ms as a percentage of all sampled time

  bool operator==(const FunctionStats&) const = default;
};

/// The functions of `profile`'s CPU samples, most self time first (equal: most total time,
/// then by name); empty without samples.
NNPROF_API std::vector<FunctionStats> function_stats(const Profile& profile);

/// A line of Python code and the CPU samples taken while it ran: the line-level profile of a
/// Python program (Python frames in CPU samples: CPython 3.11).
struct PythonLineStats {
  std::string function;  ///< "qualname (file.py:first line)", as every CPU view names the frame
  std::string file;      ///< the .py file
  std::uint32_t line = 0;
  /// Samples whose innermost Python frame was on this line: its own work and that of the
  /// native code it called (a torch operator, BLAS), as a line profiler charges a line.
  std::uint64_t self_samples = 0;
  /// Samples with this line anywhere on the Python stack (once each): with the Python
  /// functions it called.
  std::uint64_t total_samples = 0;
  double self_time_ms = 0.0;
  double total_time_ms = 0.0;
  double self_percentage = 0.0;  ///< of all sampled time
  double percentage = 0.0;       ///< total_time_ms as a percentage of all sampled time

  bool operator==(const PythonLineStats&) const = default;
};

/// The Python lines of `profile`'s CPU samples, most self time first (equal: most total time,
/// then by file and line); empty when no sample has a Python frame.
NNPROF_API std::vector<PythonLineStats> python_line_stats(const Profile& profile);

/// What a SamplingProfiler saw between start() and stop().
struct CpuReport {
  double total_time_ms = 0.0;    ///< wall time from start() to stop()
  double sampled_time_ms = 0.0;  ///< CPU (or wall) time the samples stand for, over every thread
  std::uint64_t samples = 0;
  double effective_hz = 0.0;     ///< the rate used (capped below the request where the kernel limits it)
  std::vector<FunctionStats> function_stats;  ///< most self time first
  Profile profile;               ///< everything recorded: for reports (Report), flame graphs, save()
};

class SamplingProfiler;

/// Settings of a SamplingProfiler; build() checks them.
class NNPROF_API CpuProfilerBuilder {
 public:
  /// Samples per second of each thread's CPU time, 1 to 10000 (199 by default). Above 250 Hz
  /// the kernel's perf events are used; where they are not allowed the rate is capped and the
  /// profile says so.
  CpuProfilerBuilder& sample_rate(double hz) noexcept;
  /// Whole call stacks (true, the default), or only the interrupted function: total times then
  /// equal self times.
  CpuProfilerBuilder& enable_call_graph(bool on) noexcept;
  /// CPU time of each thread (the default) or elapsed time (threads are sampled while blocked too).
  CpuProfilerBuilder& clock(SamplingClock clock) noexcept;
  /// Every other setting of the sampler.
  CpuProfilerBuilder& options(const CpuProfilerOptions& options) noexcept;
  /// A stopped profiler with these settings. Throws nnprof::Error for a rate outside 1..10000.
  [[nodiscard]] SamplingProfiler build() const;

 private:
  CpuProfilerOptions options_;
};

/// Samples the process's threads between start() and stop(). One may sample at a time per
/// process (nnprof::CpuProfiler's rule).
class NNPROF_API SamplingProfiler {
 public:
  explicit SamplingProfiler(const CpuProfilerOptions& options);
  ~SamplingProfiler();
  SamplingProfiler(SamplingProfiler&&) noexcept;
  SamplingProfiler& operator=(SamplingProfiler&&) noexcept;

  /// Starts sampling into a fresh profile. Throws nnprof::Error when it is running already or
  /// another sampler runs in the process.
  void start();
  /// Stops sampling and returns what was sampled since start(). Throws nnprof::Error when it
  /// was not started.
  CpuReport stop();
  [[nodiscard]] bool running() const noexcept;
  /// The profiler that records this run (for scopes of your own: NNPROF_SCOPE_IN); valid
  /// from start() until the next start().
  [[nodiscard]] Profiler& profiler();
  [[nodiscard]] const CpuProfilerOptions& options() const noexcept { return options_; }

 private:
  CpuProfilerOptions options_;
  std::unique_ptr<Profiler> profiler_;
  std::unique_ptr<CpuProfiler> sampler_;
  std::chrono::steady_clock::time_point started_{};
};

}  // namespace nnprof
