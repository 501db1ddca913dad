// The C++ classes under the Python seeds' APIs (nnprof.CUDATimer, MemoryTracker,
// MetricsCollector, Reporter, StreamProfiler, compare_runs, PerformanceProfiler). The names
// start with an underscore: python/nnprof/ gives them the seeds' shapes, and only those are
// public. Long native work (joining a sampler, a leak scan, a snapshot, a report) runs
// without the GIL.
#include <malloc.h>

#include <nnprof/nnprof.hpp>

#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include <pybind11/stl.h>

#include "bindings.hpp"

namespace py = pybind11;

namespace nnprof::python {

namespace {

using Clock = std::chrono::steady_clock;

CUstream_st* as_stream(std::uintptr_t stream) { return reinterpret_cast<CUstream_st*>(stream); }

py::dict timing_dict(const CudaTiming& t) {
  py::dict d;
  d["name"] = t.name;
  d["count"] = t.count;
  d["mean_ms"] = t.mean_ms;
  d["std_ms"] = t.std_ms;
  d["min_ms"] = t.min_ms;
  d["max_ms"] = t.max_ms;
  d["total_ms"] = t.total_ms;
  return d;
}

// ---------------------------------------------------------------------------------------------
// The process's allocator, read where heap hooks are not loaded (a Python process started
// without LD_PRELOAD): glibc's own statistics, which cover every malloc of the process,
// torch's CPU allocator and NumPy included, but not pymalloc's small-object arenas (mmap'd
// directly; they are in the RSS).

struct AllocatorReading {
  double time_s = 0.0;           // since the sampler started
  std::uint64_t allocated = 0;   // bytes in blocks handed out by malloc (in use)
  std::uint64_t reserved = 0;    // bytes malloc holds from the system (arenas + mmap'd blocks)
  std::uint64_t rss = 0;         // resident set size
};

AllocatorReading read_allocator() {
  const struct mallinfo2 info = mallinfo2();
  AllocatorReading r;
  r.allocated = info.uordblks + info.hblkhd;
  r.reserved = info.arena + info.hblkhd;
  r.rss = get_current_memory();
  return r;
}

// Reads the allocator every `interval` on a thread of its own until stopped. The thread is
// detached and shares its state, so that an interpreter exiting without stopping it neither
// blocks nor terminates the process.
class AllocatorSampler {
 public:
  explicit AllocatorSampler(double interval_ms)
      : interval_(std::chrono::microseconds(static_cast<std::int64_t>(std::max(1.0, interval_ms * 1000.0)))) {}
  ~AllocatorSampler() { stop(); }
  AllocatorSampler(const AllocatorSampler&) = delete;
  AllocatorSampler& operator=(const AllocatorSampler&) = delete;

  void start() {
    stop();
    state_ = std::make_shared<State>();
    state_->start = Clock::now();
    state_->add(read_allocator());
    std::thread([state = state_, interval = interval_] {
      std::unique_lock lock(state->mu);
      while (!state->stopping) {
        if (state->cv.wait_for(lock, interval, [&] { return state->stopping; })) break;
        lock.unlock();
        const AllocatorReading r = read_allocator();
        lock.lock();
        state->add(r);
      }
      state->finished = true;
      state->cv.notify_all();
    }).detach();
  }

  // Takes a last reading, so that the figures include the end of the tracked block.
  void stop() {
    if (!state_) return;
    const AllocatorReading last = read_allocator();
    std::unique_lock lock(state_->mu);
    if (!state_->stopping) {
      state_->add(last);
      state_->stopping = true;
      state_->cv.notify_all();
      state_->cv.wait(lock, [&] { return state_->finished; });
    }
  }

  [[nodiscard]] bool running() const {
    if (!state_) return false;
    std::lock_guard lock(state_->mu);
    return !state_->stopping;
  }

  // Every reading so far (a running sampler gets one more, now).
  [[nodiscard]] std::vector<AllocatorReading> readings() const {
    if (!state_) return {};
    const bool live = running();
    const AllocatorReading now = read_allocator();
    std::lock_guard lock(state_->mu);
    if (live) state_->add(now);
    return state_->readings;
  }

