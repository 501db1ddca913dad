#include "analysis/system_tracks.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <string_view>

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

namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

// The seconds of sample i's interval (t[i-1], t[i]] inside [begin, end]; 0 for the first sample.
double overlap_seconds(const std::vector<std::uint64_t>& t, std::size_t i, std::uint64_t begin, std::uint64_t end) {
  if (i == 0) return 0.0;
  const std::uint64_t lo = std::max(t[i - 1], begin), hi = std::min(t[i], end);
  return hi > lo ? static_cast<double>(hi - lo) / 1e9 : 0.0;
}

// Sum of value x overlap over the window of the tracks `pick` accepts: a rate in bytes/s gives
// bytes, a power in W gives J. NaN when no accepted track had a value in the window.
template <class Pick>
double integrated(const SystemProfile& s, const std::vector<double>& weights, Pick pick) {
  double total = 0.0;
  bool any = false;
  for (const SystemTrack& track : s.tracks) {
    if (!pick(track.name)) continue;
    for (std::size_t i = 0; i < weights.size() && i < track.values.size(); ++i)
      if (weights[i] > 0.0 && !std::isnan(track.values[i])) {
        total += track.values[i] * weights[i];
        any = true;
      }
  }
  return any ? total : kNaN;
}

// The overlap-weighted mean of one track; NaN without a value in the window.
double weighted_mean(const std::vector<double>& values, const std::vector<double>& weights) {
  double sum = 0.0, weight = 0.0;
  for (std::size_t i = 0; i < weights.size() && i < values.size(); ++i)
    if (weights[i] > 0.0 && !std::isnan(values[i])) {
      sum += values[i] * weights[i];
      weight += weights[i];
    }
  return weight > 0.0 ? sum / weight : kNaN;
}

}  // namespace

WindowSystem system_between(const SystemProfile& s, std::uint64_t begin_ns, std::uint64_t end_ns) {
  WindowSystem w;
  RegionSystem& r = w.figures;
  std::vector<double> weights(s.sample_ns.size(), 0.0);
  for (std::size_t i = 0; i < weights.size(); ++i) {
    weights[i] = overlap_seconds(s.sample_ns, i, begin_ns, end_ns);
    if (weights[i] > 0.0) ++r.samples;
  }
  const SystemTrack* user = s.track("process.cpu.user");
  const SystemTrack* sys = s.track("process.cpu.system");
  if (user != nullptr && sys != nullptr && user->values.size() == sys->values.size()) {
    std::vector<double> both(user->values.size());
    for (std::size_t i = 0; i < both.size(); ++i) both[i] = user->values[i] + sys->values[i];
    r.process_cpu_percent = weighted_mean(both, weights);
  } else {
    r.process_cpu_percent = kNaN;
  }
  const SystemTrack* host = s.track("system.cpu.busy");
  r.host_cpu_percent = host != nullptr ? weighted_mean(host->values, weights) : kNaN;
  // Memory: the peak of the samples in the window, of the container's limit when it has one.
  const SystemTrack* memory = s.track("cgroup.memory.used");
  if (memory == nullptr) memory = s.track("system.memory.used");
  r.memory_percent = kNaN;
  if (memory != nullptr)
    for (std::size_t i = 0; i < weights.size() && i < memory->values.size(); ++i)
      if (weights[i] > 0.0 && !std::isnan(memory->values[i]) &&
          (std::isnan(r.memory_percent) || memory->values[i] > r.memory_percent))
        r.memory_percent = memory->values[i];
  const auto starts_ends = [](std::string_view prefix, std::string_view suffix) {
    return [prefix, suffix](std::string_view name) { return name.starts_with(prefix) && name.ends_with(suffix); };
  };
  r.disk_read_bytes = integrated(s, weights, starts_ends("disk.", ".read_bytes"));
  r.disk_write_bytes = integrated(s, weights, starts_ends("disk.", ".write_bytes"));
  r.network_bytes = integrated(s, weights, [](std::string_view name) {
    return name.starts_with("net.") && !name.starts_with("net.lo.") &&
           (name.ends_with(".rx_bytes") || name.ends_with(".tx_bytes"));
  });
  // GPUs: each one's mean utilisation over the window, averaged over the GPUs read.
  double gpu_sum = 0.0;
  int gpus = 0;
  for (const SystemTrack& t : s.tracks)
    if (t.name.starts_with("gpu") && t.name.ends_with(".utilization") && !t.name.ends_with("memory_utilization"))
      if (const double m = weighted_mean(t.values, weights); !std::isnan(m)) {
        gpu_sum += m;
        ++gpus;
      }
  r.gpu_utilization_percent = gpus > 0 ? gpu_sum / gpus : kNaN;
  // Energy: each domain's power track integrated over the window.
  r.energy_measured = true;
  bool any_energy = false;
  for (const EnergyDomain& d : s.energy) {
    EnergyDomain part = d;
    part.joules = 0.0;
    const double joules = integrated(s, weights, [&d](std::string_view name) { return name == d.track; });
    if (!std::isnan(joules)) part.joules = joules;
    if (counts_towards_total(d) && !std::isnan(joules)) {
      r.energy_joules += joules;
      r.energy_measured = r.energy_measured && d.method != EnergyMethod::Modelled;
      any_energy = true;
    }
    w.domains.push_back(std::move(part));
  }
  if (!any_energy) {
    r.energy_joules = kNaN;
    r.energy_measured = false;
  }
  return w;
}

}  // namespace nnprof::analysis
