// Measuring the roofs of this machine (nnprof::measure_machine).
#pragma once

#include "nnprof/roofline.hpp"

namespace nnprof::collect {

/// FMA throughput on every usable thread and on one (fp32, fp64) and STREAM-triad bandwidth,
/// with the CPU model and thread count they describe. Throws nnprof::Error.
MachinePeaks measure_machine(const MachineMeasureOptions& options);

}  // namespace nnprof::collect
