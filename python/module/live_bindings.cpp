// Live and long-running profiling from Python: nnprof.LiveServer (the live page, /metrics for
// Prometheus, /debug/pprof for Pyroscope/Parca, nnprof/live_server.hpp) over a running profiler
// or a saved profile, nnprof.ContinuousProfiler (per-interval windows in bounded memory,
// nnprof/continuous.hpp), Profile.continuous and nnprof.analyze_performance_trends. Times in
// the dicts are nanoseconds, as everywhere in the module; the options take seconds.
#include <chrono>
#include <cmath>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <pybind11/stl.h>

#include "bindings.hpp"
#include "nnprof/continuous.hpp"
#include "nnprof/error.hpp"
#include "nnprof/live_server.hpp"
#include "nnprof/profile.hpp"
#include "nnprof/profiler.hpp"

namespace py = pybind11;

namespace nnprof::python {
namespace {

using ProfilePtr = std::shared_ptr<Profile>;

/// NaN (not measured) as None.
py::object measured(double v) { return std::isnan(v) ? py::object(py::none()) : py::object(py::float_(v)); }

template <class Seconds>
Seconds positive_seconds(double seconds, const char* what) {
  if (!(seconds > 0.0) || !std::isfinite(seconds))
    throw py::value_error(std::string("nnprof: ") + what + " must be a positive number of seconds");
  return std::chrono::duration_cast<Seconds>(std::chrono::duration<double>(seconds));
}

py::dict window_dict(const ProfileWindow& w) {
  py::dict d;
  d["start_ns"] = w.start_ns;
  d["end_ns"] = w.end_ns;
  d["raw_windows"] = w.raw_windows;
  d["step_aligned"] = w.step_aligned;
  d["steps"] = w.steps;
  d["step_ns"] = w.step_ns;
  d["items"] = w.items;
  d["scope_calls"] = w.scope_calls;
  d["cpu_samples"] = w.cpu_samples;
  d["cpu_sample_ns"] = w.cpu_sample_ns;
  py::list scopes;
  for (const WindowScope& s : w.scopes) {
    py::dict x;
    x["name"] = s.name;
    x["calls"] = s.calls;
    x["total_ns"] = s.total_ns;
    x["self_ns"] = s.self_ns;
    x["items"] = s.items;
    scopes.append(std::move(x));
  }
  d["scopes"] = std::move(scopes);
  py::list functions;
  for (const WindowFunction& f : w.functions) {
    py::dict x;
    x["name"] = f.name;
    x["samples"] = f.samples;
    x["weight_ns"] = f.weight_ns;
    functions.append(std::move(x));
  }
  d["functions"] = std::move(functions);
  d["rss_bytes"] = w.rss_bytes;
  d["rss_peak_bytes"] = w.rss_peak_bytes;
  d["heap_live_bytes"] = w.heap_live_bytes;
  d["heap_alloc_bytes"] = w.heap_alloc_bytes;
  d["heap_free_bytes"] = w.heap_free_bytes;
  d["gpu_memory_bytes"] = measured(w.gpu_memory_bytes);
  d["energy_joules"] = measured(w.energy_joules);
  d["cpu_percent"] = measured(w.cpu_percent);
  return d;
}

py::list anomaly_list(const std::vector<Anomaly>& anomalies) {
  py::list out;
  for (const Anomaly& a : anomalies) {
    py::dict x;
    x["kind"] = to_string(a.kind);
    x["metric"] = a.metric;
    x["unit"] = a.unit;
    x["window"] = a.window;
    x["window_start_ns"] = a.window_start_ns;
    x["before"] = a.before;
    x["after"] = a.after;
    x["magnitude"] = a.magnitude;
    x["score"] = a.score;
    x["worse"] = a.worse;
    x["description"] = a.description;
    out.append(std::move(x));
  }
  return out;
}

py::list trend_list(const std::vector<Trend>& trends) {
  py::list out;
  for (const Trend& t : trends) {
    py::dict x;
    x["metric"] = t.metric;
    x["unit"] = t.unit;
    x["slope_per_hour"] = t.slope_per_hour;
    x["relative_slope_per_hour"] = t.relative_slope_per_hour;
    x["low"] = t.low;
    x["high"] = t.high;
    x["significant"] = t.significant;
    x["windows"] = t.windows;
    out.append(std::move(x));
  }
  return out;
}

py::dict continuous_dict(const ContinuousProfile& c) {
  py::dict d;
  d["enabled"] = c.enabled;
  d["interval_ns"] = c.interval_ns;
  d["step_scope"] = c.step_scope;
  d["finished"] = c.finished;
  py::list windows;
  for (const ProfileWindow& w : c.windows) windows.append(window_dict(w));
  d["windows"] = std::move(windows);
  d["anomalies"] = anomaly_list(c.anomalies);
  d["trends"] = trend_list(c.trends);
  return d;
}

py::dict trends_dict(const PerformanceTrends& t) {
  py::dict d;
  py::list series;
  for (const WindowSeries& s : t.series) {
    py::dict x;
    x["metric"] = s.metric;
    x["unit"] = s.unit;
    x["window_start_ns"] = s.window_start_ns;
    py::list values;
    for (const double v : s.values) values.append(measured(v));
    x["values"] = std::move(values);
    x["higher_is_worse"] = s.higher_is_worse;
    series.append(std::move(x));
  }
  d["series"] = std::move(series);
  d["anomalies"] = anomaly_list(t.anomalies);
  d["trends"] = trend_list(t.trends);
  return d;
}

/// The live server and what it serves: the Python objects are kept alive with it.
struct PyLiveServer {
  py::object source;  // the Profiler or Profile served (None: the global profiler)
  std::unique_ptr<LiveServer> server;
};

/// A ContinuousProfiler and the Python Profiler it runs over (kept alive with it).
struct PyContinuous {
  py::object profiler;
  std::unique_ptr<ContinuousProfiler> continuous;
  bool running = false;
  std::shared_ptr<Profile> result;  // what the last stop() returned (the context manager's too)

