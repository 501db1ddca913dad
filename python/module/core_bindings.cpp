// The C++ profiler itself, for Python.
#include <nnprof/nnprof.hpp>

#include "bindings.hpp"

namespace py = pybind11;

namespace nnprof::python {

void bind_core(py::module_& m) {
  m.attr("__version__") = NNPROF_PYTHON_VERSION;
}

}  // namespace nnprof::python
