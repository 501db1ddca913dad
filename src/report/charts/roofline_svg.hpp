// The roofline chart of the HTML report: this machine's memory and compute roofs on log-log
// axes (FLOPs per byte against FLOP/s), one core and all cores, with each scope that declared
// its work placed where it ran.
#pragma once

#include <string>
#include <vector>

#include "analysis/compute.hpp"
#include "nnprof/profile.hpp"

namespace nnprof::report::html {

/// Appends an <svg> roofline of `scopes` (those with a roofline point) against the profile's
/// machine peaks. Writes nothing when the peaks are unknown or no scope has a point.
void write_roofline_chart(const Profile& profile, const std::vector<analysis::ScopeCompute>& scopes,
                          std::string& out);

}  // namespace nnprof::report::html
