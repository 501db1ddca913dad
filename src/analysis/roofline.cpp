// Roofline classification: a pure function of the work's FLOPs, bytes and time and the
// machine's measured roofs.
#include <algorithm>
#include <cmath>

#include <fmt/format.h>

#include "nnprof/error.hpp"
#include "nnprof/roofline.hpp"

namespace nnprof {

RooflinePoint roofline_point(double flops, double bytes, double seconds, const MachinePeaks& peaks,
                             Precision precision, bool one_core) {
  if (!(bytes > 0.0) || !(seconds > 0.0) || !(flops >= 0.0) || !std::isfinite(flops))
    throw Error(fmt::format("a roofline point needs FLOPs >= 0, bytes > 0 and a time > 0 (got {} FLOPs, {} bytes, {} s)",
                            flops, bytes, seconds));
  const double peak = peaks.peak_flops(precision, one_core), bw = peaks.peak_bandwidth(one_core);
  if (!(peak > 0.0) || !(bw > 0.0))
    throw Error("the machine's peaks are not known: run `nnprof machine` to measure them");
  RooflinePoint r;
  r.intensity = flops / bytes;
  r.attained = flops / seconds;
  r.ridge = peak / bw;
  r.attainable = std::min(peak, r.intensity * bw);
  r.fraction = r.attainable > 0.0 ? r.attained / r.attainable : 0.0;
  r.bound = r.intensity < r.ridge ? RooflineBound::Memory : RooflineBound::Compute;
  return r;
}

}  // namespace nnprof
