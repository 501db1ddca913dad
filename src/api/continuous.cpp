// nnprof::ContinuousProfiler: cuts a running profiler's statistics into windows
// (analysis/continuous_windows), keeps them rolled up within a bound, appends each finished
// window to the .nnprof (io/continuous_store) and computes the trends and anomalies over them
// (analysis/continuous_trends). Composition only: the collectors are the ordinary ones.
#include "nnprof/continuous.hpp"

#include <pthread.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <mutex>
#include <stdexcept>
#include <thread>
#include <utility>

#include <fmt/format.h>

#include "analysis/continuous_trends.hpp"
#include "api/continuous_attach.hpp"
#include "analysis/continuous_windows.hpp"
#include "collect/cpu/cpu_sampler.hpp"
#include "io/continuous_store.hpp"
#include "nnprof/cpu_profiler.hpp"
#include "nnprof/detail/clock_read.hpp"
#include "nnprof/error.hpp"
#include "nnprof/memory.hpp"
#include "nnprof/profiler.hpp"
#include "nnprof/system.hpp"
#include "record/internal_allocations.hpp"
#include "record/session.hpp"

namespace nnprof {

namespace {

constexpr const char* kMetricNames[] = {"cpu", "memory", "gpu", "system"};

bool has_metric(const ContinuousOptions& o, std::string_view name) {
  return std::find(o.metrics.begin(), o.metrics.end(), name) != o.metrics.end();
}

ContinuousOptions checked(ContinuousOptions o) {
  if (o.interval.count() <= 0) throw std::invalid_argument("nnprof: a continuous profile needs an interval above 0");
  for (const std::string& m : o.metrics)
    if (std::find_if(std::begin(kMetricNames), std::end(kMetricNames), [&](const char* n) { return m == n; }) ==
        std::end(kMetricNames))
      throw std::invalid_argument("nnprof: unknown continuous metric '" + m + "' (cpu, memory, gpu, system)");
  if (!(o.max_step_wait >= 0.0)) throw std::invalid_argument("nnprof: max_step_wait must not be negative");
  if (!o.clock) {
    o.clock = [] {
      return static_cast<std::uint64_t>(
          std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now().time_since_epoch())
              .count());
    };
  }
  return o;
}

// How often the background thread looks at the clock and the step scope: a step end is seen
// within this, so it bounds how far a window's end is from the step end it aligns to.
std::chrono::nanoseconds poll_period(std::chrono::nanoseconds interval) {
  return std::clamp<std::chrono::nanoseconds>(interval / 100, std::chrono::milliseconds(2),
                                              std::chrono::milliseconds(100));
}


// The running ContinuousProfilers by the Profiler they window (detail::running_continuous_profile).
// Lock order: this mutex, then an Impl's; so an Impl registers and unregisters without holding
// its own.
struct RunningContinuous {
  const Profiler* profiler;
  const void* impl;
  ContinuousProfile (*current)(const void* impl);
};
std::mutex g_running_mu;
std::vector<RunningContinuous>& running_profilers() {
  static auto* running = new std::vector<RunningContinuous>();  // never destroyed: atexit order
  return *running;
}
void forget_running(const void* impl) noexcept {
  std::lock_guard lock(g_running_mu);
  auto& running = running_profilers();
  std::erase_if(running, [impl](const RunningContinuous& r) { return r.impl == impl; });
}
}  // namespace

struct ContinuousProfiler::Impl {
  Impl(Profiler& p, const ContinuousOptions& o) : profiler(&p), options(checked(o)), store(options.rollup) {}

  Profiler* profiler;
  ContinuousOptions options;

  mutable std::mutex mu;
  bool running = false;
  analysis::WindowStore store;
  analysis::WindowBaseline baseline;
  std::string step_scope;
  std::uint64_t clock_origin = 0;   // options.clock at start()
  std::uint64_t session_offset = 0; // the session's age at start(), so windows are on its clock
  std::uint64_t window_start_clock = 0;
  std::uint64_t last_step_count = 0;
  std::size_t windows_since_analysis = 0;
  std::vector<Anomaly> anomalies;
  std::vector<Trend> trends;
  std::vector<Diagnostic> diagnostics;
  std::unique_ptr<io::ContinuousFileWriter> writer;
  bool file_has_scopes = false;  // the file's base profile was taken at a window's end
  bool write_failed = false;     // a write failed once (said once in the diagnostics)

