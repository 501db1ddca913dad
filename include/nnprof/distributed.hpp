// Distributed runs: which rank of a job a profile belongs to, and how its clock maps onto rank
// 0's. A profile of one process has at most one RankInfo (Profile::ranks); a profile merged by
// `nnprof merge` has one per rank, and ThreadInfo::rank says which rank each thread ran in.
#pragma once

#include <cstdint>
#include <string>

namespace nnprof {

/// How this rank's clock maps onto rank 0's: t_rank0 = t_local - (offset_ns + drift_ppb *
/// 1e-9 * (t_local - reference_ns)). Estimated from round-trip exchanges with rank 0 at start
/// and end and refined, where collectives exist, by their near-simultaneous ends.
struct ClockAlignment {
  bool aligned = false;            ///< false: no estimate (rank 0 itself, or no exchange possible)
  std::string method;              ///< how it was estimated ("mpi-ping-pong", "tcp-rendezvous", ...)
  std::int64_t reference_ns = 0;   ///< the local time (profile clock) the offset refers to
  double offset_ns = 0.0;          ///< local clock minus rank 0's at reference_ns
  double drift_ppb = 0.0;          ///< rate of change of the offset, in ns per second of local time
  double residual_ns = 0.0;        ///< bound on the error left after alignment (half the best round trip, or more)
  std::uint32_t exchanges = 0;     ///< round trips the estimate used

  bool operator==(const ClockAlignment&) const = default;
};

/// One rank of a distributed job, as its launcher described it.
struct RankInfo {
  std::int32_t rank = -1;        ///< RANK, OMPI_COMM_WORLD_RANK, PMI_RANK or SLURM_PROCID
  std::int32_t world_size = 0;   ///< WORLD_SIZE, OMPI_COMM_WORLD_SIZE, PMI_SIZE or SLURM_NTASKS
  std::int32_t local_rank = -1;  ///< LOCAL_RANK, OMPI_COMM_WORLD_LOCAL_RANK, SLURM_LOCALID; -1: not given
  std::string launcher;          ///< "torchrun", "mpirun", "slurm", "pmi"
  std::string hostname;
  std::int64_t pid = 0;
  ClockAlignment clock;

  bool operator==(const RankInfo&) const = default;
};

/// How a collective (MPI_Allreduce through the PMPI interposer, c10d::allreduce_ through the
/// PyTorch operator capture) appears in a profile: a scope on the calling thread whose span
/// carries these arguments (SpanArg). `nnprof merge` matches the spans of one collective across
/// ranks by (group, seq).
namespace collective_arg {
inline constexpr const char* kOperation = "collective";  ///< string: "allreduce", "broadcast", "barrier", ...
inline constexpr const char* kGroup = "group";           ///< string: communicator or process group, the same on every member
inline constexpr const char* kSequence = "seq";          ///< int: 0, 1, 2, ... per group, in call order
inline constexpr const char* kBytes = "bytes";           ///< int: bytes this rank sends (or the buffer size)
inline constexpr const char* kRoot = "root";             ///< int: root rank in the group; absent when none
inline constexpr const char* kGroupSize = "group_size";  ///< int: ranks in the group
/// int 1 on the span of a nonblocking collective's call (MPI_Iallreduce, ...): the span is
/// the call that started the collective, its start the rank's arrival; the collective ends on
/// this rank where a completion span names it (below).
inline constexpr const char* kNonblocking = "nonblocking";
/// The completion of a nonblocking collective on this rank: a short span inside the wait or
/// test call that found it complete, carrying these three arguments (and not kGroup/kSequence,
/// so that nothing takes it for another arrival). Its start is when the collective ended here.
inline constexpr const char* kCompletedGroup = "completed_group";  ///< string: the collective's group
inline constexpr const char* kCompletedSequence = "completed_seq"; ///< int: the collective's seq
/// int: nanoseconds this rank spent inside the wait and test calls that included the request,
/// from its call to its completion (the completing call included): the time it was blocked on
/// it, not the computation it overlapped.
inline constexpr const char* kBlocked = "blocked_ns";
}  // namespace collective_arg

}  // namespace nnprof
