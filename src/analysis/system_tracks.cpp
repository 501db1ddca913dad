#include "analysis/system_tracks.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

#include "analysis/energy.hpp"

namespace nnprof::analysis {

std::vector<TrackSummary> summarize_tracks(const SystemProfile& system) {
  std::vector<TrackSummary> out;
  out.reserve(system.tracks.size());
  std::vector<double> read;
  for (const SystemTrack& track : system.tracks) {
    TrackSummary s;
    s.name = track.name;
    s.unit = track.unit;
    read.clear();
    for (const double v : track.values)
      if (std::isfinite(v)) read.push_back(v);
    s.samples = read.size();
    if (read.empty()) {
      s.min = s.mean = s.p95 = s.max = s.last = std::numeric_limits<double>::quiet_NaN();
      out.push_back(std::move(s));
      continue;
    }
    s.last = read.back();
    double sum = 0.0;
    for (const double v : read) sum += v;
    s.mean = sum / static_cast<double>(read.size());
    std::ranges::sort(read);
    s.min = read.front();
    s.max = read.back();
    // Nearest rank: the smallest value with at least 95 % of the values at or below it.
    const auto rank = static_cast<std::size_t>(std::ceil(0.95 * static_cast<double>(read.size())));
    s.p95 = read[std::max<std::size_t>(rank, 1) - 1];
    out.push_back(std::move(s));
  }
  return out;
}

double monitored_seconds(const SystemProfile& system) noexcept {
  if (system.sample_ns.size() < 2) return 0.0;
  return static_cast<double>(system.sample_ns.back() - system.sample_ns.front()) * 1e-9;
}

std::vector<DomainSummary> summarize_domains(const SystemProfile& system) {
  std::vector<DomainSummary> out;
  const double seconds = monitored_seconds(system);
  for (const EnergyDomain& domain : system.energy) {
    DomainSummary s;
    s.domain = &domain;
    s.mean_watts = seconds > 0.0 ? domain.joules / seconds : 0.0;
    s.counted = counts_towards_total(domain);
    s.measured = domain.method != EnergyMethod::Modelled;
    out.push_back(s);
  }
  return out;
}

}  // namespace nnprof::analysis