  std::unique_ptr<CpuProfiler> sampler;
  std::unique_ptr<MemoryTracking> tracking;
  std::unique_ptr<SystemMonitor> monitor;

  std::thread thread;
  std::condition_variable wake;
  bool stopping = false;
  std::atomic<pid_t> owner_pid{0};  // while running: the process whose start() made the window thread

  // A forked child inherits this object but not the window thread, and maybe a mutex that
  // thread held at the fork: it can neither join the thread nor lock the state.
  [[nodiscard]] bool in_forked_child() const noexcept {
    const pid_t owner = owner_pid.load(std::memory_order_relaxed);
    return owner != 0 && owner != getpid();
  }
  void refuse_in_forked_child(const char* what) const {
    if (in_forked_child())
      throw Error(fmt::format("ContinuousProfiler::{}() in process {}: this profiler runs in process {}, and a forked "
                              "child cannot {} it (its window thread is the parent's); profile the child with its "
                              "own ContinuousProfiler",
                              what, getpid(), owner_pid.load(), what));
  }

  [[nodiscard]] std::uint64_t session_ns(std::uint64_t clock_now) const {
    return session_offset + (clock_now - std::min(clock_now, clock_origin));
  }

  [[nodiscard]] ContinuousProfile current_locked(bool finished) const {
    ContinuousProfile c;
    c.enabled = true;
    c.interval_ns = static_cast<std::uint64_t>(options.interval.count());
    c.step_scope = step_scope;
    c.finished = finished;
    c.windows = store.windows();
    c.anomalies = anomalies;
    c.trends = trends;
    return c;
  }

  void analyse_locked() {
    ContinuousProfile c;
    c.windows = store.windows();
    PerformanceTrends t = analysis::continuous_trends(c);
    anomalies = std::move(t.anomalies);
    trends = std::move(t.trends);
    windows_since_analysis = 0;
  }

  void start_collectors() {
    const auto note = [&](DiagnosticKind kind, const std::string& what, const std::exception& e) {
      diagnostics.push_back(Diagnostic{kind, Severity::Warning, kNone, kNone, 0,
                                       "continuous profiling: " + what + " is off: " + e.what()});
    };
    if (has_metric(options, "cpu")) {
      try {
        CpuProfilerOptions cpu;
        cpu.hz = options.sample_hz;
        sampler = std::make_unique<CpuProfiler>(*profiler, cpu);
      } catch (const std::exception& e) {
        note(DiagnosticKind::CpuSampling, "CPU sampling", e);
      }
    }
    if (has_metric(options, "memory")) {
      try {
        MemoryTrackingOptions memory;
        memory.partial_ok = true;
        // The timeline is only read for each window's peak: a point a second keeps it small.
        memory.interval = std::chrono::milliseconds(1000);
        tracking = std::make_unique<MemoryTracking>(*profiler, memory);
      } catch (const std::exception& e) {
        note(DiagnosticKind::HeapTracking, "heap tracking", e);
      }
    }
    if (has_metric(options, "system") || has_metric(options, "gpu")) {
      try {
        SystemOptions system;
        system.interval_ms = options.system_interval_ms;
        monitor = std::make_unique<SystemMonitor>(*profiler, system);
      } catch (const std::exception& e) {
        note(DiagnosticKind::MetricsIncomplete, "the system monitor", e);
      }
    }
  }

