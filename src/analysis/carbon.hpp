// Carbon of the energy a run used: energy × PUE × the grid's carbon intensity, from a table
// shipped with nnprof (never a network lookup). The public API (nnprof/system.hpp) and the
// report's "System and energy" section both use it.
#pragma once

#include <string_view>
#include <vector>

#include "nnprof/system.hpp"

namespace nnprof::analysis {

/// The environment variable naming the region when CarbonOptions::region is empty.
inline constexpr const char* kCarbonRegionVariable = "NNPROF_CARBON_REGION";

/// Grid carbon intensity per country (ISO 3166 alpha-2) and "WORLD": Ember's yearly electricity
/// data for 2023 as Our World in Data publishes it (lifecycle gCO2e per kWh generated).
[[nodiscard]] const std::vector<GridIntensity>& grid_intensity_table();

/// The table's row for `region` (any case), or nullptr.
[[nodiscard]] const GridIntensity* find_grid_intensity(std::string_view region);

/// The carbon of `system`'s energy (psys excluded). The region is options.region, else the
/// NNPROF_CARBON_REGION variable, else WORLD (defaulted_region). Throws nnprof::Error for an
/// unknown region, a PUE below 1 or a negative intensity.
[[nodiscard]] CarbonEstimate estimate_carbon(const SystemProfile& system, const CarbonOptions& options);

}  // namespace nnprof::analysis
