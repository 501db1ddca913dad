// Energy per scope and per step: the power tracks of the system monitor (energy.<domain>.power,
// the mean watts over the interval ending at each sample) cut at the boundaries of the scopes'
// spans, so that "joules per training step" is an integral, not a guess from averages.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "nnprof/profile.hpp"

namespace nnprof::analysis {

/// Whether `domain` counts towards the energy of the run: every domain but psys (the whole
/// platform, which contains the package and DRAM domains and would count them twice).
[[nodiscard]] bool counts_towards_total(const EnergyDomain& domain) noexcept;

/// How energy was given to scopes.
enum class EnergyBasis : std::uint8_t {
  None,     ///< no energy domain with a power track, or no scopes: nothing attributed
  Spans,    ///< each span's [start, end] cut out of the power timeline: inclusive energy
  Samples,  ///< no spans kept (a statistics-only profile): each sample's interval went to the
            ///< innermost scope open at that sample (SystemProfile::sample_scope): self energy
};

/// The energy used while scopes of one name were open on the scope thread.
struct ScopeEnergy {
  StringId name = kNone;
  double joules = 0.0;       ///< every domain but psys; nested spans of the same name counted once
  double share = 0.0;        ///< of EnergyAttribution::total_joules; 0 when that is 0
  double seconds = 0.0;      ///< time the joules were spent over (spans, or sample intervals)
  double mean_watts = 0.0;   ///< joules / seconds; 0 when seconds is 0
  bool measured = true;      ///< every domain that contributed is measured (rapl, nvml_*): else it includes modelled energy

  bool operator==(const ScopeEnergy&) const = default;
};

/// The energy of a step: a scope for which the program reported work items (the scopes the
/// throughput section lists), per call and per item.
struct StepEnergy {
  StringId name = kNone;
  std::uint64_t calls = 0;        ///< ScopeStats::time.count
  std::uint64_t items = 0;        ///< ScopeStats::items
  double joules = 0.0;            ///< over every call (ScopeEnergy::joules)
  double joules_per_call = 0.0;   ///< joules / calls
  double joules_per_item = 0.0;   ///< joules / items
  bool measured = true;

  bool operator==(const StepEnergy&) const = default;
};

/// Energy per scope name and per step.
struct EnergyAttribution {
  EnergyBasis basis = EnergyBasis::None;
  std::uint32_t thread = kNone;   ///< the Profile::threads index whose scopes got the energy
  double total_joules = 0.0;      ///< the power tracks integrated over the whole monitored time
  double attributed_joules = 0.0; ///< of which while some scope was open (top-level spans; basis Samples: any scope)
  bool total_measured = true;     ///< no domain counted is modelled
  /// Domains whose power track is missing: their energy could not be attributed (names).
  std::vector<std::string> domains_without_track;
  std::vector<ScopeEnergy> scopes;  ///< most joules first, equal ones by name id
  std::vector<StepEnergy> steps;    ///< in the profile's scope order (longest total time first)

  bool operator==(const EnergyAttribution&) const = default;
};

/// The energy of `profile`'s system monitor per scope of its scope thread (SystemProfile::
/// scope_thread; the first thread when none was named) and per step. Power over (t[i-1], t[i]]
/// is the value of the track at sample i; a NaN value contributes nothing, and there is no
/// power before the first sample or after the last.
[[nodiscard]] EnergyAttribution attribute_energy(const Profile& profile);

/// The energy of each call of the scope `name` on the scope thread (its top-most spans, in
/// time order), every counted domain summed: what `nnprof compare` tests energy per step on.
/// Empty without spans or power tracks.
[[nodiscard]] std::vector<double> call_joules(const Profile& profile, StringId name);

/// The energy of the step that stands for the whole run: the first scope in the profile's order
/// (longest total time) that reported work items; nullptr when none did.
[[nodiscard]] const StepEnergy* main_step(const EnergyAttribution& energy) noexcept;

}  // namespace nnprof::analysis