  // Closes the window in progress at `clock_now`.
  void close_window_locked(std::uint64_t clock_now, bool aligned) {
    const std::uint64_t snapshot_monotonic_ns = detail::monotonic_ns();  // every system sample before it is in the snapshot
    const Profile snapshot = profiler->statistics_snapshot();
    if (step_scope.empty()) step_scope = analysis::default_step_scope(snapshot);
    analysis::WindowReadings readings;
    readings.rss_bytes = get_current_memory();
    ProfileWindow w = analysis::measure_window(snapshot, baseline, session_ns(window_start_clock), session_ns(clock_now),
                                               step_scope, readings, options.rollup);
    w.step_aligned = aligned;
    baseline = analysis::window_baseline(snapshot);
    // Samples folded into a window are not kept again: a long run must not keep them all.
    if (snapshot.cpu.sampled && !snapshot.cpu_samples.empty())
      detail::CpuSampler::instance().discard_samples(snapshot.cpu_samples.size());
    // The system monitor's samples too, whoever started the monitor (this profiler's metrics,
    // or `nnprof record --system` beside --continuous): the window has their summary and the
    // energy totals stay whole.
    if (detail::Session* session = profiler->core().session) {
      if (const auto source = session->system_source()) source->discard_before(snapshot_monotonic_ns);
      // The heap timeline likewise: the window has its peak.
      if (const auto heap = session->heap_source(); heap && !snapshot.heap_samples.empty())
        heap->discard_timeline(snapshot.heap_samples.size());
    }
    window_start_clock = clock_now;
    const analysis::WindowStore::Change change = store.add(std::move(w));
    if (options.analyze_every > 0 && ++windows_since_analysis >= options.analyze_every) analyse_locked();
    if (!options.output_path.empty() && running) write_window_locked(snapshot, change);
  }

  // Mirrors the store's change into the file. The file written at start() holds the profile
  // before any step; at the first window (and after a failed write) the file is written anew
  // from this window's snapshot with every window so far, so that a file left by a crash has
  // the run's scopes to report, and a failure costs no window for good.
  void write_window_locked(const Profile& snapshot, const analysis::WindowStore::Change& change) {
    ContinuousProfile info = current_locked(false);
    info.windows.clear();
    try {
      std::vector<io::ContinuousFileWriter::Row> rows;
      std::vector<std::uint64_t> removed = change.removed;
      if (!writer || !file_has_scopes) {
        if (writer) writer->close();
        writer.reset();
        Profile base = snapshot;
        base.continuous = info;
        base.save(options.output_path);
        writer = std::make_unique<io::ContinuousFileWriter>(options.output_path);
        removed.clear();
        for (std::size_t i = 0; i < store.windows().size(); ++i) rows.push_back({store.ids()[i], &store.windows()[i]});
        file_has_scopes = true;
      } else {
        for (const std::size_t i : change.written) rows.push_back({store.ids()[i], &store.windows()[i]});
      }
      writer->update(removed, rows, info);
    } catch (const std::exception& e) {
      // The run goes on; the next window writes the file anew, and stop() writes everything.
      if (!write_failed)
        diagnostics.push_back(Diagnostic{DiagnosticKind::MetricsIncomplete, Severity::Warning, kNone, kNone, 0,
                                         std::string("continuous profiling: a window could not be written to ") +
                                             options.output_path + ": " + e.what()});
      write_failed = true;
      writer.reset();
    }
  }

  bool poll_locked() {
    if (!running) return false;
    const std::uint64_t now = options.clock();
    const auto interval = static_cast<std::uint64_t>(options.interval.count());
    const std::uint64_t elapsed = now - std::min(now, window_start_clock);
    std::uint64_t steps = last_step_count;
    if (!step_scope.empty()) steps = profiler->call_count(step_scope);
    const bool step_ended = steps != last_step_count;
    last_step_count = steps;
    if (elapsed < interval) return false;
    const auto wait = static_cast<std::uint64_t>(static_cast<double>(interval) * options.max_step_wait);
    if (!step_scope.empty() && !step_ended && elapsed < interval + wait) return false;
    close_window_locked(now, !step_scope.empty() && step_ended);
    return true;
  }

