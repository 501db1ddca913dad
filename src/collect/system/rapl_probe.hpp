// CPU package and DRAM energy from the RAPL counters Linux exposes through powercap
// (<sys_root>/class/powercap). The intel_rapl driver names them intel-rapl:<N> on Intel and on
// AMD Zen alike (AMD's counters are served by the same driver; there is no "amd-rapl" zone;
// the older amd_energy driver was hwmon, not powercap, and is not read).
//
// Which zones become energy domains, and why:
//   intel-rapl:<N>      named "package-<N>"  -> domain "package-<N>", kind "cpu"
//                       named "dram"         -> domain "dram-<N>",    kind "dram" (some servers
//                                               put DRAM at the top level)
//                       named "psys"         -> domain "psys",        kind "psys"
//   intel-rapl:<N>:<M>  named "dram"         -> domain "dram-<N>",    kind "dram"
//                       named "core"/"uncore" : not a domain. They are parts of their package,
//                                               whose counter already includes them; adding
//                                               them would count that energy twice.
//   intel-rapl-mmio:<N> : not read. The same package counter reached through MMIO on recent
//                         Intel parts; reading both would count the package twice.
// psys (the platform: package, DRAM, chipset and more, on client parts since Skylake) overlaps
// every other domain: it is recorded for what it says about the whole machine, with a note,
// and sums of energy (carbon) leave kind "psys" out.
//
// Each tick reads energy_uj; a counter lower than before has wrapped at max_energy_range_uj
// (the delta is then max - previous + current). A domain's power track is
// energy.<domain>.power, the mean power over the interval ending at that sample.
//
// Unreadable counters are said once: since Linux 5.10 energy_uj is readable by root only
// (CVE-2020-8694, the PLATYPUS power side channel), and VMs and most containers have no
// powercap at all; in both cases the CPU energy is modelled (collect/system/energy_model.hpp).
#pragma once

#include <memory>

#include "collect/system/probe.hpp"
#include "nnprof/system.hpp"

namespace nnprof::detail::system {

/// A probe of the RAPL zones under options.sys_root; one that only notes why when there are
/// none or they cannot be read.
std::unique_ptr<Probe> make_rapl_probe(const SystemOptions& options);

}  // namespace nnprof::detail::system