  void start() {
    {
      py::gil_scoped_release release;
      continuous->start();
    }
    running = true;
  }

  std::shared_ptr<Profile> stop() {
    Profile profile;
    {
      py::gil_scoped_release release;
      profile = continuous->stop();
    }
    running = false;
    result = std::make_shared<Profile>(std::move(profile));
    return result;
  }
};

}  // namespace

void bind_live(py::module_& m) {
  py::class_<PyLiveServer>(m, "LiveServer", R"(The live view of a profiler while it records, or of a saved profile:
a page (hot paths, call tree, memory, system and metric charts, flame graph of the last
window), /metrics in Prometheus' text format, /debug/pprof/profile and /debug/pprof/heap as
Go's net/http/pprof serves them, and /api/v1/... as JSON (docs/LIVE.md). Binds 127.0.0.1 by
default; any other address needs a token. A context manager: `with nnprof.LiveServer(port=0)
as live: print(live.url)`.)")
      .def(py::init([](py::object source, const std::string& address, std::uint16_t port, const std::string& token,
                       bool generate_token, double update_interval, bool real_time_updates, double window,
                       std::size_t max_live_clients, bool announce) {
             LiveServerOptions o;
             o.address = address;
             o.port = port;
             o.token = token;
             o.generate_token = generate_token;
             o.update_interval = positive_seconds<std::chrono::milliseconds>(update_interval, "update_interval");
             o.real_time_updates = real_time_updates;
             o.window = positive_seconds<std::chrono::seconds>(window, "window");
             o.max_live_clients = max_live_clients;
             o.announce = announce;
             auto out = std::make_unique<PyLiveServer>();
             out->source = source;
             if (source.is_none()) {
               out->server = std::make_unique<LiveServer>(global_profiler(), o);
             } else if (py::isinstance<Profile>(source)) {
               const Profile profile = source.cast<const Profile&>();
               out->server = std::make_unique<LiveServer>(profile, o);
             } else if (py::isinstance<Profiler>(source)) {
               out->server = std::make_unique<LiveServer>(source.cast<Profiler&>(), o);
             } else {
               throw py::type_error("nnprof.LiveServer serves an nnprof.Profiler, an nnprof.Profile or, given None, "
                                    "the global profiler");
             }
             return out;
           }),
           py::arg("source") = py::none(), py::kw_only(), py::arg("address") = "127.0.0.1", py::arg("port") = 8080,
           py::arg("token") = "", py::arg("generate_token") = false, py::arg("update_interval") = 1.0,
           py::arg("real_time_updates") = true, py::arg("window") = 10.0, py::arg("max_live_clients") = 64,
           py::arg("announce") = true,
           "Starts serving `source` (a Profiler, a Profile, or None for the global profiler). port=0 picks a free "
           "port. Raises nnprof.Error when the port is taken or the address needs a token.")
      .def_property_readonly("port", [](const PyLiveServer& s) { return s.server->port(); })
      .def_property_readonly("address", [](const PyLiveServer& s) { return s.server->address(); })
      .def_property_readonly("url", [](const PyLiveServer& s) { return s.server->url(); },
                             "The page's URL, with ?token=... when a token is required.")
      .def_property_readonly("token", [](const PyLiveServer& s) { return s.server->token(); })
      .def_property_readonly("live_clients", [](const PyLiveServer& s) { return s.server->live_clients(); })
      .def(
          "wait", [](PyLiveServer& s) { s.server->wait(); }, py::call_guard<py::gil_scoped_release>(),
          "Blocks until stop() is called from another thread.")
      .def(
          "stop", [](PyLiveServer& s) { s.server->stop(); }, py::call_guard<py::gil_scoped_release>(),
          "Stops serving (idempotent).")
      .def("__enter__", [](PyLiveServer& s) -> PyLiveServer& { return s; }, py::return_value_policy::reference)
      .def("__exit__", [](PyLiveServer& s, const py::args&) {
        py::gil_scoped_release release;
        s.server->stop();
      });

  py::class_<PyContinuous>(m, "ContinuousProfiler", R"(Continuous profiling of a long run: windows of `interval` seconds
(closed at the first step end after it when the program marks steps), each with scope
statistics as deltas, CPU samples, heap, RSS, system metrics and energy; older windows rolled
up so that memory stays bounded; with `output`, written to that .nnprof as it goes so that a
crash loses at most one window. stop() returns the profile, whose `continuous` holds the
windows, anomalies and trends (docs/CONTINUOUS.md). A context manager.)")
      .def(py::init([](py::object profiler, double interval, std::vector<std::string> metrics,
                       const std::string& step_scope, const std::string& output, double max_step_wait,
                       double sample_hz, std::uint32_t system_interval_ms, std::size_t analyze_every) {
             ContinuousOptions o;
             o.interval = positive_seconds<std::chrono::nanoseconds>(interval, "interval");
             o.metrics = std::move(metrics);
             o.step_scope = step_scope;
             o.output_path = output;
             o.max_step_wait = max_step_wait;
             o.sample_hz = sample_hz;
             o.system_interval_ms = system_interval_ms;
             o.analyze_every = analyze_every;
             auto out = std::make_unique<PyContinuous>();
             out->profiler = profiler;
             try {
               if (profiler.is_none())
                 out->continuous = std::make_unique<ContinuousProfiler>(o);
               else
                 out->continuous = std::make_unique<ContinuousProfiler>(profiler.cast<Profiler&>(), o);
             } catch (const std::invalid_argument& e) {
               throw py::value_error(e.what());
             }
             return out;
           }),
           py::arg("profiler") = py::none(), py::kw_only(), py::arg("interval") = 60.0,
           py::arg("metrics") = std::vector<std::string>{"cpu", "memory"}, py::arg("step_scope") = "",
           py::arg("output") = "", py::arg("max_step_wait") = 0.5, py::arg("sample_hz") = 19.0,
           py::arg("system_interval_ms") = 1000, py::arg("analyze_every") = 10,
           "metrics: any of \"cpu\", \"memory\", \"gpu\", \"system\". step_scope: the scope whose ends mark steps "
           "(empty: the first scope that reported work items).")
      .def("start", &PyContinuous::start, "Starts the windows (and the collectors the metrics ask for).")
      .def("stop", &PyContinuous::stop,
           "Closes the last window, computes the anomalies and trends, writes the output and returns the profile.")
      .def_property_readonly("profile", [](const PyContinuous& c) { return c.result; },
                             "The profile the last stop() returned (also after a `with` block); None before.")
      .def(
          "poll", [](PyContinuous& c) { return c.continuous->poll(); }, py::call_guard<py::gil_scoped_release>(),
          "Closes the window if it is due (the background thread does this by itself); True when one closed.")
      .def(
          "current",
          [](const PyContinuous& c) {
            ContinuousProfile now;
            {
              py::gil_scoped_release release;
              now = c.continuous->current();
            }
            return continuous_dict(now);
          },
          "The windows, anomalies and trends so far, as Profile.continuous gives them.")
      .def_property_readonly("state_bytes", [](const PyContinuous& c) { return c.continuous->state_bytes(); },
                             "Memory the windows take now (bounded by the rollup policy).")
      .def(
          "__enter__",
          [](PyContinuous& c) -> PyContinuous& {
            c.start();
            return c;
          },
          py::return_value_policy::reference)
      .def("__exit__", [](PyContinuous& c, const py::args&) {
        if (c.running) (void)c.stop();
      });

  auto profile = py::reinterpret_borrow<py::class_<Profile, ProfilePtr>>(m.attr("Profile"));
  profile.def_property_readonly(
      "continuous", [](const Profile& p) { return continuous_dict(p.continuous); },
      "A continuous run's windows, anomalies and trends: enabled, interval_ns, step_scope, finished, windows "
      "[{start_ns, end_ns, steps, step_ns, items, scopes, functions, rss_bytes, heap_*, energy_joules, ...}], "
      "anomalies, trends.");
  m.def(
      "analyze_performance_trends",
      [](const ProfilePtr& p) {
        PerformanceTrends t;
        {
          py::gil_scoped_release release;
          t = analyze_performance_trends(*p);
        }
        return trends_dict(t);
      },
      py::arg("profile"),
      "The per-window series of a continuous profile (step time, throughput, RSS, heap, GPU memory, energy per "
      "step, top functions' shares), their trends and anomalies (level shifts, outliers, growth), each with the "
      "window where it began.");
}

}  // namespace nnprof::python