  void run_thread() {
    // Windows, names and files are nnprof's memory, never the program's heap.
    detail::InternalAllocations internal;
    pthread_setname_np(pthread_self(), "nnprof-windows");
    const auto period = poll_period(options.interval);
    std::unique_lock lock(mu);
    while (!stopping) {
      wake.wait_for(lock, period);
      if (stopping) break;
      try {
        poll_locked();
      } catch (const std::exception& e) {
        diagnostics.push_back(Diagnostic{DiagnosticKind::MetricsIncomplete, Severity::Warning, kNone, kNone, 0,
                                         std::string("continuous profiling: a window could not be closed: ") + e.what()});
      }
    }
  }
};

ContinuousProfiler::ContinuousProfiler(const ContinuousOptions& options)
    : impl_(std::make_unique<Impl>(global_profiler(), options)) {}
ContinuousProfiler::ContinuousProfiler(Profiler& profiler, const ContinuousOptions& options)
    : impl_(std::make_unique<Impl>(profiler, options)) {}
ContinuousProfiler::ContinuousProfiler(ContinuousProfiler&&) noexcept = default;
ContinuousProfiler& ContinuousProfiler::operator=(ContinuousProfiler&&) noexcept = default;

ContinuousProfiler::~ContinuousProfiler() {
  if (!impl_) return;
  if (impl_->in_forked_child()) {
    // The parent's thread and state are let go untouched: joining would wait for ever, and a
    // mutex the thread held at the fork would never be released here. Nor is the thread
    // detached: it does not exist in this process (clang's TSan stops on it), and the state
    // that holds its handle is never destroyed.
    (void)impl_.release();
    return;
  }
  forget_running(impl_.get());
  try {
    if (impl_->running) (void)stop();
  } catch (...) {
  }
}

const ContinuousOptions& ContinuousProfiler::options() const noexcept { return impl_->options; }

void ContinuousProfiler::start() {
  detail::InternalAllocations internal;
  Impl& m = *impl_;
  m.refuse_in_forked_child("start");
  std::unique_lock lock(m.mu);
  if (m.running) throw Error("this ContinuousProfiler is already running: stop() it before starting it again");
  m.owner_pid.store(getpid(), std::memory_order_relaxed);
  m.start_collectors();
  m.clock_origin = m.options.clock();
  m.window_start_clock = m.clock_origin;
  Profile first = m.profiler->statistics_snapshot();
  m.session_offset = first.meta.duration_ns;
  m.baseline = analysis::window_baseline(first);
  m.step_scope = m.options.step_scope.empty() ? analysis::default_step_scope(first) : m.options.step_scope;
  m.last_step_count = m.step_scope.empty() ? 0 : m.profiler->call_count(m.step_scope);
  if (first.cpu.sampled && !first.cpu_samples.empty())
    detail::CpuSampler::instance().discard_samples(first.cpu_samples.size());
  m.running = true;
  if (!m.options.output_path.empty()) {
    // The file a crash leaves: the run so far and an empty window list, which the writer fills.
    first.continuous = m.current_locked(false);
    first.save(m.options.output_path);
    m.writer = std::make_unique<io::ContinuousFileWriter>(m.options.output_path);
  }
  if (m.options.background) {
    m.stopping = false;
    m.thread = std::thread([&m] { m.run_thread(); });
  }
  lock.unlock();
  std::lock_guard running_lock(g_running_mu);
  running_profilers().push_back(RunningContinuous{m.profiler, &m, [](const void* impl) {
    const Impl& r = *static_cast<const Impl*>(impl);
    std::lock_guard lock(r.mu);
    return r.current_locked(false);
  }});
}

bool ContinuousProfiler::poll() {
  detail::InternalAllocations internal;
  impl_->refuse_in_forked_child("poll");
  std::lock_guard lock(impl_->mu);
  return impl_->poll_locked();
}

