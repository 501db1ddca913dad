// What a profile merged from the ranks of a distributed job (`nnprof merge rank*.nnprof -o
// job.nnprof`) says about the job: step times per rank, who waited for whom at each collective,
// stragglers, how much communication overlapped computation, and the critical path of a step
// across ranks. Every function here is a pure function of a Profile whose `ranks` has one entry
// per rank and whose collectives carry nnprof::collective_arg span arguments.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "nnprof/config.hpp"
#include "nnprof/profile.hpp"

namespace nnprof {

/// What to analyse as a step.
struct RankAnalysisOptions {
  /// The scope that marks one training step on every rank ("train_step", "ProfilerStep#3" is
  /// matched by its prefix "ProfilerStep"); empty: the scope on every rank that encloses
  /// collectives, repeats on every rank and has the most time (docs/DISTRIBUTED.md).
  std::string step;
};

/// One rank's call of one collective.
struct CollectiveArrival {
  std::uint32_t rank = 0;        ///< index into Profile::ranks
  std::uint32_t span = kNone;    ///< the collective's span (Profile::spans)
  std::uint64_t arrival_ns = 0;  ///< when the rank entered the collective (its span's start)
  /// When it left: a blocking collective's span end; a nonblocking one's completion (the end of
  /// its I-call's span when no wait or test was seen completing it).
  std::uint64_t end_ns = 0;
  /// The last arrival minus this one: time spent waiting for the others. For a nonblocking
  /// collective only the time the rank was blocked in the wait and test calls that completed
  /// it, within [its arrival, the last arrival] (docs/DISTRIBUTED.md).
  std::uint64_t wait_ns = 0;
  bool nonblocking = false;      ///< started by a nonblocking call (collective_arg::kNonblocking)
  /// Time inside the calls that kept the rank in the collective: a blocking one's whole span; a
  /// nonblocking one's collective_arg::kBlocked (0 when its completion was not seen).
  std::uint64_t blocked_ns = 0;

  bool operator==(const CollectiveArrival&) const = default;
};

/// One collective operation matched across ranks by (group, seq).
struct CollectiveCall {
  std::string operation;  ///< "allreduce", "broadcast", "barrier", ...
  std::string group;
  std::int64_t seq = 0;
  std::uint64_t bytes = 0;        ///< the largest bytes any member gave
  std::uint32_t group_size = 0;   ///< members the spans say the group has (0: not given)
  std::vector<CollectiveArrival> arrivals;  ///< one per rank that took part, by rank
  std::uint32_t last_rank = kNone;  ///< the rank that arrived last: whom the others waited for
  std::uint64_t first_arrival_ns = 0;
  std::uint64_t last_arrival_ns = 0;
  bool nonblocking = false;  ///< some member started it with a nonblocking call

