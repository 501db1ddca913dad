#include "analysis/carbon.hpp"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdlib>
#include <string>

#include <fmt/format.h>

#include "analysis/energy.hpp"
#include "nnprof/error.hpp"

namespace nnprof::analysis {
namespace {

// Every row from one source and one year, so that two regions compare on the same basis.
constexpr const char* kTableSource =
    "Ember, Yearly Electricity Data (2024 release), 2023, lifecycle gCO2e/kWh of electricity generated, "
    "via Our World in Data \"Carbon intensity of electricity generation\"";

struct Row {
  const char* region;
  const char* name;
  double grams_per_kwh;
};

constexpr Row kRows[] = {
      {"WORLD", "World", 481},
      {"AR", "Argentina", 354},
      {"AT", "Austria", 111},
      {"AU", "Australia", 549},
      {"BE", "Belgium", 138},
      {"BG", "Bulgaria", 335},
      {"BR", "Brazil", 98},
      {"CA", "Canada", 170},
      {"CH", "Switzerland", 35},
      {"CL", "Chile", 291},
      {"CN", "China", 582},
      {"CO", "Colombia", 260},
      {"CZ", "Czechia", 450},
      {"DE", "Germany", 381},
      {"DK", "Denmark", 152},
      {"EE", "Estonia", 417},
      {"EG", "Egypt", 570},
      {"ES", "Spain", 174},
      {"FI", "Finland", 79},
      {"FR", "France", 56},
      {"GB", "United Kingdom", 238},
      {"GR", "Greece", 337},
      {"HR", "Croatia", 205},
      {"HU", "Hungary", 204},
      {"IE", "Ireland", 291},
      {"IN", "India", 713},
      {"IT", "Italy", 331},
      {"JP", "Japan", 485},
      {"KR", "South Korea", 431},
      {"LT", "Lithuania", 160},
      {"LU", "Luxembourg", 105},
      {"LV", "Latvia", 123},
      {"MX", "Mexico", 507},
      {"NL", "Netherlands", 268},
      {"NO", "Norway", 30},
      {"NZ", "New Zealand", 113},
      {"PH", "Philippines", 611},
      {"PK", "Pakistan", 441},
      {"PL", "Poland", 662},
      {"PT", "Portugal", 166},
      {"RO", "Romania", 241},
      {"RU", "Russia", 441},
      {"SE", "Sweden", 41},
      {"SG", "Singapore", 471},
      {"SI", "Slovenia", 231},
      {"SK", "Slovakia", 117},
      {"TH", "Thailand", 550},
      {"TR", "Turkey", 465},
      {"TW", "Taiwan", 642},
      {"US", "United States", 369},
      {"VN", "Vietnam", 475},
      {"ZA", "South Africa", 708},
};

std::string upper(std::string_view text) {
  std::string out(text);
  for (char& c : out) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  return out;
}

std::string known_regions() {
  std::string out;
  for (const GridIntensity& row : grid_intensity_table()) {
    if (!out.empty()) out += ", ";
    out += row.region;
  }
  return out;
}

}  // namespace

const std::vector<GridIntensity>& grid_intensity_table() {
  static const std::vector<GridIntensity> table = [] {
    std::vector<GridIntensity> rows;
    for (const Row& row : kRows) rows.push_back({row.region, row.name, row.grams_per_kwh, kTableSource});
    return rows;
  }();
  return table;
}

const GridIntensity* find_grid_intensity(std::string_view region) {
  const std::string code = upper(region);
  for (const GridIntensity& row : grid_intensity_table())
    if (row.region == code) return &row;
  return nullptr;
}

CarbonEstimate estimate_carbon(const SystemProfile& system, const CarbonOptions& options) {
  if (!(options.pue >= 1.0) || !std::isfinite(options.pue))
    throw Error(fmt::format("the PUE (power usage effectiveness) must be 1 or more, not {}: it is the data centre's "
                            "total power over its IT equipment's power (1.0 when the overhead is unknown)",
                            options.pue));
  if (!(options.grams_per_kwh >= 0.0) || !std::isfinite(options.grams_per_kwh))
    throw Error(fmt::format("the grid's carbon intensity must be 0 or more g CO2e/kWh, not {}", options.grams_per_kwh));

  CarbonEstimate estimate;
  estimate.pue = options.pue;
  std::string region = options.region;
  if (region.empty()) {
    const char* variable = std::getenv(kCarbonRegionVariable);
    if (variable != nullptr) region = variable;
  }
  if (options.grams_per_kwh > 0.0) {
    // An intensity the user gives (a provider's figure for its data centre) wins over the table.
    estimate.intensity.region = region.empty() ? std::string("custom") : upper(region);
    const GridIntensity* row = region.empty() ? nullptr : find_grid_intensity(region);
    estimate.intensity.name = row != nullptr ? row->name : "given intensity";
    estimate.intensity.grams_per_kwh = options.grams_per_kwh;
    estimate.intensity.source = options.source.empty() ? std::string("given by the user") : options.source;
  } else if (region.empty()) {
    estimate.intensity = *find_grid_intensity("WORLD");
    estimate.defaulted_region = true;
  } else {
    const GridIntensity* row = find_grid_intensity(region);
    if (row == nullptr)
      throw Error(fmt::format("no grid carbon intensity for region '{}': give an ISO 3166 country code or WORLD "
                              "({}; the table and its source are in docs/SYSTEM.md and nnprof::grid_intensities()), "
                              "or give the intensity itself",
                              region, known_regions()));
    estimate.intensity = *row;
  }

  double low = 0.0;
  double high = 0.0;
  for (const EnergyDomain& domain : system.energy) {
    if (!counts_towards_total(domain)) continue;
    estimate.energy_joules += domain.joules;
    if (domain.method != EnergyMethod::Modelled) estimate.measured_joules += domain.joules;
    const double u = std::max(0.0, domain.uncertainty);
    low += domain.joules * std::max(0.0, 1.0 - u);
    high += domain.joules * (1.0 + u);
  }
  // g = kWh × PUE × g/kWh, one kWh being 3.6e6 J.
  const double grams_per_joule = options.pue * estimate.intensity.grams_per_kwh / 3.6e6;
  estimate.grams_co2 = estimate.energy_joules * grams_per_joule;
  estimate.grams_low = low * grams_per_joule;
  estimate.grams_high = high * grams_per_joule;
  return estimate;
}

}  // namespace nnprof::analysis
