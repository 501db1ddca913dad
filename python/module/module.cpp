// nnprof._native: the C++ library as a Python extension module (pybind11). The package
// python/nnprof/ builds the Python APIs on it; nothing here re-implements the library.
#include "bindings.hpp"

PYBIND11_MODULE(_native, m) {
  m.doc() = "nnprof's C++ profiler (libnnprof), wrapped for Python";
  nnprof::python::bind_core(m);
  nnprof::python::bind_seed_apis(m);
  nnprof::python::bind_system(m);
  nnprof::python::bind_distributed(m);
  nnprof::python::bind_live(m);
}