 private:
  struct State {
    std::mutex mu;
    std::condition_variable cv;
    Clock::time_point start;
    bool stopping = false;
    bool finished = false;
    std::vector<AllocatorReading> readings;
    void add(AllocatorReading r) {
      r.time_s = std::chrono::duration<double>(Clock::now() - start).count();
      readings.push_back(r);
    }
  };
  std::chrono::microseconds interval_;
  std::shared_ptr<State> state_;
};

// ---------------------------------------------------------------------------------------------
// GPU tracing (CUPTI) into a profiler of its own, for the stream and device-memory views.

class GpuTrace {
 public:
  explicit GpuTrace(bool memory) {
    CudaProfilerOptions options;
    options.memory = memory;
    cuda_ = std::make_unique<CudaProfiler>(profiler_, options);
  }
  [[nodiscard]] bool tracing() const { return cuda_->status().tracing(); }
  [[nodiscard]] std::string status() const { return cuda_->status().message; }
  void stop() {
    cuda_->stop();
    profile_ = profiler_.snapshot();
  }
  [[nodiscard]] const Profile& profile() {
    if (!profile_) profile_ = profiler_.snapshot();
    return *profile_;
  }

 private:
  Profiler profiler_;
  std::unique_ptr<CudaProfiler> cuda_;
  std::optional<Profile> profile_;
};

py::dict stream_report_dict(const StreamReport& report) {
  py::list streams;
  for (const StreamStats& s : report.streams) {
    py::dict d;
    d["device"] = s.device;
    d["stream_id"] = s.stream_id;
    d["ops"] = s.ops;
    d["kernels"] = s.kernels;
    d["busy_ns"] = s.busy_ns;
    d["idle_ns"] = s.idle_ns;
    d["idle_gaps"] = s.idle_gaps;
    d["longest_gap_ns"] = s.longest_gap_ns;
    d["efficiency"] = s.efficiency;
    streams.append(d);
  }
  py::list devices;
  for (const DeviceStats& s : report.devices) {
    py::dict d;
    d["device"] = s.device;
    d["name"] = s.name;
    d["kernels"] = s.kernels;
    d["busy_ns"] = s.busy_ns;
    d["kernel_busy_fraction"] = s.kernel_busy_fraction;
    d["overlap_ns"] = s.overlap_ns;
    d["gpu_utilization_mean"] = s.nvml_gpu_utilization_mean >= 0 ? py::object(py::float_(s.nvml_gpu_utilization_mean)) : py::none();
    devices.append(d);
  }
  py::dict d;
  d["streams"] = streams;
  d["devices"] = devices;
  return d;
}

py::dict gpu_memory_dict(const GpuMemoryReport& report) {
  py::list devices;
  for (const GpuDeviceMemory& m : report.devices) {
    py::dict d;
    d["device"] = m.device;
    d["peak_bytes"] = m.peak_bytes;
    d["live_bytes"] = m.live_bytes;
    d["alloc_count"] = m.alloc_count;
    d["free_count"] = m.free_count;
    d["nvml_used_max"] = m.nvml_used_max;
    devices.append(d);
  }
  py::list timeline;
  for (const GpuMemoryPoint& p : report.timeline)
    timeline.append(py::make_tuple(p.time_ns, p.device, p.allocated_bytes));
  py::dict d;
  d["devices"] = devices;
  d["timeline"] = timeline;
  return d;
}

// ---------------------------------------------------------------------------------------------
// Heap tracking with the allocation hooks (a process started under LD_PRELOAD of
// libnnprof_memory.so, or linked with it).

py::dict memory_report_dict(const MemoryReport& report) {
  py::dict d;
  d["source"] = report.source;
  d["peak_bytes"] = report.peak_bytes;
  d["num_allocations"] = report.num_allocations;
  d["num_frees"] = report.num_frees;
  d["largest_allocation_bytes"] = report.largest_allocation_bytes;
  d["allocated_bytes"] = report.allocated_bytes;
  d["current_bytes"] = report.current_bytes;
  d["leaked_bytes"] = report.leaked_bytes;
  const HeapSummary& heap = report.profile.heap;
  d["rss_initial_bytes"] = heap.rss_initial_bytes;
  d["rss_peak_bytes"] = heap.rss_peak_bytes;
  d["rss_final_bytes"] = heap.rss_final_bytes;
  py::list timeline;
  const std::uint64_t t0 = report.profile.heap_samples.empty() ? 0 : report.profile.heap_samples.front().time_ns;
  for (const HeapSample& s : report.profile.heap_samples)
    timeline.append(py::make_tuple(static_cast<double>(s.time_ns - t0) / 1e9, s.heap_bytes, s.rss_bytes));
  d["timeline"] = timeline;
  return d;
}

// ---------------------------------------------------------------------------------------------
// A profiler with its metrics: the MetricsCollector's, and the runs compare_runs compares.

py::dict summary_dict(const MetricSummary& s) {
  py::dict d;
  d["count"] = s.count;
  d["sum"] = s.sum;
  d["min"] = s.min;
  d["max"] = s.max;
  d["mean"] = s.mean;
  d["std"] = s.stddev;
  d["p50"] = s.p50;
  d["p90"] = s.p90;
  d["p95"] = s.p95;
  d["p99"] = s.p99;
  d["last"] = s.last;
  return d;
}

const char* kind_name(MetricKind kind) {
  switch (kind) {
    case MetricKind::Counter: return "counter";
    case MetricKind::Gauge: return "gauge";
    case MetricKind::Histogram: return "histogram";
  }
  return "histogram";
}

class MetricsSession {
 public:
  Profiler& profiler() { return profiler_; }
  [[nodiscard]] Profile snapshot() const { return profiler_.snapshot(); }

