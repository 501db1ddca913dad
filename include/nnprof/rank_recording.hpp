// Recording one rank of a distributed job: which rank this process is (from its launcher's
// environment), where its profile goes (a path pattern with {rank}), and how its clock maps
// onto rank 0's (round trips measured by the MPI interposer or `nnprof record`'s agent).
// What a profile stores is in nnprof/distributed.hpp.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "nnprof/config.hpp"
#include "nnprof/distributed.hpp"

namespace nnprof {

/// The rank a launcher gave this process, and what was wrong with what it said.
struct RankEnvironment {
  std::optional<RankInfo> rank;       ///< nullopt: not a rank (or nothing readable); clock and host not filled
  std::vector<std::string> problems;  ///< one sentence per unreadable or conflicting variable
};

/// Reads the launcher's variables through `lookup` (nullopt: not set): Open MPI's
/// OMPI_COMM_WORLD_{RANK,SIZE,LOCAL_RANK}, PMI_RANK/PMI_SIZE (MPICH, Intel MPI),
/// RANK/WORLD_SIZE/LOCAL_RANK (torchrun, torch.distributed's env://) and
/// SLURM_PROCID/SLURM_NTASKS/SLURM_LOCALID, in that order of precedence. A variable that is
/// not a number in range is ignored with a problem; two launchers that disagree about the rank
/// give a problem naming both (slurm's task id under torchrun or mpirun is not a disagreement:
/// srun starts one launcher per node).
NNPROF_API RankEnvironment read_rank_environment(
    const std::function<std::optional<std::string>(std::string_view)>& lookup);
/// The same over this process's environment (getenv).
NNPROF_API RankEnvironment read_rank_environment();

/// `pattern` with {rank}, {world_size} and {local_rank} replaced by the rank's values ("none"
/// for a process that is not a rank, or a local rank not given) and {{ }} by braces. Throws
/// nnprof::Error on an unknown field or an unclosed brace.
NNPROF_API std::string expand_rank_pattern(std::string_view pattern, const std::optional<RankInfo>& rank);
/// True when `pattern` names a field ({rank}, ...), so that each rank gets a file of its own.
NNPROF_API bool is_rank_pattern(std::string_view pattern);

/// One round trip of a clock exchange with rank 0, NTP's four times: t1 sent (local clock),
/// t2 received and t3 answered (rank 0's clock), t4 answer received (local clock).
struct ClockRoundTrip {
  std::int64_t t1 = 0, t2 = 0, t3 = 0, t4 = 0;
  /// Local clock minus rank 0's, exact when the two legs took equally long.
  [[nodiscard]] double offset_ns() const noexcept {
    return 0.5 * static_cast<double>((t1 - t2) + (t4 - t3));
  }
  /// Time on the wire both ways: the error of offset_ns() is at most half of it.
  [[nodiscard]] std::int64_t round_trip_ns() const noexcept { return (t4 - t1) - (t3 - t2); }
};

/// The offset of one exchange: that of its shortest round trip (the one least delayed by
/// scheduling), at that round trip's local midpoint.
struct ClockOffsetSample {
  double offset_ns = 0.0;
  std::int64_t local_ns = 0;   ///< local time the offset refers to
  std::int64_t round_trip_ns = 0;
  std::uint32_t exchanges = 0;  ///< round trips the exchange made
};

/// The best sample of `trips`; nullopt when there is none or every round trip is impossible
/// (negative: a clock went backwards, or the times were mixed up).
NNPROF_API std::optional<ClockOffsetSample> best_clock_offset(std::span<const ClockRoundTrip> trips);

/// A ClockAlignment from the exchange at the start and, when there is one, at the end: offset
/// at the start, drift from the change between the two, residual the larger half round trip
/// (plus the drift's own uncertainty over the run).
NNPROF_API ClockAlignment align_clock(const ClockOffsetSample& start, const std::optional<ClockOffsetSample>& end,
                                      std::string method);

/// What causality proves about the offset (local clock minus rank 0's) near local time
/// `local_ns`: it lies in [lower_ns, upper_ns]. A round trip gives [t1 - t2, t4 - t3], whose
/// middle is ClockRoundTrip::offset_ns(); so does every collective that no rank can leave
/// before all have entered it (a barrier, an allreduce).
struct ClockBound {
  double lower_ns = 0.0;
  double upper_ns = 0.0;
  std::int64_t local_ns = 0;
};

/// The bound one synchronising collective gives: this rank left it after rank 0 entered it, and
/// rank 0 left it after this rank entered it (each time on its own rank's clock).
NNPROF_API ClockBound collective_clock_bound(std::int64_t local_enter_ns, std::int64_t local_exit_ns,
                                             std::int64_t rank0_enter_ns, std::int64_t rank0_exit_ns);

/// `clock` narrowed by `bounds` (each moved to the reference time by the drift): the offset
/// becomes the middle of what the round trips' interval and every bound leave, the residual
/// half its width, and the method gains "+collectives". Unchanged when the bounds narrow
/// nothing, or contradict the round trips (a clock that stepped): `narrowed`, when given, says
/// which.
NNPROF_API ClockAlignment refine_clock(const ClockAlignment& clock, std::span<const ClockBound> bounds,
                                       bool* narrowed = nullptr);

/// Test hook: nanoseconds that the clock-alignment code adds to every local time it reads
/// (NNPROF_TEST_CLOCK_OFFSET_NS), so that a test can check an injected offset is recovered.
/// Read only by the code that measures offsets, never by recording; 0 when unset or unreadable.
NNPROF_API std::int64_t injected_clock_offset_ns();

}  // namespace nnprof
