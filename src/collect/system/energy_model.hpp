// The energy model used where nothing measured it: CPU package power from the host's CPU
// utilisation and a TDP, memory power from the process's resident memory. Every figure it
// adds says so (EnergyMethod::Modelled, a wide uncertainty, a note with its inputs).
//
// CPU: "cpu (modelled)", kind "cpu", track energy.cpu-modelled.power. Over each interval
//   P = idle + (TDP - idle) × u,  idle = 20 % of TDP,  u = system.cpu.busy / 100
// The utilisation is the host's, not the process's: the model stands in for RAPL's package
// counter, which measures the whole package whoever runs on it, so that a modelled and a
// measured run report the same quantity. A process sharing the machine therefore sees the
// others' work in this figure too; the note says so.
// TDP: SystemOptions::cpu_tdp_watts (--tdp) when given, else 6 W per logical CPU of the host.
// Memory: "memory (modelled)", kind "dram", track energy.memory-modelled.power:
//   P = 0.3725 W per GB (10^9 bytes) × process.memory.rss
// Unlike the CPU model this is the process's share (its resident memory), as the Green
// Algorithms calculator counts the memory a job uses; RAPL's DRAM counter, where it exists,
// measures every DIMM instead.
// The sources of the figures are with the constants in energy_model.cpp.
#pragma once

#include "nnprof/system.hpp"
#include "nnprof/system_profile.hpp"

namespace nnprof::detail::system {

/// Appends the modelled CPU domain unless `profile` has a measured one of kind "cpu" (a RAPL
/// package), and the modelled memory domain unless it has a measured one of kind "dram"; each
/// with its power track, inserted in name order. What cannot be modelled is said in
/// profile.notes. Calling it again on its own result changes nothing (the modelled domains are
/// already there), so it may run on every snapshot copy.
void add_modelled_energy(SystemProfile& profile, const SystemOptions& options);

}  // namespace nnprof::detail::system