 private:
  Profiler profiler_;
};

// MetricTimer can be neither copied nor moved: it lives on the heap, created in place.
class MeasureGuard {
 public:
  MeasureGuard(Metrics metrics, const std::string& name) : timer_(new MetricTimer(metrics.measure_time(name))) {}
  std::uint64_t stop() { return timer_ ? timer_->stop() : 0; }

 private:
  std::unique_ptr<MetricTimer> timer_;
};

py::dict scope_dict(const Profile& profile, const ScopeStats& s) {
  py::dict d;
  d["name"] = profile.str(s.name);
  d["count"] = s.time.count;
  d["total_ns"] = s.total_ns;
  d["self_ns"] = s.self_ns;
  d["mean_ns"] = s.time.mean_ns;
  d["std_ns"] = s.time.stddev_ns;
  d["min_ns"] = s.time.min_ns;
  d["max_ns"] = s.time.max_ns;
  d["items"] = s.items;
  d["flops"] = s.flops;
  return d;
}

py::dict bottleneck_dict(const Bottleneck& b) {
  py::dict d;
  d["type"] = to_string(b.type);
  d["severity"] = to_string(b.severity);
  d["name"] = b.name;
  d["value"] = b.value;
  d["threshold"] = b.threshold;
  d["description"] = b.description;
  d["suggestion"] = b.suggestion;
  return d;
}

py::dict comparison_dict(const Comparison& c) {
  py::dict d;
  d["verdict"] = to_string(c.verdict);
  d["runtime_basis"] = c.runtime_basis;
  d["instrumented_a_ns"] = c.a.instrumented_ns;
  d["instrumented_b_ns"] = c.b.instrumented_ns;
  d["runtime_change"] = c.runtime_change;
  py::dict scopes;
  for (const ScopeChange& s : c.scopes) {
    py::dict one;
    one["ratio"] = s.ratio;
    one["verdict"] = to_string(s.verdict);
    one["p_value"] = s.p_value;
    one["mean_a_ns"] = s.a.mean_ns;
    one["mean_b_ns"] = s.b.mean_ns;
    one["calls_a"] = s.a.calls;
    one["calls_b"] = s.b.calls;
    one["note"] = s.note;
    scopes[py::str(s.name)] = one;
  }
  d["scopes"] = scopes;
  py::list notes;
  for (const std::string& n : c.notes) notes.append(n);
  d["notes"] = notes;
  return d;
}

// ---------------------------------------------------------------------------------------------
// Regions (Profiler::profile) for the PerformanceProfiler.

py::dict region_dict(const RegionMetrics& m) {
  py::dict d;
  d["name"] = m.name;
  d["completed"] = m.completed;
  d["wall_ns"] = m.timing.wall_ns;
  d["cpu_ns"] = m.timing.cpu_ns;
  d["user_ns"] = m.timing.user_ns;
  d["system_ns"] = m.timing.system_ns;
  d["cpu_utilization"] = m.timing.cpu_utilization;
  d["cpu_utilization_of_machine"] = m.timing.cpu_utilization_of_machine;
  d["rss_initial_bytes"] = m.memory.rss_initial_bytes;
  d["rss_peak_bytes"] = m.memory.rss_peak_bytes;
  d["rss_final_bytes"] = m.memory.rss_final_bytes;
  d["rss_peak_exact"] = m.memory.rss_peak_exact;
  d["flops"] = m.compute.flops;
  d["flops_per_second"] = m.compute.flops_per_second;
  d["summary"] = m.summary();
  return d;
}

// A marker thrown only to end a region the way an exception in C++ ends it.
struct EndedByPythonException {};

// One region being measured, owned by the Python block that opened it (regions of several
// threads, or nested ones, each end their own).
class OpenRegion {
 public:
  OpenRegion(Profiler& profiler, const std::string& name) : region_(std::make_unique<ProfiledRegion>(profiler, name)) {}

