// The C++ classes under the Python seeds' APIs (nnprof.CUDATimer, MemoryTracker, ...).
#include <nnprof/nnprof.hpp>

#include "bindings.hpp"

namespace py = pybind11;

namespace nnprof::python {

void bind_seed_apis(py::module_& m) {
  (void)m;
}

}  // namespace nnprof::python
