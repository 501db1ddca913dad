// The parts of the native module nnprof._native, one function per area, each in its own file.
#pragma once

#include <pybind11/pybind11.h>

namespace nnprof::python {

/// The C++ profiler itself: Profiler, scopes, snapshots, saving, reports, loading profiles.
void bind_core(pybind11::module_& m);
/// The classes the Python seeds' APIs are built on (CUDA timing, memory tracking, metrics).
void bind_seed_apis(pybind11::module_& m);

}  // namespace nnprof::python
