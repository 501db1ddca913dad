// The parts of the native module nnprof._native, one function per area, each in its own file.
#pragma once

#include <pybind11/pybind11.h>

#include <nnprof/profiler.hpp>

namespace nnprof::python {

/// The C++ profiler itself: Profiler, scopes, snapshots, saving, reports, loading profiles.
void bind_core(pybind11::module_& m);
/// nnprof.Scope and nnprof.scope(name), written against the CPython API for speed (called by bind_core).
void bind_scopes(pybind11::module_& m);
/// A scope of `profiler` named `name`; `owner` (the Python Profiler) is kept alive with it.
pybind11::object make_scope(Profiler& profiler, pybind11::handle owner, pybind11::handle name);
/// The classes the Python seeds' APIs are built on (CUDA timing, memory tracking, metrics).
void bind_seed_apis(pybind11::module_& m);

}  // namespace nnprof::python
