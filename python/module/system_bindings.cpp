// nnprof.SystemMonitor, Profile.system and the carbon estimate: the system monitor's tracks and
// energy as plain Python values (lists and dicts; a value not read is None, never a guess).
#include <pybind11/stl.h>

#include <cmath>
#include <memory>
#include <optional>

#include <nnprof/profile.hpp>
#include <nnprof/profiler.hpp>
#include <nnprof/system.hpp>

#include "bindings.hpp"

namespace py = pybind11;

namespace nnprof::python {

namespace {

py::dict energy_dict(const EnergyDomain& e) {
  py::dict d;
  d["name"] = e.name;
  d["kind"] = e.kind;
  d["method"] = to_string(e.method);
  d["measured"] = e.method != EnergyMethod::Modelled;
  d["joules"] = e.joules;
  d["uncertainty"] = e.uncertainty;
  d["track"] = e.track;
  d["note"] = e.note;
  return d;
}

py::dict carbon_dict(const CarbonEstimate& c) {
  py::dict d;
  d["energy_joules"] = c.energy_joules;
  d["measured_joules"] = c.measured_joules;
  d["grams_co2"] = c.grams_co2;
  d["grams_low"] = c.grams_low;
  d["grams_high"] = c.grams_high;
  d["pue"] = c.pue;
  d["region"] = c.intensity.region;
  d["region_name"] = c.intensity.name;
  d["grams_per_kwh"] = c.intensity.grams_per_kwh;
  d["source"] = c.intensity.source;
  d["defaulted_region"] = c.defaulted_region;
  return d;
}

CarbonOptions carbon_options(const std::string& region, double pue, double grams_per_kwh, const std::string& source) {
  CarbonOptions o;
  o.region = region;
  o.pue = pue;
  o.grams_per_kwh = grams_per_kwh;
  o.source = source;
  return o;
}

/// A standalone monitor, or one attached to a profiler the Python object keeps alive.
class PySystemMonitor {
 public:
  PySystemMonitor(double interval_s, Profiler* profiler, double tdp_watts, std::string scope_thread) {
    SystemOptions o;
    if (!(interval_s >= 0.01 && interval_s <= 3600.0))
      throw py::value_error("SystemMonitor: interval must be from 0.01 to 3600 seconds (got " +
                            std::to_string(interval_s) + ")");
    o.interval_ms = static_cast<std::uint32_t>(std::lround(interval_s * 1000.0));
    o.cpu_tdp_watts = tdp_watts;
    o.scope_thread = std::move(scope_thread);
    monitor_ = profiler != nullptr ? std::make_unique<SystemMonitor>(*profiler, o) : std::make_unique<SystemMonitor>(o);
  }
  void stop() { monitor_->stop(); }
  [[nodiscard]] SystemProfile result() const { return monitor_->result(); }

 private:
  std::unique_ptr<SystemMonitor> monitor_;
};

}  // namespace

py::dict system_dict(const SystemProfile& s) {
  py::dict d;
  d["monitored"] = s.monitored;
  d["interval_s"] = s.interval_ms / 1000.0;
  py::dict limits;
  limits["logical_cpus"] = s.limits.logical_cpus;
  limits["cgroup_cpu_cores"] = s.limits.cgroup_cpu_cores > 0 ? py::object(py::float_(s.limits.cgroup_cpu_cores)) : py::none();
  limits["host_memory_bytes"] = s.limits.host_memory_bytes;
  limits["cgroup_memory_bytes"] =
      s.limits.cgroup_memory_bytes > 0 ? py::object(py::int_(s.limits.cgroup_memory_bytes)) : py::none();
  limits["cgroup"] = s.limits.cgroup;
  d["limits"] = limits;
  py::list times;
  for (std::uint64_t t : s.sample_ns) times.append(static_cast<double>(t) / 1e9);
  d["sample_s"] = times;
  py::dict tracks;
  for (const SystemTrack& t : s.tracks) {
    py::list values;
    for (double v : t.values) values.append(std::isnan(v) ? py::object(py::none()) : py::object(py::float_(v)));
    py::dict track;
    track["unit"] = t.unit;
    track["values"] = values;
    tracks[py::str(t.name)] = track;
  }
  d["tracks"] = tracks;
  py::list energy;
  for (const EnergyDomain& e : s.energy) energy.append(energy_dict(e));
  d["energy"] = energy;
  d["notes"] = s.notes;
  return d;
}

void bind_system(py::module_& m) {
  py::class_<PySystemMonitor>(m, "SystemMonitor", R"(Samples the process, the machine, its cgroup, RAPL and
NVIDIA GPUs every `interval` seconds on a thread of its own: CPU, memory, disk and network IO,
pressure stalls, GPU utilisation, power, temperature and clocks, and the energy of each domain
with the method that measured (or modelled) it. With `profiler`, every snapshot of that profiler
carries the tracks (Profile.system); on its own, result() gives them.)")
      .def(py::init<double, Profiler*, double, std::string>(), py::arg("interval") = 0.5,
           py::arg("profiler") = nullptr, py::arg("tdp_watts") = 0.0, py::arg("scope_thread") = "",
           py::keep_alive<1, 3>())
      .def("stop", &PySystemMonitor::stop, py::call_guard<py::gil_scoped_release>(),
           "Takes a last sample and stops; result() stays readable.")
      .def(
          "result", [](const PySystemMonitor& s) { return system_dict(s.result()); },
          "The tracks (name -> unit and values, None where not read), the energy per domain and the notes.")
      .def(
          "carbon",
          [](const PySystemMonitor& s, const std::string& region, double pue, double grams_per_kwh,
             const std::string& source) {
            return carbon_dict(carbon_estimate(s.result(), carbon_options(region, pue, grams_per_kwh, source)));
          },
          py::arg("region") = "", py::arg("pue") = 1.0, py::arg("grams_per_kwh") = 0.0, py::arg("source") = "",
          "Energy x PUE x grid intensity of `region` (ISO 3166 code; default NNPROF_CARBON_REGION, else the world "
          "average, flagged as defaulted_region).");
  m.attr("SystemMonitor").attr("__module__") = "nnprof";

  m.def(
      "carbon_estimate",
      [](const Profile& p, const std::string& region, double pue, double grams_per_kwh, const std::string& source) {
        return carbon_dict(carbon_estimate(p.system, carbon_options(region, pue, grams_per_kwh, source)));
      },
      py::arg("profile"), py::arg("region") = "", py::arg("pue") = 1.0, py::arg("grams_per_kwh") = 0.0,
      py::arg("source") = "", "The carbon of a profile's measured and modelled energy (see SystemMonitor.carbon).");
  m.def("grid_intensities", [] {
    py::list out;
    for (const GridIntensity& g : grid_intensities()) {
      py::dict d;
      d["region"] = g.region;
      d["name"] = g.name;
      d["grams_per_kwh"] = g.grams_per_kwh;
      d["source"] = g.source;
      out.append(d);
    }
    return out;
  }, "The grid carbon intensities shipped with nnprof, with their source and year.");
}

}  // namespace nnprof::python
