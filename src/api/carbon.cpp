// The carbon API of nnprof/system.hpp: the table and the estimate live in the analysis layer,
// where the report's "System and energy" section uses them too.
#include "analysis/carbon.hpp"
#include "nnprof/system.hpp"

namespace nnprof {

const std::vector<GridIntensity>& grid_intensities() { return analysis::grid_intensity_table(); }

CarbonEstimate carbon_estimate(const SystemProfile& system, const CarbonOptions& options) {
  return analysis::estimate_carbon(system, options);
}

}  // namespace nnprof