Profile ContinuousProfiler::stop() {
  detail::InternalAllocations internal;
  Impl& m = *impl_;
  m.refuse_in_forked_child("stop");
  forget_running(&m);  // before m.mu: a live server may be reading it under the registry's lock
  {
    std::lock_guard lock(m.mu);
    if (!m.running) throw Error("this ContinuousProfiler is not running: start() it first");
    m.stopping = true;
  }
  m.wake.notify_all();
  if (m.thread.joinable()) m.thread.join();
  std::unique_lock lock(m.mu);
  const std::uint64_t now = m.options.clock();
  m.running = false;  // the last window goes to the file with the whole profile below
  m.owner_pid.store(0, std::memory_order_relaxed);
  // The collectors first (the monitor takes a last sample, so the last window has its energy);
  // what they collected stays in the profiler's snapshots.
  if (m.sampler) m.sampler->stop();
  if (m.monitor) m.monitor->stop();
  if (m.tracking) m.tracking->stop();
  if (now > m.window_start_clock) m.close_window_locked(now, false);
  m.analyse_locked();
  // The full snapshot: the spans the profiler's cap kept (a flight recorder's are the latest).
  Profile profile = m.profiler->snapshot();
  profile.continuous = m.current_locked(true);
  profile.diagnostics.insert(profile.diagnostics.end(), m.diagnostics.begin(), m.diagnostics.end());
  if (m.writer) {
    try {
      m.writer->close();
    } catch (const std::exception&) {
      // Profile::save below replaces the file whatever state the log was left in.
    }
    m.writer.reset();
  }
  if (!m.options.output_path.empty()) profile.save(m.options.output_path);
  m.sampler.reset();
  m.monitor.reset();
  m.tracking.reset();
  return profile;
}

ContinuousProfile ContinuousProfiler::current() const {
  detail::InternalAllocations internal;
  std::lock_guard lock(impl_->mu);
  return impl_->current_locked(false);
}

std::size_t ContinuousProfiler::state_bytes() const {
  std::lock_guard lock(impl_->mu);
  const Impl& m = *impl_;
  std::size_t bytes = sizeof(Impl) + m.store.bytes() + m.baseline.bytes();
  bytes += (m.anomalies.capacity()) * sizeof(Anomaly) + m.trends.capacity() * sizeof(Trend);
  for (const Anomaly& a : m.anomalies) bytes += a.description.capacity() + a.metric.capacity();
  return bytes;
}

ContinuousProfilerBuilder& ContinuousProfilerBuilder::sampling_interval(std::chrono::nanoseconds interval) {
  options_.interval = interval;
  return *this;
}
ContinuousProfilerBuilder& ContinuousProfilerBuilder::metrics(std::vector<std::string> names) {
  options_.metrics = std::move(names);
  return *this;
}
ContinuousProfilerBuilder& ContinuousProfilerBuilder::step_scope(std::string name) {
  options_.step_scope = std::move(name);
  return *this;
}
ContinuousProfilerBuilder& ContinuousProfilerBuilder::output(std::string path) {
  options_.output_path = std::move(path);
  return *this;
}
ContinuousProfilerBuilder& ContinuousProfilerBuilder::rollup(const RollupPolicy& policy) {
  options_.rollup = policy;
  return *this;
}
ContinuousProfilerBuilder& ContinuousProfilerBuilder::clock(ContinuousClock clock) {
  options_.clock = std::move(clock);
  options_.background = false;
  return *this;
}
ContinuousProfiler ContinuousProfilerBuilder::build() const { return ContinuousProfiler(options_); }

std::vector<WindowSeries> window_series(const ContinuousProfile& continuous) {
  return analysis::continuous_series(continuous);
}

PerformanceTrends analyze_performance_trends(const Profile& profile, const TrendOptions& options) {
  if (!profile.continuous.enabled) return {};
  return analysis::continuous_trends(profile.continuous, options);
}

namespace detail {
std::optional<ContinuousProfile> running_continuous_profile(const Profiler& profiler) {
  InternalAllocations internal;
  std::lock_guard lock(g_running_mu);
  for (const RunningContinuous& r : running_profilers())
    if (r.profiler == &profiler) return r.current(r.impl);
  return std::nullopt;
}
}  // namespace detail

}  // namespace nnprof
