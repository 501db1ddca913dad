// The ranks of a distributed job from Python: Profile.ranks (who recorded each part, and how
// its clock was aligned), nnprof.merge_ranks (the `nnprof merge rank*.nnprof -o job.nnprof`
// of the CLI) and Profile.analyze_ranks / Profile.rank_critical_path (nnprof/distributed_analysis.hpp).
// Ranks are given by their number in the job (RankInfo::rank), never by an index into a list.
#include <memory>
#include <string>
#include <vector>

#include <pybind11/stl.h>

#include "bindings.hpp"
#include "nnprof/distributed.hpp"
#include "nnprof/distributed_analysis.hpp"
#include "nnprof/profile.hpp"

namespace py = pybind11;

namespace nnprof::python {
namespace {

using ProfilePtr = std::shared_ptr<Profile>;

py::dict clock_dict(const ClockAlignment& c) {
  py::dict d;
  d["aligned"] = c.aligned;
  d["method"] = c.method;
  d["reference_ns"] = c.reference_ns;
  d["offset_ns"] = c.offset_ns;
  d["drift_ppb"] = c.drift_ppb;
  d["residual_ns"] = c.residual_ns;
  d["exchanges"] = c.exchanges;
  return d;
}

py::dict rank_dict(const RankInfo& r) {
  py::dict d;
  d["rank"] = r.rank;
  d["world_size"] = r.world_size;
  d["local_rank"] = r.local_rank < 0 ? py::object(py::none()) : py::object(py::int_(r.local_rank));
  d["launcher"] = r.launcher;
  d["hostname"] = r.hostname;
  d["pid"] = r.pid;
  d["clock"] = clock_dict(r.clock);
  return d;
}

/// The job's rank number of Profile::ranks[index]; None for kNone.
py::object rank_number(const Profile& p, std::uint32_t index) {
  if (index == kNone || index >= p.ranks.size()) return py::none();
  return py::int_(p.ranks[index].rank);
}

py::object name_of(const Profile& p, StringId id) {
  if (id == kNone || id >= p.strings.size()) return py::none();
  return py::str(p.strings[id]);
}

py::dict critical_path_dict(const Profile& p, const RankCriticalPath& path) {
  py::dict d;
  d["step"] = path.step;
  d["start_ns"] = path.start_ns;
  d["end_ns"] = path.end_ns;
  d["duration_ns"] = path.duration_ns();
  d["compute_ns"] = path.compute_ns;
  d["collective_ns"] = path.collective_ns;
  py::list segments;
  for (const RankPathSegment& s : path.segments) {
    py::dict seg;
    seg["kind"] = to_string(s.kind);
    seg["rank"] = rank_number(p, s.rank);
    seg["start_ns"] = s.start_ns;
    seg["end_ns"] = s.end_ns;
    seg["duration_ns"] = s.duration_ns();
    seg["name"] = name_of(p, s.name);
    seg["collective"] = s.collective == kNone ? py::object(py::none()) : py::object(py::int_(s.collective));
    segments.append(std::move(seg));
  }
  d["segments"] = std::move(segments);
  return d;
}

py::dict analysis_dict(const Profile& p, const RankAnalysis& a) {
  py::dict d;
  d["step"] = name_of(p, a.step_name);
  d["steps"] = a.steps;
  d["straggler"] = rank_number(p, a.straggler);
  d["slowest_step"] = a.slowest_step;
  d["clock_residual_ns"] = a.clock_residual_ns;
  d["median_spread_ns"] = a.median_spread_ns;
  d["incomplete_collectives"] = a.incomplete_collectives;
  py::list ranks;
  for (const RankSummary& r : a.ranks) {
    py::dict s;
    s["rank"] = rank_number(p, r.rank);
    py::list steps;
    for (const RankStep& step : r.steps) {
      py::dict st;
      st["start_ns"] = step.start_ns;
      st["end_ns"] = step.end_ns;
      st["duration_ns"] = step.duration_ns();
      st["wait_ns"] = step.wait_ns;
      st["busy_ns"] = step.busy_ns();
      steps.append(std::move(st));
    }
    s["steps"] = std::move(steps);
    s["mean_step_ns"] = r.mean_step_ns;
    s["best_step_ns"] = r.best_step_ns;
    s["worst_step_ns"] = r.worst_step_ns;
    s["mean_busy_ns"] = r.mean_busy_ns;
    s["best_busy_ns"] = r.best_busy_ns;
    s["wait_ns"] = r.wait_ns;
    s["caused_wait_ns"] = r.caused_wait_ns;
    s["communication_ns"] = r.communication_ns;
    s["computation_ns"] = r.computation_ns;
    s["overlap_ns"] = r.overlap_ns;
    s["straggler_vs_fastest"] = r.straggler_vs_fastest;
    s["straggler_vs_own_best"] = r.straggler_vs_own_best;
    ranks.append(std::move(s));
  }
  d["ranks"] = std::move(ranks);
  py::list collectives;
  for (const CollectiveCall& c : a.collectives) {
    py::dict call;
    call["operation"] = c.operation;
    call["group"] = c.group;
    call["seq"] = c.seq;
    call["bytes"] = c.bytes;
    call["group_size"] = c.group_size;
    call["last_rank"] = rank_number(p, c.last_rank);
    call["first_arrival_ns"] = c.first_arrival_ns;
    call["last_arrival_ns"] = c.last_arrival_ns;
    call["spread_ns"] = c.spread_ns();
    call["nonblocking"] = c.nonblocking;
    py::list arrivals;
    for (const CollectiveArrival& arrival : c.arrivals) {
      py::dict x;
      x["rank"] = rank_number(p, arrival.rank);
      x["arrival_ns"] = arrival.arrival_ns;
      x["end_ns"] = arrival.end_ns;
      x["wait_ns"] = arrival.wait_ns;
      x["nonblocking"] = arrival.nonblocking;
      x["blocked_ns"] = arrival.blocked_ns;
      arrivals.append(std::move(x));
    }
    call["arrivals"] = std::move(arrivals);
    collectives.append(std::move(call));
  }
  d["collectives"] = std::move(collectives);
  py::list waits;
  for (const RankWait& w : a.waits) {
    py::dict x;
    x["waiter"] = rank_number(p, w.waiter);
    x["waited_for"] = rank_number(p, w.waited_for);
    x["operation"] = w.operation;
    x["group"] = w.group;
    x["calls"] = w.calls;
    x["total_ns"] = w.total_ns;
    x["max_ns"] = w.max_ns;
    waits.append(std::move(x));
  }
  d["waits"] = std::move(waits);
  d["critical_path"] = critical_path_dict(p, a.critical_path);
  return d;
}

RankAnalysis analyse(const Profile& p, const std::string& step) {
  RankAnalysisOptions options;
  options.step = step;
  py::gil_scoped_release release;
  return analyze_ranks(p, options);
}

}  // namespace

void bind_distributed(py::module_& m) {
  auto profile = py::reinterpret_borrow<py::class_<Profile, ProfilePtr>>(m.attr("Profile"));
  profile.def_property_readonly(
      "ranks",
      [](const Profile& p) {
        py::list out;
        for (const RankInfo& r : p.ranks) out.append(rank_dict(r));
        return out;
      },
      "The ranks of a distributed job this profile holds: one for a rank's own profile, one per rank for a merge "
      "(nnprof.merge_ranks); empty for a process that was no rank. Each says its launcher, host, pid and how its "
      "clock was aligned to rank 0's.");
  profile.def(
      "analyze_ranks",
      [](const ProfilePtr& p, const std::string& step) { return analysis_dict(*p, analyse(*p, step)); },
      py::arg("step") = "",
      "What a merged profile says about its ranks: step times per rank, stragglers, who waited for whom at each "
      "collective, computation/communication overlap and the critical path of the slowest step across ranks. "
      "`step` names the step scope (empty: found as docs/DISTRIBUTED.md says). Raises nnprof.Error on a profile "
      "without ranks.");
  profile.def(
      "rank_critical_path",
      [](const ProfilePtr& p, std::uint32_t step_index, const std::string& step) {
        const RankAnalysis analysis = analyse(*p, step);
        RankCriticalPath path;
        {
          py::gil_scoped_release release;
          path = rank_critical_path(*p, analysis, step_index);
        }
        return critical_path_dict(*p, path);
      },
      py::arg("index"), py::arg("step") = "",
      "The critical path across ranks of step number `index` (from 0), as analyze_ranks() gives it for the slowest.");

  m.def(
      "merge_ranks",
      [](const std::vector<std::string>& inputs, const std::string& output, bool allow_missing_ranks,
         bool allow_clock_residual) {
        RankMergeOptions options;
        options.allow_missing_ranks = allow_missing_ranks;
        options.allow_clock_residual = allow_clock_residual;
        RankMergeResult r;
        {
          py::gil_scoped_release release;
          r = merge_rank_profiles(inputs, output, options);
        }
        py::dict d;
        d["world_size"] = r.world_size;
        d["ranks_merged"] = r.ranks_merged;
        d["missing_ranks"] = r.missing_ranks;
        d["spans"] = r.spans;
        d["span_args"] = r.span_args;
        d["input_bytes"] = r.input_bytes;
        d["collectives"] = r.collectives;
        d["clock_residual_ns"] = r.clock_residual_ns;
        d["median_spread_ns"] = r.median_spread_ns;
        d["max_spread_ns"] = r.max_spread_ns;
        d["warnings"] = r.warnings;
        return d;
      },
      py::arg("inputs"), py::arg("output"), py::arg("allow_missing_ranks") = false,
      py::arg("allow_clock_residual") = false,
      "Merges the profiles of the ranks of one job into one .nnprof at `output`, every time on rank 0's clock "
      "(the CLI's `nnprof merge rank*.nnprof -o job.nnprof`). Returns what it did, with its warnings; raises "
      "nnprof.Error, writing nothing, on files that are not the ranks of one job, a missing rank (unless allowed) "
      "or clocks too far apart for the waits it would judge (unless allowed).");
}

}  // namespace nnprof::python