  /// How long the first member waited for the last one.
  [[nodiscard]] std::uint64_t spread_ns() const noexcept { return last_arrival_ns - first_arrival_ns; }
  bool operator==(const CollectiveCall&) const = default;
};

/// One step on one rank.
struct RankStep {
  std::uint64_t start_ns = 0;
  std::uint64_t end_ns = 0;
  std::uint64_t wait_ns = 0;  ///< waiting at collectives that began in the step
  /// Time not spent waiting: the step's duration minus wait_ns. What a rank's own work cost.
  [[nodiscard]] std::uint64_t busy_ns() const noexcept { return end_ns - start_ns - wait_ns; }
  [[nodiscard]] std::uint64_t duration_ns() const noexcept { return end_ns - start_ns; }
  bool operator==(const RankStep&) const = default;
};

/// One rank's figures.
struct RankSummary {
  std::uint32_t rank = 0;  ///< index into Profile::ranks
  std::vector<RankStep> steps;  ///< in time order
  std::uint64_t mean_step_ns = 0;
  std::uint64_t best_step_ns = 0;
  std::uint64_t worst_step_ns = 0;
  std::uint64_t mean_busy_ns = 0;   ///< mean of the steps' busy time
  std::uint64_t best_busy_ns = 0;
  std::uint64_t wait_ns = 0;        ///< waiting at every collective
  std::uint64_t caused_wait_ns = 0; ///< the other ranks' waiting at collectives where this rank arrived last
  /// Time in collectives (their union over the rank's threads): blocking ones' spans, and
  /// nonblocking ones from their call to their completion (in flight).
  std::uint64_t communication_ns = 0;
  /// Time in scopes that hold no collective, nor a wait or test that completed one (their union).
  std::uint64_t computation_ns = 0;
  std::uint64_t overlap_ns = 0;        ///< communication that ran while computation did
  /// Mean busy time over the fastest rank's, minus 1: 0.25 is 25% more own work per step than
  /// the fastest rank. The rank that is highest here and that others wait for is the straggler.
  double straggler_vs_fastest = 0.0;
  /// Mean busy time over this rank's own best step's, minus 1: a rank that is slow only
  /// sometimes (a noisy neighbour, a GC pause) rather than always.
  double straggler_vs_own_best = 0.0;
  bool operator==(const RankSummary&) const = default;
};

/// Time one rank waited for another at one kind of collective, summed over its calls.
struct RankWait {
  std::uint32_t waiter = 0;      ///< index into Profile::ranks
  std::uint32_t waited_for = 0;  ///< the rank that arrived last
  std::string operation;
  std::string group;
  std::uint64_t calls = 0;
  std::uint64_t total_ns = 0;
  std::uint64_t max_ns = 0;
  bool operator==(const RankWait&) const = default;
};

enum class RankPathKind : std::uint8_t {
  Compute,     ///< a rank's own work between two collectives
  Collective,  ///< inside a collective, from the last member's arrival to this rank's exit
};

/// One stretch of the cross-rank critical path.
struct RankPathSegment {
  RankPathKind kind = RankPathKind::Compute;
  std::uint32_t rank = 0;             ///< index into Profile::ranks
  std::uint64_t start_ns = 0;
  std::uint64_t end_ns = 0;
  StringId name = kNone;              ///< Compute: the scope under the step that covers most of it; Collective: its scope
  std::uint32_t collective = kNone;   ///< Collective: index into RankAnalysis::collectives
  [[nodiscard]] std::uint64_t duration_ns() const noexcept { return end_ns - start_ns; }
  bool operator==(const RankPathSegment&) const = default;
};

/// The chain of work across ranks that decided when one step ended: walked back from the rank
/// whose step ended last; at a collective, the path continues on the rank that arrived last
/// (the collective could not end before it), so other ranks' waiting is never on it. The
/// segments cover [start_ns, end_ns] without gaps, in time order.
struct RankCriticalPath {
  std::uint32_t step = 0;  ///< the step's index (the same on every rank)
  std::uint64_t start_ns = 0;
  std::uint64_t end_ns = 0;
  std::vector<RankPathSegment> segments;
  std::uint64_t compute_ns = 0;
  std::uint64_t collective_ns = 0;
  [[nodiscard]] std::uint64_t duration_ns() const noexcept { return end_ns - start_ns; }
  [[nodiscard]] bool empty() const noexcept { return segments.empty(); }
  bool operator==(const RankCriticalPath&) const = default;
};

/// Everything nnprof says about the ranks of a merged profile.
struct RankAnalysis {
  StringId step_name = kNone;   ///< the step scope used; kNone: none found, each rank's whole run is one step
  std::vector<RankSummary> ranks;           ///< one per Profile::ranks entry, in its order
  std::vector<CollectiveCall> collectives;  ///< matched by (group, seq), in order of first arrival
  std::vector<RankWait> waits;              ///< most total time first
  std::uint32_t straggler = kNone;          ///< the rank named straggler (index into Profile::ranks); kNone: none
  std::uint32_t steps = 0;                  ///< steps every rank has (the shortest count)
  std::uint32_t slowest_step = 0;           ///< the step whose last end came latest after its first start
  RankCriticalPath critical_path;           ///< of slowest_step
  double clock_residual_ns = 0.0;           ///< the largest ClockAlignment::residual_ns of the ranks
  std::uint64_t median_spread_ns = 0;       ///< of the collectives' arrival spreads
  std::uint64_t incomplete_collectives = 0; ///< seen on fewer ranks than their group has
  bool operator==(const RankAnalysis&) const = default;
};

/// How `nnprof merge` joins the ranks' profiles of one job.
struct RankMergeOptions {
  /// Merge although some ranks of the job have no profile among the inputs (they are named in
  /// RankMergeResult::missing_ranks); otherwise that is refused.
  bool allow_missing_ranks = false;
  /// Merge although the clocks' residual error exceeds every wait at a collective that the
  /// analysis would judge; otherwise that is refused.
  bool allow_clock_residual = false;
};

/// What a rank merge did.
struct RankMergeResult {
  std::uint32_t world_size = 0;
  std::uint32_t ranks_merged = 0;
  std::vector<std::int32_t> missing_ranks;
  std::uint64_t spans = 0;
  std::uint64_t span_args = 0;
  std::uint64_t input_bytes = 0;   ///< of the input files
  std::uint64_t collectives = 0;   ///< collective calls matched by (group, seq)
  double clock_residual_ns = 0.0;  ///< the largest residual of the ranks' clock alignments
  std::uint64_t median_spread_ns = 0;  ///< of the collectives' arrival spreads: the waits judged
  std::uint64_t max_spread_ns = 0;
  std::vector<std::string> warnings;   ///< what the merge could not vouch for, as sentences
};

/// Merges the profiles of the ranks of one job (each with one Profile::ranks entry, the same
/// world size, distinct ranks) into one .nnprof at `output`: a thread per rank's thread with
/// ThreadInfo::rank set, every time mapped onto rank 0's clock by the rank's ClockAlignment,
/// strings re-interned, call trees merged by path. It reads one rank at a time, its spans one
/// by one from the file, and writes each as it reads it, so memory grows with neither the
/// number of ranks nor how long a rank ran (one rank's profile less its spans). Throws
/// nnprof::Error, writing nothing, on inputs that are not ranks of one job, a duplicate rank, a
/// missing rank (unless allowed) or a clock residual larger than every wait it would judge
/// (unless allowed).
NNPROF_API RankMergeResult merge_rank_profiles(const std::vector<std::string>& inputs, const std::string& output,
                                               const RankMergeOptions& options = {});

/// Analyses a merged profile (Profile::ranks with two or more entries). Throws nnprof::Error
/// when the profile holds no ranks, or when `options.step` names no scope.
NNPROF_API RankAnalysis analyze_ranks(const Profile& profile, const RankAnalysisOptions& options = {});

/// The critical path of step `step` across ranks, as RankAnalysis::critical_path is for the
/// slowest one. Throws nnprof::Error when `step` is not below analysis.steps.
NNPROF_API RankCriticalPath rank_critical_path(const Profile& profile, const RankAnalysis& analysis,
                                               std::uint32_t step);

/// "compute" or "collective".
NNPROF_API const char* to_string(RankPathKind kind) noexcept;

}  // namespace nnprof
