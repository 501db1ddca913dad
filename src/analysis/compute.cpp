#include "analysis/compute.hpp"

#include <algorithm>
#include <unordered_map>

namespace nnprof::analysis {

bool machine_known(const Profile& profile) {
  const MachinePeaks& m = profile.machine;
  return m.fp32_flops_one_core > 0.0 && m.bandwidth_one_core > 0.0 && m.fp32_flops > 0.0 && m.bandwidth > 0.0;
}

std::vector<ScopeCompute> compute_scopes(const Profile& profile) {
  std::vector<ScopeCompute> out;
  const bool peaks = machine_known(profile);
  std::unordered_map<StringId, double> own;  // FLOPs declared at the nodes of each name
  for (const CallTreeNode& n : profile.call_tree)
    if (n.flops > 0.0) own[n.name] += n.flops;
  for (const ScopeStats& s : profile.scopes) {  // longest first already
    if (!(s.flops > 0.0) && s.bytes == 0) continue;
    ScopeCompute c;
    c.scope = &s;
    c.flops_per_second = s.flops_per_second();
    c.bytes_per_second = s.bytes_per_second();
    c.intensity = s.arithmetic_intensity();
    if (s.flops > 0.0) {
      const auto it = own.find(s.name);
      c.own_flops_share = it == own.end() ? 0.0 : std::min(1.0, it->second / s.flops);
    }
    if (peaks && s.flops > 0.0 && s.bytes > 0 && s.total_ns > 0) {
      const double seconds = static_cast<double>(s.total_ns) * 1e-9;
      const double bytes = static_cast<double>(s.bytes);
      RooflinePoint p = roofline_point(s.flops, bytes, seconds, profile.machine, Precision::Fp32, true);
      // Faster than one core can go: the scope parallelised itself, so the machine's roof applies.
      if (p.attained > p.attainable * 1.05) {
        p = roofline_point(s.flops, bytes, seconds, profile.machine, Precision::Fp32, false);
        c.one_core = false;
      }
      c.roofline = p;
    }
    out.push_back(c);
  }
  return out;
}

WorkTotal work_total(const Profile& profile) {
  WorkTotal t;
  for (const CallTreeNode& n : profile.call_tree) {
    t.flops += n.flops;
    t.bytes += n.bytes;
  }
  return t;
}

Sentence compute_note(const Profile& profile, const std::vector<ScopeCompute>& scopes) {
  Sentence s;
  s.words("FLOP/s and bytes/s are the declared work over the scope's inclusive time, summed over threads (a rate "
          "per thread of execution); arithmetic intensity is FLOPs per byte moved.");
  if (!machine_known(profile)) return s;
  s.words(" Each scope is placed against the fp32 roofs of one core, or of the whole machine when it ran faster "
          "than one core can: memory-bound below the ridge point, compute-bound above it.");
  if (std::any_of(scopes.begin(), scopes.end(), [](const ScopeCompute& c) { return c.roofline && c.roofline->fraction > 1.0; }))
    s.words(" Above 100% of the roof, the scope's data came from cache: the memory roof is main memory's bandwidth, "
            "measured with arrays larger than the caches.");
  return s;
}

Sentence no_machine_hint() {
  return Sentence()
      .words("The peaks of the machine are not known, so no scope is placed on a roofline: run ")
      .code("nnprof machine")
      .words(" once on the machine that records (it caches them), then record again.");
}

Sentence machine_roofs(const MachinePeaks& peaks) {
  return Sentence()
      .words("Roofs of this machine (")
      .words(peaks.isa.empty() ? "unknown ISA" : peaks.isa)
      .words("): one core ")
      .si(peaks.fp32_flops_one_core, "FLOP/s")
      .words(" fp32 and ")
      .si(peaks.bandwidth_one_core, "B/s")
      .words(" (ridge at ")
      .ratio(peaks.ridge_point(Precision::Fp32, true), "FLOP/byte")
      .words("); all ")
      .count(peaks.threads, "thread", "threads")
      .words(" ")
      .si(peaks.fp32_flops, "FLOP/s")
      .words(" fp32, ")
      .si(peaks.fp64_flops, "FLOP/s")
      .words(" fp64 and ")
      .si(peaks.bandwidth, "B/s")
      .words(" (ridge at ")
      .ratio(peaks.ridge_point(Precision::Fp32, false), "FLOP/byte")
      .words(").");
}

}  // namespace nnprof::analysis
