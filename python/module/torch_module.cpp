// nnprof._torch: PyTorch's operators as scopes (nnprof::torch::OpObserver from libnnprof_torch),
// for nnprof.torch.capture_operators(). Linked against libnnprof_torch, hence LibTorch: the
// package imports it only once the program has imported torch.
#include <memory>

#include <pybind11/pybind11.h>

#include <nnprof/torch.hpp>

namespace py = pybind11;

PYBIND11_MODULE(_torch, m) {
  m.doc() = "nnprof's PyTorch operator observer (libnnprof_torch)";
  py::class_<nnprof::torch::OpObserver>(m, "OpObserver",
                                        "Records every operator torch runs as a scope of `profiler` until stop().")
      .def(py::init([](py::object profiler, bool record_shapes) {
             nnprof::Profiler& target =
                 profiler.is_none() ? nnprof::global_profiler() : py::cast<nnprof::Profiler&>(profiler);
             return std::make_unique<nnprof::torch::OpObserver>(target, nnprof::torch::OpObserverOptions{record_shapes});
           }),
           py::arg("profiler") = py::none(), py::arg("record_shapes") = true,
           py::keep_alive<1, 2>());  // the Python Profiler lives as long as the observer records into it
  m.def("active", &nnprof::torch::OpObserver::active, "Whether an observer records now (this one, or the agent's).");
  m.def("built_for_torch_version", &nnprof::torch::built_for_torch_version);
}
