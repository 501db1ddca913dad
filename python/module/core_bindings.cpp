// The C++ profiler itself, for Python: Profiler, Profile (snapshots and loaded files) with its
// analyses as plain Python objects, reports, and the CPU sampler.
#include <cstring>
#include <fstream>
#include <memory>
#include <optional>
#include <sstream>
#include <string>
#include <utility>

#include <climits>
#include <cstdlib>

#include <dlfcn.h>

#include <pybind11/stl.h>

#include <nnprof/nnprof.hpp>

#include "bindings.hpp"

namespace py = pybind11;

namespace nnprof::python {
namespace {

// ---- Profile contents as dicts ------------------------------------------------------
// Plain dicts rather than bound structs: a profile's names are string ids into its string
// table, resolved here, and dicts print, compare and serialise (json.dumps) as users expect.

py::dict duration_stats(const DurationStats& t) {
  py::dict d;
  d["calls"] = t.count;
  d["sum_ns"] = t.sum_ns;
  d["min_ns"] = t.min_ns;
  d["max_ns"] = t.max_ns;
  d["mean_ns"] = t.mean_ns;
  d["stddev_ns"] = t.stddev_ns;
  d["p50_ns"] = t.p50_ns;
  d["p95_ns"] = t.p95_ns;
  d["p99_ns"] = t.p99_ns;
  return d;
}

py::dict memory_attribution(const MemoryAttribution& m) {
  py::dict d;
  d["alloc_bytes"] = m.alloc_bytes;
  d["alloc_count"] = m.alloc_count;
  d["free_bytes"] = m.free_bytes;
  d["free_count"] = m.free_count;
  return d;
}

py::dict heap_attribution(const HeapAttribution& h) {
  py::dict d;
  d["alloc_bytes"] = h.alloc_bytes;
  d["alloc_count"] = h.alloc_count;
  d["free_bytes"] = h.free_bytes;
  d["free_count"] = h.free_count;
  d["retained_bytes"] = h.retained_bytes;
  d["retained_blocks"] = h.retained_blocks;
  d["peak_live_bytes"] = h.peak_live_bytes;
  return d;
}

std::string name_of(const Profile& p, StringId id) { return id == kNone ? std::string() : p.str(id); }

py::dict scope_stats(const Profile& p, const ScopeStats& s) {
  py::dict d;
  d["name"] = name_of(p, s.name);
  d["calls"] = s.time.count;
  d["total_ns"] = s.total_ns;
  d["self_ns"] = s.self_ns;
  d["mean_ns"] = s.time.mean_ns;
  d["time"] = duration_stats(s.time);
  d["thread_count"] = s.thread_count;
  d["items"] = s.items;
  d["items_per_second"] = s.items_per_second();
  d["flops"] = s.flops;
  d["bytes"] = s.bytes;
  d["gflops_per_second"] = s.gflops_per_second();
  d["gbytes_per_second"] = s.gbytes_per_second();
  d["arithmetic_intensity"] = s.arithmetic_intensity();
  d["memory"] = memory_attribution(s.memory);
  d["heap"] = heap_attribution(s.heap);
  return d;
}

py::dict call_tree_node(const Profile& p, const CallTreeNode& n) {
  py::dict d;
  d["id"] = n.id;
  d["parent"] = n.parent == kNone ? py::object(py::none()) : py::object(py::int_(n.parent));
  d["name"] = name_of(p, n.name);
  d["path"] = n.id == 0 ? std::string() : p.node_path(n.id);
  d["depth"] = n.depth;
  d["children"] = n.children;
  d["calls"] = n.time.count;
  d["total_ns"] = n.time.sum_ns;
  d["self_ns"] = n.self_ns;
  d["time"] = duration_stats(n.time);
  d["thread_count"] = n.thread_count;
  d["flops"] = n.flops;
  d["bytes"] = n.bytes;
  d["memory"] = memory_attribution(n.memory);
  d["heap"] = heap_attribution(n.heap);
  return d;
}

py::list spans(const Profile& p) {
  py::list out;
  for (const Span& s : p.spans) {
    py::dict d;
    d["thread"] = s.thread;
    d["name"] = name_of(p, s.name);
    d["node"] = s.node;
    d["depth"] = s.depth;
    d["start_ns"] = s.start_ns;
    d["end_ns"] = s.end_ns;
    out.append(std::move(d));
  }
  return out;
}

py::list threads(const Profile& p) {
  py::list out;
  for (const ThreadInfo& t : p.threads) {
    py::dict d;
    d["id"] = t.id;
    d["os_tid"] = t.os_tid;
    d["name"] = t.name;
    d["exited"] = t.exited;
    d["scopes_recorded"] = t.scopes_recorded;
    d["top_level_ns"] = t.top_level_ns;
    // The job's rank number of the thread's process, in a merge of ranks; None otherwise.
    d["rank"] = t.rank < p.ranks.size() ? py::object(py::int_(p.ranks[t.rank].rank)) : py::object(py::none());
    out.append(std::move(d));
  }
  return out;
}

py::dict metadata(const Profile& p) {
  py::dict d;
  d["nnprof_version"] = p.meta.nnprof_version;
  d["hostname"] = p.meta.hostname;
  d["os"] = p.meta.os;
  d["cpu_model"] = p.meta.cpu_model;
  d["logical_cpus"] = p.meta.logical_cpus;
  d["compiler"] = p.meta.compiler;
  d["command_line"] = p.meta.command_line;
  d["pid"] = p.meta.pid;
  d["duration_ns"] = p.meta.duration_ns;
  return d;
}

py::dict completeness(const Completeness& c) {
  py::dict d;
  d["scopes_recorded"] = c.scopes_recorded;
  d["spans_kept"] = c.spans_kept;
  d["spans_dropped"] = c.spans_dropped;
  d["spans_overwritten"] = c.spans_overwritten;
  d["events_dropped"] = c.events_dropped;
  d["spans_enabled"] = c.spans_enabled;
  d["buffer_policy"] = c.buffer_policy;
  d["memory_cap_bytes"] = c.memory_cap_bytes;
  d["overhead_per_scope_ns"] = c.overhead_per_scope_ns;
  d["overhead_total_ns"] = c.overhead_total_ns;
  return d;
}

py::list diagnostics(const Profile& p) {
  py::list out;
  for (const Diagnostic& x : p.diagnostics) {
    py::dict d;
    d["kind"] = to_string(x.kind);
    d["severity"] = to_string(x.severity);
    d["thread"] = x.thread == kNone ? py::object(py::none()) : py::object(py::int_(x.thread));
    d["name"] = name_of(p, x.name);
    d["count"] = x.count;
    d["message"] = x.message;
    out.append(std::move(d));
  }
  return out;
}

py::list memory_counters(const Profile& p) {
  py::list out;
  for (const MemoryCounter& c : p.memory_counters) {
    py::dict d;
    d["name"] = name_of(p, c.name);
    d["current_bytes"] = c.current_bytes;
    d["peak_bytes"] = c.peak_bytes;
    d["alloc_bytes"] = c.alloc_bytes;
    d["freed_bytes"] = c.freed_bytes;
    d["alloc_count"] = c.alloc_count;
    d["free_count"] = c.free_count;
    d["largest_alloc_bytes"] = c.largest_alloc_bytes;
    out.append(std::move(d));
  }
  return out;
}

py::dict heap_summary(const HeapSummary& h) {
  py::dict d;
  d["tracked"] = h.tracked;
  d["source"] = h.source;
  d["alloc_bytes"] = h.alloc_bytes;
  d["alloc_count"] = h.alloc_count;
  d["free_bytes"] = h.free_bytes;
  d["free_count"] = h.free_count;
  d["current_bytes"] = h.current_bytes;
  d["peak_bytes"] = h.peak_bytes;
  d["leaked_bytes"] = h.leaked_bytes;
  d["rss_peak_bytes"] = h.rss_peak_bytes;
  d["largest_alloc_bytes"] = h.largest_alloc_bytes;
  return d;
}

py::dict cpu_summary(const CpuProfileSummary& c) {
  py::dict d;
  d["sampled"] = c.sampled;
  d["mode"] = c.mode;
  d["mechanism"] = c.mechanism;
  d["unwinder"] = c.unwinder;
  d["requested_hz"] = c.requested_hz;
  d["period_ns"] = c.period_ns;
  d["samples"] = c.samples;
  d["samples_dropped"] = c.samples_dropped;
  d["truncated_stacks"] = c.truncated_stacks;
  d["threads_sampled"] = c.threads_sampled;
  return d;
}

py::list function_stats_list(const std::vector<FunctionStats>& functions) {
  py::list out;
  for (const FunctionStats& f : functions) {
    py::dict d;
    d["name"] = f.name;
    d["module"] = f.module;
    d["self_samples"] = f.self_samples;
    d["total_samples"] = f.total_samples;
    d["self_time_ms"] = f.self_time_ms;
    d["total_time_ms"] = f.total_time_ms;
    d["percentage"] = f.percentage;
    d["self_percentage"] = f.self_percentage;
    out.append(std::move(d));
  }
  return out;
}

}  // namespace

py::list python_line_list(const std::vector<PythonLineStats>& lines) {
  py::list out;
  for (const PythonLineStats& l : lines) {
    py::dict d;
    d["function"] = l.function;
    d["file"] = l.file;
    d["line"] = l.line;
    d["self_samples"] = l.self_samples;
    d["total_samples"] = l.total_samples;
    d["self_time_ms"] = l.self_time_ms;
    d["total_time_ms"] = l.total_time_ms;
    d["self_percentage"] = l.self_percentage;
    d["percentage"] = l.percentage;
    out.append(std::move(d));
  }
  return out;
}

namespace {

py::list bottlenecks(const std::vector<Bottleneck>& found) {
  py::list out;
  for (const Bottleneck& b : found) {
    py::dict d;
    d["type"] = to_string(b.type);
    d["severity"] = to_string(b.severity);
    d["name"] = b.name;
    d["value"] = b.value;
    d["threshold"] = b.threshold;
    d["description"] = b.description;
    d["suggestion"] = b.suggestion;
    out.append(std::move(d));
  }
  return out;
}

py::list recommendations(const std::vector<Recommendation>& found) {
  py::list out;
  for (const Recommendation& r : found) {
    py::dict d;
    d["priority"] = r.priority;
    d["title"] = r.title;
    d["scope"] = r.scope;
    d["evidence"] = r.evidence;
    d["steps"] = r.steps;
    d["time_share"] = r.time_share;
    d["part_speedup"] = r.part_speedup;
    d["expected_speedup"] = r.expected_speedup;
    d["max_speedup"] = r.max_speedup;
    out.append(std::move(d));
  }
  return out;
}

py::dict operators(const Profile& p, const OperatorTable& t) {
  py::list groups;
  for (const OperatorGroup& g : t.groups) {
    py::dict d;
    d["name"] = name_of(p, g.name);
    d["input_shapes"] = g.input_shapes;
    d["input_dtypes"] = g.input_dtypes;
    d["scope"] = to_string(g.scope);
    d["calls"] = g.calls;
    d["total_ns"] = g.total_ns;
    d["self_ns"] = g.self_ns;
    d["mean_ns"] = g.mean_ns();
    d["flops"] = g.flops;
    d["flops_calls"] = g.flops_calls;
    d["flops_per_second"] = g.flops_per_second();
    d["bytes"] = g.bytes;
    d["heap_alloc_bytes"] = g.heap_alloc_bytes;
    d["heap_bytes_per_call"] = g.heap_bytes_per_call();
    py::list forward;
    for (const OperatorLink& l : g.forward) {
      py::dict link;
      link["group"] = l.group;
      link["calls"] = l.calls;
      forward.append(std::move(link));
    }
    d["forward"] = std::move(forward);
    d["unlinked_calls"] = g.unlinked_calls;
    groups.append(std::move(d));
  }
  py::dict d;
  d["groups"] = std::move(groups);
  d["calls"] = t.calls;
  d["recorded_calls"] = t.recorded_calls;
  d["self_ns"] = t.self_ns;
  d["operator_ns"] = t.operator_ns;
  d["covered_ns"] = t.covered_ns;
  d["duration_ns"] = t.duration_ns;
  d["fraction_of_run"] = t.fraction_of_run();
  d["heap_tracked"] = t.heap_tracked;
  return d;
}

// ---- thresholds -----------------------------------------------------------------------

/// BottleneckThresholds from keyword arguments named as its fields; a wrong name is a TypeError.
BottleneckThresholds thresholds_from(const py::kwargs& given) {
  BottleneckThresholds t;
  struct Real {
    const char* name;
    double BottleneckThresholds::*field;
  };
  struct Count {
    const char* name;
    std::uint64_t BottleneckThresholds::*field;
  };
  static constexpr Real reals[] = {
      {"slow_operation_share", &BottleneckThresholds::slow_operation_share},
      {"memory_hotspot_share", &BottleneckThresholds::memory_hotspot_share},
      {"memory_leak_share", &BottleneckThresholds::memory_leak_share},
      {"low_throughput_gflops", &BottleneckThresholds::low_throughput_gflops},
      {"roofline_fraction", &BottleneckThresholds::roofline_fraction},
      {"roofline_min_share", &BottleneckThresholds::roofline_min_share},
      {"cpu_hotspot_share", &BottleneckThresholds::cpu_hotspot_share},
      {"scope_hotspot_share", &BottleneckThresholds::scope_hotspot_share},
      {"scope_hotspot_min_share", &BottleneckThresholds::scope_hotspot_min_share},
      {"gpu_idle_share", &BottleneckThresholds::gpu_idle_share},
      {"tiny_kernel_share", &BottleneckThresholds::tiny_kernel_share},
      {"memcpy_share", &BottleneckThresholds::memcpy_share},
      {"low_occupancy", &BottleneckThresholds::low_occupancy},
      {"low_occupancy_min_share", &BottleneckThresholds::low_occupancy_min_share},
      {"gpu_roofline_fraction", &BottleneckThresholds::gpu_roofline_fraction},
  };
  static constexpr Count counts[] = {
      {"high_call_count", &BottleneckThresholds::high_call_count},
      {"cpu_min_samples", &BottleneckThresholds::cpu_min_samples},
      {"gpu_idle_gap_ns", &BottleneckThresholds::gpu_idle_gap_ns},
      {"gpu_launch_bound_kernels", &BottleneckThresholds::gpu_launch_bound_kernels},
      {"tiny_kernel_ns", &BottleneckThresholds::tiny_kernel_ns},
  };
  for (const auto& [key, value] : given) {
    const std::string name = py::cast<std::string>(key);
    bool known = false;
    for (const Real& r : reals)
      if (name == r.name) t.*r.field = py::cast<double>(value), known = true;
    for (const Count& c : counts)
      if (name == c.name) t.*c.field = py::cast<std::uint64_t>(value), known = true;
    if (!known) throw py::type_error("nnprof: unknown bottleneck threshold '" + name + "'");
  }
  return t;
}

// ---- reports ------------------------------------------------------------------------------

ReportOptions report_options(bool full_names, std::size_t rows) {
  ReportOptions o;
  o.full_names = full_names;
  o.rows = rows;
  return o;
}

/// A report over `profile`, which is moved rather than copied when nothing else holds it (a
/// snapshot taken for this report alone).
Report report_of(const std::shared_ptr<Profile>& profile, const ReportOptions& options) {
  if (profile.use_count() == 1) return Report(std::move(*profile), options);
  return Report(*profile, options);
}

/// A path given as str or os.PathLike (pathlib.Path), as the str the C++ API takes.
std::string path_of(const py::handle& path) {
  if (py::isinstance<py::str>(path)) return py::cast<std::string>(path);
  try {
    return py::cast<std::string>(py::module_::import("os").attr("fspath")(path));
  } catch (const py::error_already_set&) {
    throw py::type_error("nnprof: a path is a str or os.PathLike, not " +
                         py::cast<std::string>(py::type::handle_of(path).attr("__name__")));
  }
}

/// Profile::report(target): a format name renders the report and returns it (bytes for the
/// binary pprof format, str otherwise); anything else is a path written in the format its
/// extension (or `format`) names.
py::object report(const std::shared_ptr<Profile>& profile, const py::handle& target_object,
                  std::optional<std::string> format, bool full_names, std::size_t rows) {
  const std::string target = path_of(target_object);
  if (target.empty()) throw py::value_error("nnprof: report() needs a format name (\"text\", \"json\", ...) or a path");
  const FormatInfo* named = nullptr;
  if (format) {
    named = find_format(*format);
    if (named == nullptr) throw py::value_error("nnprof: unknown report format '" + *format + "'");
  }
  const FormatInfo* as_format = find_format(target);
  if (as_format != nullptr && target.find('.') == std::string::npos && target.find('/') == std::string::npos) {
    if (named != nullptr && named != as_format)
      throw py::value_error("nnprof: report('" + target + "') names a format; format= says another");
    std::string text;
    {
      py::gil_scoped_release release;
      std::ostringstream out;
      report_of(profile, report_options(full_names, rows)).write(out, as_format->format);
      text = std::move(out).str();
    }
    if (as_format->format == ReportFormat::Pprof) return py::bytes(text);
    return py::str(text);
  }
  {
    py::gil_scoped_release release;
    report_of(profile, report_options(full_names, rows))
        .export_to(target, named != nullptr ? named->format : ReportFormat::Auto);
  }
  return py::none();
}

std::string summary_text(const std::shared_ptr<Profile>& profile, bool full_names, std::size_t rows) {
  py::gil_scoped_release release;
  return report_of(profile, report_options(full_names, rows)).text();
}

/// A Profile shared between Python objects (and kept alive while native code reads it with the
/// GIL released).
using ProfilePtr = std::shared_ptr<Profile>;

ProfilePtr snapshot_of(const Profiler& profiler) {
  py::gil_scoped_release release;
  return std::make_shared<Profile>(profiler.snapshot());
}

// ---- CPU sampling ------------------------------------------------------------------------------

struct Sampling {
  std::unique_ptr<CpuProfiler> sampler;
  py::object owner;  ///< the Python Profiler sampled into (kept alive while sampling)
};
Sampling& sampling() {
  static auto* s = new Sampling{};  // never destroyed: the interpreter may end while sampling
  return *s;
}

py::dict sampler_stats(const CpuProfilerStats& s) {
  py::dict d;
  d["samples"] = s.samples;
  d["dropped"] = s.dropped;
  d["threads_sampled"] = s.threads_sampled;
  d["effective_hz"] = s.effective_hz;
  d["mechanism"] = s.mechanism;
  d["unwinder"] = s.unwinder;
  return d;
}

SamplingClock clock_named(const std::string& name) {
  if (name == "cpu") return SamplingClock::Cpu;
  if (name == "wall") return SamplingClock::Wall;
  throw py::value_error("nnprof: clock must be \"cpu\" or \"wall\", not '" + name + "'");
}

Unwinder unwinder_named(const std::string& name) {
  if (name == "auto") return Unwinder::Auto;
  if (name == "dwarf") return Unwinder::Dwarf;
  if (name == "frame-pointer") return Unwinder::FramePointer;
  if (name == "kernel") return Unwinder::Kernel;
  throw py::value_error("nnprof: unwinder must be \"auto\", \"dwarf\", \"frame-pointer\" or \"kernel\", not '" + name +
                        "'");
}

BufferPolicy policy_named(const std::string& name) {
  if (name == "keep-first") return BufferPolicy::KeepFirst;
  if (name == "flight-recorder") return BufferPolicy::FlightRecorder;
  throw py::value_error("nnprof: policy must be \"keep-first\" or \"flight-recorder\", not '" + name + "'");
}

/// The directory libnnprof was loaded from: libnnprof_torch and the nnprof CLI's agent live
/// beside it, in the build tree and once installed.
std::string library_directory() {
  Dl_info info{};
  if (dladdr(reinterpret_cast<void*>(&detail::create_global_profiler), &info) == 0 || info.dli_fname == nullptr)
    return {};
  char resolved[PATH_MAX];
  std::string path = realpath(info.dli_fname, resolved) != nullptr ? resolved : info.dli_fname;
  const auto slash = path.rfind('/');
  return slash == std::string::npos ? std::string(".") : path.substr(0, slash);
}

}  // namespace

void bind_core(py::module_& m) {
  m.attr("__version__") = NNPROF_PYTHON_VERSION;
  py::register_exception<Error>(m, "Error", PyExc_RuntimeError);
  m.attr("Error").attr("__module__") = "nnprof";
  m.attr("Error").attr("__doc__") =
      "Raised by nnprof when reading or writing a file or an argument fails; the message says what to do.";

  bind_scopes(m);

  py::class_<Profile, std::shared_ptr<Profile>>(m, "Profile", R"(A profile: a snapshot of a profiler, or a .nnprof file
loaded with nnprof.load(). Its analyses return plain Python objects (lists of dicts, whose
fields docs/PYTHON.md lists).)")
      .def_property_readonly("metadata", &metadata, "Where and when it was recorded: host, command line, duration_ns, ...")
      .def_property_readonly("duration_ns", [](const Profile& p) { return p.meta.duration_ns; })
      .def_property_readonly("empty", &Profile::empty, "Nothing was recorded.")
      .def_property_readonly("threads", &threads)
      .def_property_readonly(
          "scopes",
          [](const Profile& p) {
            py::list out;
            for (const ScopeStats& s : p.scopes) out.append(scope_stats(p, s));
            return out;
          },
          "Statistics of every scope name, most inclusive time first.")
      .def(
          "scope",
          [](const Profile& p, const std::string& name) -> py::object {
            const ScopeStats* s = p.find_scope(name);
            return s == nullptr ? py::object(py::none()) : py::object(scope_stats(p, *s));
          },
          py::arg("name"), "The statistics of the scopes named `name`, or None.")
      .def(
          "top_scopes",
          [](const Profile& p, std::size_t n) {
            py::list out;
            for (std::size_t i = 0; i < p.scopes.size() && i < n; ++i) out.append(scope_stats(p, p.scopes[i]));
            return out;
          },
          py::arg("n") = 10, "The `n` scopes with the most inclusive time, longest first.")
      .def_property_readonly(
          "call_tree",
          [](const Profile& p) {
            py::list out;
            for (const CallTreeNode& n : p.call_tree) out.append(call_tree_node(p, n));
            return out;
          },
          "The call tree merged over threads; [0] is the root, each node lists its children's ids.")
      .def("node_path", &Profile::node_path, py::arg("node"), "Names from the root to `node`, joined by ' > '.")
      .def_property_readonly("spans", &spans, "Every kept scope execution, by thread then start.")
      .def_property_readonly("diagnostics", &diagnostics)
      .def_property_readonly("completeness", [](const Profile& p) { return completeness(p.completeness); })
      .def_property_readonly("annotations", [](const Profile& p) { return p.annotations; })
      .def_property_readonly("memory_counters", &memory_counters)
      .def_property_readonly("heap", [](const Profile& p) { return heap_summary(p.heap); })
      .def_property_readonly("system", [](const Profile& p) { return system_dict(p.system); },
                             "What the system monitor sampled: tracks, energy per domain, notes (monitored False without one).")
      .def_property_readonly("cpu", [](const Profile& p) { return cpu_summary(p.cpu); })
      .def_property_readonly("cpu_sample_count", [](const Profile& p) { return p.cpu_samples.size(); })
      .def(
          "hot_functions",
          [](const ProfilePtr& p) {
            std::vector<FunctionStats> functions;
            {
              py::gil_scoped_release release;
              functions = function_stats(*p);
            }
            return function_stats_list(functions);
          },
          "The functions of the CPU samples, most self time first.")
      .def(
          "python_lines",
          [](const ProfilePtr& p) {
            std::vector<PythonLineStats> lines;
            {
              py::gil_scoped_release release;
              lines = python_line_stats(*p);
            }
            return python_line_list(lines);
          },
          "The line-level profile of the Python code in the CPU samples (CPython 3.11), most self time "
          "first: self counts the samples whose innermost Python frame was on the line (with the native "
          "code it called), total those with the line anywhere on the Python stack.")
      .def(
          "bottlenecks",
          [](const ProfilePtr& p, const py::kwargs& thresholds) {
            const BottleneckThresholds t = thresholds_from(thresholds);
            std::vector<Bottleneck> found;
            {
              py::gil_scoped_release release;
              found = analyze_bottlenecks(*p, t);
            }
            return bottlenecks(found);
          },
          "The bottlenecks, most severe first; keyword arguments override thresholds (slow_operation_share=0.2, ...).")
      .def(
          "recommendations",
          [](const ProfilePtr& p) {
            std::vector<Recommendation> found;
            {
              py::gil_scoped_release release;
              found = recommend(*p);
            }
            return recommendations(found);
          },
          "The optimization advisor's recommendations, largest expected gain first.")
      .def(
          "operators",
          [](const ProfilePtr& p) {
            OperatorTable table;
            {
              py::gil_scoped_release release;
              table = operator_table(*p);
            }
            return operators(*p, table);
          },
          "The operator table: operator calls (PyTorch's aten::...) grouped by operator and input shapes.")
      .def(
          "save",
          [](const ProfilePtr& p, const py::handle& path_object) {
            const std::string path = path_of(path_object);
            py::gil_scoped_release release;
            p->save(path);
          },
          py::arg("path"),
          "Writes a .nnprof file, or the report the extension names (.json, .html, .md, .txt, .csv, .trace.json, "
          ".folded, .pb.gz, .svg).")
      .def("report", &report, py::arg("target") = "text", py::kw_only(), py::arg("format") = py::none(),
           py::arg("full_names") = false, py::arg("rows") = 0,
           "report(\"json\") returns the report in that format; report(\"out.html\") writes it to that file.")
      .def(
          "summary", [](const ProfilePtr& p, bool full_names, std::size_t rows) { return summary_text(p, full_names, rows); },
          py::kw_only(), py::arg("full_names") = false, py::arg("rows") = 0, "The text summary.")
      .def(
          "print_summary",
          [](const ProfilePtr& p) { py::print(summary_text(p, false, 0), py::arg("end") = ""); },
          "Prints the text summary.")
      .def("__eq__", [](const Profile& a, const Profile& b) { return a == b; })
      .def("__repr__", [](const Profile& p) {
        return "<nnprof.Profile: " + std::to_string(p.scopes.size()) + " scope names, " +
               std::to_string(p.spans.size()) + " spans, " + std::to_string(p.cpu_samples.size()) + " CPU samples>";
      });

  m.def(
      "load",
      [](const py::handle& path_object) {
        const std::string path = path_of(path_object);
        std::shared_ptr<Profile> p;
        {
          py::gil_scoped_release release;
          p = std::make_shared<Profile>(Profile::load(path));
        }
        return p;
      },
      py::arg("path"), "Reads a .nnprof file. Raises nnprof.Error saying what is wrong with it.");

  py::class_<Profiler> profiler_class(m, "Profiler", R"(A recording session: scopes, FLOPs, annotations, snapshots and reports.
nnprof.global_profiler() is the process's own, the one nnprof.scope(), the PyTorch operator
observer and `nnprof record` record into.)");
  profiler_class
      .def(py::init([](std::size_t memory_cap_bytes, const std::string& policy, bool record_spans,
                       bool measure_overhead, bool nvtx) {
             if (memory_cap_bytes == 0) throw py::value_error("nnprof: memory_cap_bytes must be positive");
             ProfilerOptions o;
             o.memory_cap_bytes = memory_cap_bytes;
             o.policy = policy_named(policy);
             o.record_spans = record_spans;
             o.measure_overhead = measure_overhead;
             o.nvtx = nvtx;
             return std::make_unique<Profiler>(o);
           }),
           py::kw_only(), py::arg("memory_cap_bytes") = ProfilerOptions{}.memory_cap_bytes,
           py::arg("policy") = "keep-first", py::arg("record_spans") = true, py::arg("measure_overhead") = true,
           py::arg("nvtx") = false)
      .def(
          "start", [](Profiler& p, std::string_view name) { p.start(name); }, py::arg("name"),
          "Opens a scope named `name` on the calling thread (prefer `with scope(name)`).")
      .def(
          "stop", [](Profiler& p, std::string_view name) { p.stop(name); }, py::arg("name"),
          "Closes the innermost open scope named `name` on the calling thread.")
      .def(
          "add_flops",
          [](Profiler& p, double flops, std::uint64_t bytes) { p.add_flops(flops, bytes); }, py::arg("flops"),
          py::arg("bytes") = 0, "Declares work done in the calling thread's innermost open scope.")
      .def(
          "add_items", [](Profiler& p, std::string_view name, std::uint64_t count) { p.add_items(name, count); },
          py::arg("name"), py::arg("count"), "Reports work items (samples, tokens) processed under scope `name`.")
      .def(
          "arg",
          [](Profiler& p, std::string_view key, const py::object& value) {
            if (py::isinstance<py::bool_>(value) || py::isinstance<py::int_>(value))
              p.arg(key, py::cast<std::int64_t>(value));
            else if (py::isinstance<py::float_>(value))
              p.arg(key, py::cast<double>(value));
            else if (py::isinstance<py::str>(value))
              p.arg(key, std::string_view(py::cast<std::string>(value)));
            else
              throw py::type_error("nnprof: a scope argument is a str, int or float");
          },
          py::arg("key"), py::arg("value"), "Attaches key=value to the innermost open scope of the calling thread.")
      .def(
          "annotate", [](Profiler& p, std::string_view key, std::string_view value) { p.annotate(key, value); },
          py::arg("key"), py::arg("value"), "Records a fact about the run (git commit, batch size) in every snapshot.")
      .def(
          "record_alloc", [](Profiler& p, std::string_view name, std::uint64_t bytes) { p.record_alloc(name, bytes); },
          py::arg("name"), py::arg("bytes"))
      .def(
          "record_free", [](Profiler& p, std::string_view name, std::uint64_t bytes) { p.record_free(name, bytes); },
          py::arg("name"), py::arg("bytes"))
      .def_property("enabled", &Profiler::enabled, &Profiler::set_enabled,
                    "While False, scopes cost one load and record nothing.")
      .def(
          "call_count", [](const Profiler& p, std::string_view name) { return p.call_count(name); }, py::arg("name"))
      .def(
          "total_time",
          [](const Profiler& p, std::string_view name) {
            return std::chrono::duration<double>(p.total_time(name)).count();
          },
          py::arg("name"), "Inclusive time of all closed scopes `name`, in seconds.")
      .def(
          "avg_time",
          [](const Profiler& p, std::string_view name) { return std::chrono::duration<double>(p.avg_time(name)).count(); },
          py::arg("name"), "Mean time of one call of `name`, in seconds.")
      .def(
          "stats",
          [](const Profiler& p, std::string_view name) -> py::object {
            std::optional<ScopeStats> s;
            {
              py::gil_scoped_release release;
              s = p.stats(name);
            }
            if (!s) return py::none();
            Profile names;  // scope_stats resolves the name through a profile's string table
            names.strings.emplace_back(name);
            ScopeStats copy = *s;
            copy.name = 0;
            return scope_stats(names, copy);
          },
          py::arg("name"), "The statistics of the scopes named `name` (a dict as in Profile.scopes), or None.")
      .def("snapshot", &snapshot_of, "Everything recorded so far, as a Profile, without stopping.")
      .def(
          "save",
          [](const Profiler& p, const py::handle& path_object) {
            const std::string path = path_of(path_object);
            py::gil_scoped_release release;
            p.save(path);
          },
          py::arg("path"), "Saves a snapshot: a .nnprof file, or the report the extension names.")
      .def(
          "report",
          [](const Profiler& p, const py::handle& target, std::optional<std::string> format, bool full_names,
             std::size_t rows) { return report(snapshot_of(p), target, std::move(format), full_names, rows); },
          py::arg("target") = "text", py::kw_only(), py::arg("format") = py::none(), py::arg("full_names") = false,
          py::arg("rows") = 0, "A report of a snapshot: returned for a format name, written for a path.")
      .def(
          "summary", [](const Profiler& p) { return summary_text(snapshot_of(p), false, 0); },
          "The text summary of a snapshot.")
      .def(
          "print_summary", [](const Profiler& p) { py::print(summary_text(snapshot_of(p), false, 0), py::arg("end") = ""); },
          "Prints the text summary of a snapshot.")
      .def(
          "bottlenecks",
          [](const Profiler& p, const py::kwargs& thresholds) {
            const BottleneckThresholds t = thresholds_from(thresholds);
            std::vector<Bottleneck> found;
            {
              py::gil_scoped_release release;
              found = p.analyze_bottlenecks(t);
            }
            return bottlenecks(found);
          },
          "The bottlenecks of everything recorded so far, most severe first.");

  add_profiler_scope_method(profiler_class);
  // The package re-exports them: nnprof.Profiler, nnprof.Profile in reprs and help().
  for (const char* name : {"Profiler", "Profile"}) m.attr(name).attr("__module__") = "nnprof";

  m.def(
      "global_profiler", [] { return &global_profiler(); }, py::return_value_policy::reference,
      "The process's profiler: the one nnprof.scope(), the PyTorch operator observer and `nnprof record` use.");

  m.def(
      "start_sampling",
      [](py::object profiler, double hz, const std::string& clock, bool call_graph, const std::string& unwinder,
         std::uint32_t max_stack_depth) {
        Sampling& s = sampling();
        if (s.sampler && s.sampler->active())
          throw py::value_error("nnprof: sampling is already running; call nnprof.stop_sampling() first");
        CpuProfilerOptions o;
        o.hz = hz;
        o.clock = clock_named(clock);
        o.call_graph = call_graph;
        o.unwinder = unwinder_named(unwinder);
        o.max_stack_depth = max_stack_depth;
        Profiler& target = profiler.is_none() ? global_profiler() : py::cast<Profiler&>(profiler);
        s.sampler.reset();
        s.sampler = std::make_unique<CpuProfiler>(target, o);
        s.owner = std::move(profiler);
      },
      py::kw_only(), py::arg("profiler") = py::none(), py::arg("hz") = CpuProfilerOptions{}.hz,
      py::arg("clock") = "cpu", py::arg("call_graph") = true, py::arg("unwinder") = "auto",
      py::arg("max_stack_depth") = CpuProfilerOptions{}.max_stack_depth,
      "Samples every thread's call stack into the profiler (the global one by default) until stop_sampling().");
  m.def(
      "stop_sampling",
      [] {
        Sampling& s = sampling();
        if (!s.sampler) throw py::value_error("nnprof: sampling is not running; call nnprof.start_sampling() first");
        {
          py::gil_scoped_release release;
          s.sampler->stop();
        }
        py::dict stats = sampler_stats(s.sampler->stats());
        s.sampler.reset();
        s.owner = py::none();
        return stats;
      },
      "Stops sampling; returns its figures (samples, dropped, effective_hz, mechanism, unwinder). Later "
      "snapshots keep every sample.");
  m.def("sampling_active", [] { return sampling().sampler != nullptr && sampling().sampler->active(); });

  m.def(
      "report_formats",
      [] {
        py::list out;
        for (const FormatInfo& f : report_formats()) {
          py::dict d;
          d["name"] = std::string(f.name);
          d["extension"] = std::string(f.extension());
          d["description"] = std::string(f.description);
          out.append(std::move(d));
        }
        return out;
      },
      "Every report format: name, file extension, description.");
  m.def("library_directory", &library_directory, "The directory libnnprof was loaded from.");
  m.def(
      "set_thread_name", [](std::string_view name) { set_thread_name(name); }, py::arg("name"),
      "Names the calling thread in every profile.");
  m.def("get_current_memory", &get_current_memory, "The process's resident memory now (VmRSS), in bytes.");
  m.attr("torch_library") = NNPROF_PYTHON_TORCH_LIBRARY;
}

}  // namespace nnprof::python