  // Ends the region. One left by a Python exception is ended while a C++ exception is in
  // flight, so that its metrics say completed = false as a C++ region's do.
  void end(bool completed) {
    if (!region_) throw Error("PerformanceProfiler: this region has ended already");
    std::unique_ptr<ProfiledRegion> region = std::move(region_);
    if (completed) {
      region->stop();
      return;
    }
    try {
      const std::unique_ptr<ProfiledRegion> ending = std::move(region);
      throw EndedByPythonException{};
    } catch (const EndedByPythonException&) {
    }
  }

 private:
  std::unique_ptr<ProfiledRegion> region_;
};

// The regions of PerformanceProfiler, on an nnprof.Profiler of its own (created in Python, so
// that nnprof.torch.capture_operators can record its operators into the same profiler).
class RegionProfiler {
 public:
  explicit RegionProfiler(Profiler& profiler) : profiler_(&profiler) {}
  Profiler& profiler() { return *profiler_; }

 private:
  Profiler* profiler_;
};

}  // namespace

void bind_seed_apis(py::module_& m) {
  py::class_<CudaTimer>(m, "_CudaTimer")
      .def(py::init([](bool synchronize, std::uint32_t warmup, std::uint32_t repeat, int device) {
             CudaTimerOptions options;
             options.synchronize = synchronize;
             options.warmup = warmup;
             options.repeat = repeat;
             options.device = device;
             return std::make_unique<CudaTimer>(options);
           }),
           py::arg("synchronize"), py::arg("warmup"), py::arg("repeat"), py::arg("device"))
      .def("start", [](CudaTimer& t, const std::string& name, std::uintptr_t stream) { t.start(name, as_stream(stream)); })
      .def("stop", [](CudaTimer& t, const std::string& name, std::uintptr_t stream) { t.stop(name, as_stream(stream)); })
      .def("measure",
           [](CudaTimer& t, const std::string& name, const py::function& fn, std::uintptr_t stream) {
             return timing_dict(t.measure(name, [&] { fn(); }, as_stream(stream)));
           })
      .def("result", [](CudaTimer& t, const std::string& name) { return timing_dict(t.result(name)); })
      .def("results", [](CudaTimer& t) {
        py::list all;
        for (const CudaTiming& timing : t.results()) all.append(timing_dict(timing));
        return all;
      });

  m.def("_gpu_available", [] {
    GpuStatus status;
    {
      py::gil_scoped_release unlocked;
      status = gpu_available();
    }
    return py::make_tuple(status.tracing(), status.message);
  });

  py::class_<GpuTrace>(m, "_GpuTrace")
      .def(py::init<bool>(), py::arg("memory"))
      .def_property_readonly("tracing", &GpuTrace::tracing)
      .def_property_readonly("status", &GpuTrace::status)
      .def("stop", &GpuTrace::stop, py::call_guard<py::gil_scoped_release>())
      .def("stream_report", [](GpuTrace& g) {
        StreamReport report;
        {
          py::gil_scoped_release unlocked;
          report = stream_report(g.profile());
        }
        return stream_report_dict(report);
      })
      .def("memory_report", [](GpuTrace& g) {
        GpuMemoryReport report;
        {
          py::gil_scoped_release unlocked;
          report = gpu_memory_report(g.profile());
        }
        return gpu_memory_dict(report);
      });

  py::class_<AllocatorSampler>(m, "_AllocatorSampler")
      .def(py::init<double>(), py::arg("interval_ms"))
      .def("start", &AllocatorSampler::start)
      .def("stop", &AllocatorSampler::stop, py::call_guard<py::gil_scoped_release>())
      .def_property_readonly("running", &AllocatorSampler::running)
      .def("readings", [](const AllocatorSampler& s) {
        py::list out;
        for (const AllocatorReading& r : s.readings()) out.append(py::make_tuple(r.time_s, r.allocated, r.reserved, r.rss));
        return out;
      });
  m.def("_read_allocator", [] {
    const AllocatorReading r = read_allocator();
    return py::make_tuple(r.allocated, r.reserved, r.rss);
  });

  m.def("_heap_hooks_available", [] {
    std::string why;
    const bool ok = heap_hooks_available(&why);
    return py::make_tuple(ok, why);
  });
  py::class_<MemoryProfiler>(m, "_HeapProfiler")
      .def(py::init([](double interval_ms, bool find_leaks) {
             return std::make_unique<MemoryProfiler>(
                 MemoryProfilerBuilder()
                     .find_leaks(find_leaks)
                     .timeline_interval(std::chrono::milliseconds(static_cast<std::int64_t>(std::max(1.0, interval_ms))))
                     .build());
           }),
           py::arg("interval_ms"), py::arg("find_leaks"))
      .def("start", &MemoryProfiler::start)
      .def_property_readonly("running", &MemoryProfiler::running)
      .def("stop", [](MemoryProfiler& p) {
        std::optional<MemoryReport> report;
        {
          py::gil_scoped_release unlocked;
          report = p.stop();
        }
        return memory_report_dict(*report);
      });

  py::class_<MeasureGuard>(m, "_MeasureGuard").def("stop", &MeasureGuard::stop);
  py::class_<MetricsSession>(m, "_MetricsSession")
      .def(py::init<>())
      .def("record", [](MetricsSession& s, const std::string& name, double value) { s.profiler().metrics().record(name, value); })
      .def("increment", [](MetricsSession& s, const std::string& name, double delta) { s.profiler().metrics().increment(name, delta); })
      .def("add_items", [](MetricsSession& s, const std::string& name, std::uint64_t n) { s.profiler().add_items(name, n); })
      .def("measure_time", [](MetricsSession& s, const std::string& name) { return MeasureGuard(s.profiler().metrics(), name); })
      .def("summary", [](MetricsSession& s, const std::string& name) -> py::object {
        const auto summary = s.profiler().metrics().summary(name);
        return summary ? py::object(summary_dict(*summary)) : py::none();
      })
      .def("metrics", [](MetricsSession& s) {
        Profile profile;
        {
          py::gil_scoped_release unlocked;
          profile = s.snapshot();
        }
        py::list out;
        for (const MetricSeries& series : profile.metrics) {
          py::dict d = summary_dict(series.summary);
          d["name"] = profile.str(series.name);
          d["kind"] = kind_name(series.kind);
          d["unit"] = series.unit;
          out.append(d);
        }
        return out;
      })
      .def("scopes", [](MetricsSession& s) {
        Profile profile;
        {
          py::gil_scoped_release unlocked;
          profile = s.snapshot();
        }
        py::list out;
        for (const ScopeStats& scope : profile.scopes) out.append(scope_dict(profile, scope));
        return out;
      })
      .def("report_text", [](MetricsSession& s) {
        py::gil_scoped_release unlocked;
        return Report(s.snapshot()).text();
      })
      .def("analyze_bottlenecks", [](MetricsSession& s) {
        std::vector<Bottleneck> found;
        {
          py::gil_scoped_release unlocked;
          found = s.profiler().analyze_bottlenecks();
        }
        py::list out;
        for (const Bottleneck& b : found) out.append(bottleneck_dict(b));
        return out;
      })
      .def("save", [](MetricsSession& s, const std::string& path) { s.profiler().save(path); },
           py::call_guard<py::gil_scoped_release>())
      .def("save_metrics", [](MetricsSession& s, const std::string& path) { s.profiler().metrics().save_metrics(path); },
           py::call_guard<py::gil_scoped_release>())
      .def("save_metrics_summary",
           [](MetricsSession& s, const std::string& path) { s.profiler().metrics().save_metrics_summary(path); },
           py::call_guard<py::gil_scoped_release>());
  m.def("_compare_sessions", [](MetricsSession& a, MetricsSession& b) {
    Comparison c;
    {
      py::gil_scoped_release unlocked;
      c = compare(a.snapshot(), b.snapshot());
    }
    return comparison_dict(c);
  });

  py::class_<OpenRegion>(m, "_OpenRegion").def("end", &OpenRegion::end, py::arg("completed"));
  py::class_<RegionProfiler>(m, "_RegionProfiler")
      .def(py::init<Profiler&>(), py::arg("profiler"), py::keep_alive<1, 2>())
      .def("begin", [](RegionProfiler& r, const std::string& name) { return std::make_unique<OpenRegion>(r.profiler(), name); },
           py::keep_alive<0, 1>())
      .def("get_metrics", [](RegionProfiler& r, const std::optional<std::string>& name) -> py::object {
        const auto metrics = name ? r.profiler().get_metrics(*name) : r.profiler().get_metrics();
        return metrics ? py::object(region_dict(*metrics)) : py::none();
      }, py::arg("name") = py::none())
      .def("get_timing_breakdown", [](RegionProfiler& r) {
        py::list out;
        for (const RegionShare& s : r.profiler().get_timing_breakdown())
          out.append(py::make_tuple(s.name, s.count, s.wall_ns, s.share));
        return out;
      })
      .def("has_results", [](RegionProfiler& r) { return r.profiler().has_results(); });
  // PerformanceProfiler(enable_line_profiling=True): CPU samples of one region, with their
  // Python frames, into a profiler of their own (SamplingProfiler), as a line-level profile.
  py::class_<SamplingProfiler>(m, "_LineSampler")
      .def(py::init([](double hz) {
             CpuProfilerOptions options;
             options.hz = hz;
             return std::make_unique<SamplingProfiler>(CpuProfilerBuilder().options(options).build());
           }),
           py::arg("hz"))
      .def("start", &SamplingProfiler::start)
      .def("running", &SamplingProfiler::running)
      .def("stop", [](SamplingProfiler& sampler) {
        std::vector<PythonLineStats> lines;
        std::uint64_t samples = 0;
        {
          py::gil_scoped_release release;
          const CpuReport report = sampler.stop();
          lines = python_line_stats(report.profile);
          samples = report.samples;
        }
        return py::make_tuple(samples, python_line_list(lines));
      });
  m.def("_current_rss", [] { return get_current_memory(); });
}

}  // namespace nnprof::python
