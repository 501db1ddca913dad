// The GPUs through NVML: per device index N (NVML's order), the tracks gpu<N>.utilization,
// gpu<N>.memory_utilization, gpu<N>.memory.used, gpu<N>.power, gpu<N>.temperature,
// gpu<N>.clock.sm and gpu<N>.clock.memory, and the energy domain "gpu<N>" (kind "gpu", track
// energy.gpu<N>.power):
//  - NvmlEnergy where the board has the total energy counter (Volta and later): the counter's
//    growth since the first sample, ±5 %;
//  - NvmlPower otherwise: the power readings integrated over time by the trapezoid rule,
//    ±10 %;
//  - no domain, and a note, where neither can be read: a GPU we cannot measure is never
//    reported as using 0 J.
// The uncertainties are argued where they are defined (nvml_probe.cpp).
//
// NVML is loaded at run time (collect/gpu/cuda_loader.hpp; $NNPROF_NVML_LIBRARY names another
// library), so this builds only where the CUDA headers are found; elsewhere the probe says
// that nnprof was built without GPU support (collect/gpu/gpu_disabled.cpp).
#pragma once

#include <memory>

#include "collect/system/probe.hpp"
#include "nnprof/system.hpp"

namespace nnprof::detail::system {

/// nullptr when options.gpus is false; otherwise a probe of every GPU NVML sees, or one that
/// only notes why there is none to read.
std::unique_ptr<Probe> make_nvml_probe(const SystemOptions& options);

}  // namespace nnprof::detail::system
