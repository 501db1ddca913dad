// A timeline with named tracks, written as a Chrome trace (Perfetto UI, chrome://tracing) and
// as a flame graph.
//
//   auto timeline = nnprof::TimelineBuilder().add_track("CPU").add_track("GPU").add_track("Memory").build();
//   timeline.record([&] { model.forward(input); });   // scopes: NNPROF_SCOPE_IN(timeline.profiler(), ...)
//   timeline.save_chrome_trace("timeline.json");
//   timeline.save_flamegraph("flamegraph.svg");
//
// A track is a source of data on the trace, each shown as nnprof's Chrome trace shows it:
//   "CPU"     the scopes of every thread, one trace row per thread (always recorded), and CPU
//             samples, which the flame graph draws;
//   "Memory"  heap in use and RSS over time (heap tracking: needs the allocation hooks,
//             nnprof::memory) and one counter row per named memory counter (record_alloc);
//   "GPU"     kernels, copies and memsets per device and stream (CUPTI: needs an NVIDIA driver).
// A track whose collector cannot run here (no hooks, no GPU driver) is kept with a note saying
// why (tracks()); the rest of the timeline is recorded as usual.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <vector>

#include "nnprof/config.hpp"
#include "nnprof/cpu_profiler.hpp"
#include "nnprof/gpu.hpp"
#include "nnprof/memory.hpp"
#include "nnprof/profile.hpp"
#include "nnprof/profiler.hpp"

namespace nnprof {

/// One track of a Timeline and whether its collector runs.
struct TimelineTrack {
  std::string name;       ///< "CPU", "Memory" or "GPU"
  bool collecting = false;  ///< its collector ran during the last record()
  std::string note;       ///< why it did not, or what it shows
};

class Timeline;

/// The tracks of a Timeline.
class NNPROF_API TimelineBuilder {
 public:
  /// Adds the track `name`: "CPU", "Memory" or "GPU" (ASCII case-insensitive). Throws
  /// nnprof::Error for another name.
  TimelineBuilder& add_track(std::string_view name);
  /// CPU samples per second of the CPU track (1 to 10000; 997 by default, an odd rate so that
  /// samples do not fall in step with periodic work).
  TimelineBuilder& sample_rate(double hz) noexcept;
  /// Throws nnprof::Error when no track was added or the rate is out of range.
  [[nodiscard]] Timeline build() const;

 private:
  std::vector<std::string> tracks_;
  double hz_ = 997.0;
};

/// Records its tracks while record() runs; saves what it recorded.
class NNPROF_API Timeline {
 public:
  Timeline(std::vector<std::string> tracks, double sample_hz);
  ~Timeline();
  Timeline(Timeline&&) noexcept;
  Timeline& operator=(Timeline&&) noexcept;

  /// Runs `work` with the tracks' collectors on, inside a scope named `name`; returns what
  /// `work` returns. Each record() adds to the same timeline.
  template <class F>
  decltype(auto) record(std::string_view name, F&& work) {
    begin(name);
    try {
      if constexpr (std::is_void_v<decltype(work())>) {
        work();
        end();
      } else {
        decltype(auto) result = work();
        end();
        return result;
      }
    } catch (...) {
      end();
      throw;
    }
  }
  template <class F>
  decltype(auto) record(F&& work) {
    return record("record", std::forward<F>(work));
  }
  /// record() in two halves, for work that does not fit a function: begin(name) ... end().
  void begin(std::string_view name = "record");
  void end();

  /// The profiler the timeline records into: NNPROF_SCOPE_IN(timeline.profiler(), "matmul").
  [[nodiscard]] Profiler& profiler() noexcept { return *profiler_; }
  /// Everything recorded so far.
  [[nodiscard]] Profile profile() const { return profiler_->snapshot(); }
  [[nodiscard]] const std::vector<TimelineTrack>& tracks() const noexcept { return tracks_; }

  /// The Chrome trace of everything recorded (Report::export_to with ReportFormat::Chrome).
  void save_chrome_trace(const std::string& path) const;
  /// The CPU flame graph as SVG (ReportFormat::Flamegraph). Throws nnprof::Error without the
  /// CPU track or without a sample.
  void save_flamegraph(const std::string& path) const;

 private:
  [[nodiscard]] TimelineTrack* track(std::string_view name) noexcept;

  std::vector<TimelineTrack> tracks_;
  double sample_hz_ = 0.0;
  std::unique_ptr<Profiler> profiler_;
  std::unique_ptr<CpuProfiler> cpu_;
  std::unique_ptr<MemoryTracking> heap_;
  std::unique_ptr<CudaProfiler> gpu_;
  std::string open_scope_;
};

}  // namespace nnprof
