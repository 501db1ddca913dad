// Timeline: the collectors of its tracks around record(), into one Profiler, saved through
// the report exporters (Chrome trace, flame graph).
#include "nnprof/timeline.hpp"

#include <algorithm>
#include <utility>

#include <fmt/format.h>

#include "nnprof/error.hpp"
#include "nnprof/report.hpp"

namespace nnprof {

namespace {

constexpr std::string_view kTrackNames[] = {"CPU", "Memory", "GPU"};

bool same_ascii_case_insensitive(std::string_view a, std::string_view b) {
  const auto lower = [](char c) { return c >= 'A' && c <= 'Z' ? static_cast<char>(c - 'A' + 'a') : c; };
  return a.size() == b.size() && std::equal(a.begin(), a.end(), b.begin(), [&](char x, char y) { return lower(x) == lower(y); });
}

}  // namespace

TimelineBuilder& TimelineBuilder::add_track(std::string_view name) {
  for (std::string_view known : kTrackNames) {
    if (!same_ascii_case_insensitive(name, known)) continue;
    if (std::find(tracks_.begin(), tracks_.end(), known) == tracks_.end()) tracks_.emplace_back(known);
    return *this;
  }
  throw Error(fmt::format("'{}' is not a timeline track: add \"CPU\" (scopes and CPU samples), \"Memory\" (heap and "
                          "memory counters) or \"GPU\" (kernels and copies)",
                          name));
}

TimelineBuilder& TimelineBuilder::sample_rate(double hz) noexcept {
  hz_ = hz;
  return *this;
}

Timeline TimelineBuilder::build() const {
  if (tracks_.empty()) throw Error("a timeline needs a track: add_track(\"CPU\"), \"Memory\" or \"GPU\"");
  if (!(hz_ >= 1.0 && hz_ <= 10'000.0))
    throw Error(fmt::format("a CPU sampling rate of {} Hz is out of range: choose 1 to 10000 samples per second", hz_));
  return Timeline(tracks_, hz_);
}

Timeline::Timeline(std::vector<std::string> tracks, double sample_hz)
    : sample_hz_(sample_hz), profiler_(std::make_unique<Profiler>()) {
  for (std::string& name : tracks) tracks_.push_back(TimelineTrack{std::move(name), false, {}});
}
Timeline::~Timeline() {
  if (profiler_ != nullptr && !open_scope_.empty()) end();
}
Timeline::Timeline(Timeline&&) noexcept = default;
Timeline& Timeline::operator=(Timeline&&) noexcept = default;

TimelineTrack* Timeline::track(std::string_view name) noexcept {
  for (TimelineTrack& t : tracks_)
    if (t.name == name) return &t;
  return nullptr;
}

void Timeline::begin(std::string_view name) {
  if (!open_scope_.empty()) throw Error("the timeline is recording already: end() it before recording again");
  if (TimelineTrack* t = track("CPU")) {
    CpuProfilerOptions options;
    options.hz = sample_hz_;
    cpu_ = std::make_unique<CpuProfiler>(*profiler_, options);  // throws when another sampler runs
    t->collecting = true;
    t->note = fmt::format("scopes per thread, CPU samples at {:g} Hz", cpu_->stats().effective_hz);
  }
  if (TimelineTrack* t = track("Memory")) {
    std::string why;
    if (heap_hooks_available(&why)) {
      MemoryTrackingOptions options;
      options.interval = std::chrono::milliseconds(10);  // a timeline of a short run needs more than 100 ms steps
      options.find_leaks = false;
      heap_ = std::make_unique<MemoryTracking>(*profiler_, options);
      t->collecting = true;
      t->note = "heap in use and RSS over time; named memory counters";
    } else {
      t->collecting = false;
      t->note = fmt::format("heap tracking unavailable: {}; only named memory counters (record_alloc) are shown", why);
    }
  }
  if (TimelineTrack* t = track("GPU")) {
    gpu_ = std::make_unique<CudaProfiler>(*profiler_);
    t->collecting = gpu_->status().tracing();
    t->note = t->collecting ? "kernels, copies and memsets per device and stream" : gpu_->status().message;
  }
  open_scope_ = std::string(name);
  profiler_->start(open_scope_);
}

void Timeline::end() {
  if (open_scope_.empty()) return;
  profiler_->stop(open_scope_);
  open_scope_.clear();
  // Stopped in the reverse order of starting; each keeps what it collected in the profiler.
  if (gpu_) gpu_->stop();
  if (heap_) heap_->stop();
  if (cpu_) cpu_->stop();
  gpu_.reset();
  heap_.reset();
  cpu_.reset();
}

void Timeline::save_chrome_trace(const std::string& path) const {
  Report(profile()).export_to(path, ReportFormat::Chrome);
}

void Timeline::save_flamegraph(const std::string& path) const {
  if (std::none_of(tracks_.begin(), tracks_.end(), [](const TimelineTrack& t) { return t.name == "CPU"; }))
    throw Error(fmt::format("cannot write the flame graph '{}': the timeline has no CPU track, so no CPU samples; "
                            "add_track(\"CPU\")",
                            path));
  const Profile p = profile();
  if (p.cpu_samples.empty())
    throw Error(fmt::format("cannot write the flame graph '{}': no CPU sample was taken; record longer work or raise "
                            "sample_rate()",
                            path));
  Report(p).export_to(path, ReportFormat::Flamegraph);
}

}  // namespace nnprof
