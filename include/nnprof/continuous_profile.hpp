// What continuous profiling (nnprof::ContinuousProfiler, `nnprof record --continuous`) adds to
// a profile: the run cut into windows of a fixed interval (aligned to step ends when the
// program marks steps), each with what happened in it, older windows rolled up into coarser
// ones, and the trends and anomalies nnprof found over them (docs/CONTINUOUS.md).
#pragma once

#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "nnprof/trends.hpp"

namespace nnprof {

/// One scope's work inside one window: the difference of its cumulative statistics between
/// the window's end and its start. Nested calls of the same name count once, as in ScopeStats.
struct WindowScope {
  std::string name;  ///< scope name; "[other]" sums the scopes beyond the window's top K
  std::uint64_t calls = 0;
  std::uint64_t total_ns = 0;  ///< inclusive time
  std::uint64_t self_ns = 0;
  std::uint64_t items = 0;     ///< work items reported (add_items)

  bool operator==(const WindowScope&) const = default;
};

/// One function's CPU samples inside one window (the innermost frame of each sample).
struct WindowFunction {
  std::string name;  ///< demangled function; "[other]" sums the functions beyond the top K
  std::uint64_t samples = 0;
  std::uint64_t weight_ns = 0;  ///< CPU (or wall) time the samples stand for

  bool operator==(const WindowFunction&) const = default;
};

/// A stretch of a continuous run and what happened in it. Counts and times are sums over the
/// window (a rolled-up window's are the exact sums of the raw windows it replaced); memory
/// levels are the value at the window's end and the highest seen in it.
struct ProfileWindow {
  static constexpr double kNotMeasured = std::numeric_limits<double>::quiet_NaN();

  std::uint64_t start_ns = 0;  ///< since the session's start
  std::uint64_t end_ns = 0;
  std::uint32_t raw_windows = 1;  ///< raw windows summed into this one (1: not rolled up)
  /// The window closed at a step end (the first after the interval elapsed); false: at the
  /// interval (no step marked, or the step ran longer than the wait allowed).
  bool step_aligned = false;

  std::uint64_t steps = 0;    ///< calls of the step scope that ended in the window
  std::uint64_t step_ns = 0;  ///< their inclusive time
  std::uint64_t items = 0;    ///< work items of the step scope
  std::uint64_t scope_calls = 0;  ///< calls of every scope ended in the window

  std::uint64_t cpu_samples = 0;    ///< CPU samples taken in the window
  std::uint64_t cpu_sample_ns = 0;  ///< the time they stand for
  std::vector<WindowScope> scopes;       ///< top scopes by inclusive time, then "[other]"
  std::vector<WindowFunction> functions; ///< top functions by samples, then "[other]"

  std::uint64_t rss_bytes = 0;       ///< resident memory at the end (0: not read)
  std::uint64_t rss_peak_bytes = 0;  ///< the highest resident memory seen in the window
  std::uint64_t heap_live_bytes = 0; ///< tracked heap in use at the end (0 without heap tracking)
  std::uint64_t heap_alloc_bytes = 0;  ///< allocated in the window
  std::uint64_t heap_free_bytes = 0;   ///< freed in the window
  double gpu_memory_bytes = kNotMeasured;  ///< GPU memory in use at the end, every GPU summed
  double energy_joules = kNotMeasured;     ///< every counted domain over the window
  double cpu_percent = kNotMeasured;       ///< the process's CPU use, mean over the window (100 = one core)

  /// Equal field by field, a NaN equal to a NaN (a saved and loaded profile compares equal).
  bool operator==(const ProfileWindow& o) const noexcept {
    const auto same = [](double a, double b) { return a == b || (a != a && b != b); };
    return start_ns == o.start_ns && end_ns == o.end_ns && raw_windows == o.raw_windows &&
           step_aligned == o.step_aligned && steps == o.steps && step_ns == o.step_ns && items == o.items &&
           scope_calls == o.scope_calls && cpu_samples == o.cpu_samples && cpu_sample_ns == o.cpu_sample_ns &&
           scopes == o.scopes && functions == o.functions && rss_bytes == o.rss_bytes &&
           rss_peak_bytes == o.rss_peak_bytes && heap_live_bytes == o.heap_live_bytes &&
           heap_alloc_bytes == o.heap_alloc_bytes && heap_free_bytes == o.heap_free_bytes &&
           same(gpu_memory_bytes, o.gpu_memory_bytes) && same(energy_joules, o.energy_joules) &&
           same(cpu_percent, o.cpu_percent);
  }
};

struct ContinuousProfile {
  bool enabled = false;             ///< false: not a continuous run; the rest is empty
  std::uint64_t interval_ns = 0;    ///< the raw windows' length asked for
  std::string step_scope;           ///< the scope whose ends close windows; empty: none was marked
  /// stop() ran and the anomalies and trends are those of every window. False in a file a
  /// crash left behind: reports then compute them from the windows the file holds.
  bool finished = false;
  std::vector<ProfileWindow> windows;  ///< oldest first; the oldest are rolled up
  std::vector<Anomaly> anomalies;   ///< level shifts, outliers and growth, oldest first
  std::vector<Trend> trends;        ///< one per metric with enough windows

  bool operator==(const ContinuousProfile&) const = default;
};

}  // namespace nnprof
