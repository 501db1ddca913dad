// The parts of the native module nnprof._native, one function per area, each in its own file.
#pragma once

#include <pybind11/pybind11.h>

#include <vector>

#include <nnprof/sampling_profiler.hpp>
#include <nnprof/system_profile.hpp>

namespace nnprof::python {

/// The C++ profiler itself: Profiler, scopes, snapshots, saving, reports, loading profiles.
void bind_core(pybind11::module_& m);
/// nnprof.Scope and nnprof.scope(name), written against the CPython API for speed (called by bind_core).
void bind_scopes(pybind11::module_& m);
/// Profiler.scope(name), added to the bound Profiler type by bind_core.
void add_profiler_scope_method(pybind11::handle profiler_type);
/// The classes the Python seeds' APIs are built on (CUDA timing, memory tracking, metrics).
void bind_seed_apis(pybind11::module_& m);

/// nnprof.SystemMonitor, carbon_estimate and grid_intensities (the system monitor, nnprof/system.hpp).
void bind_system(pybind11::module_& m);
/// nnprof.LiveServer, nnprof.ContinuousProfiler, Profile.continuous and analyze_performance_trends (after bind_core).
void bind_live(pybind11::module_& m);
/// Profile.ranks, Profile.analyze_ranks/rank_critical_path and nnprof.merge_ranks (after bind_core).
void bind_distributed(pybind11::module_& m);
/// Profile::system as a dict (Profile.system, SystemMonitor.result()).
pybind11::dict system_dict(const SystemProfile& system);

/// nnprof::python_line_stats as a list of dicts (Profile.python_lines(), PerformanceProfiler's line profile).
pybind11::list python_line_list(const std::vector<PythonLineStats>& lines);

}  // namespace nnprof::python
