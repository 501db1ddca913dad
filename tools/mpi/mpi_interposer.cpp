// libnnprof_mpi.so: MPI through the standard profiling interface (PMPI). Preloaded by
// `nnprof record` into a program that links libmpi (or with --mpi), it defines the MPI_*
// functions below, records each call as an nnprof scope in the process's global profiler and
// calls the PMPI_* entry point that every MPI library provides for exactly this purpose.
//
// - Collectives carry the arguments of nnprof/distributed.hpp (collective_arg): the operation,
//   a group name that is the same on every member (MPI_COMM_WORLD, else the world ranks of the
//   members hashed, with an ordinal for several communicators of the same members), a sequence
//   number per communicator in call order, the bytes this rank contributes, the root and the
//   group's size. `nnprof merge` matches one collective's spans across ranks by (group, seq).
// - Nonblocking collectives (MPI_Iallreduce, ...) take their sequence number from the same
//   counter (MPI orders every member's collectives, blocking or not, alike); their call is a
//   short span with the collective arguments and `nonblocking`, and their request is remembered
//   until a wait or test completes it: then a short completion span inside that call names the
//   collective and how long this rank was blocked on it (docs/DISTRIBUTED.md).
// - Point-to-point calls (Send, Recv, Sendrecv, Isend, Irecv) and waits (Wait, Waitall, Waitany,
//   Waitsome) are scopes too, with the peer, tag and bytes: where a rank waits for another shows
//   there. Tests (Test, Testall, Testany, Testsome) are scopes only when they complete something:
//   a polling loop would otherwise record one span per poll.
// - MPI_Init and MPI_Init_thread measure this rank's clock against rank 0's with NTP-style
//   round trips over a duplicate of MPI_COMM_WORLD (so that no message of the program can
//   match them); MPI_Finalize measures again, and the two give the offset, its drift and the
//   residual uncertainty, narrowed by the bounds that the world's barriers, allreduces,
//   allgathers and alltoalls give (no rank leaves one before all entered it), and stored in the
//   profile's RankInfo (Profiler::set_clock_alignment).
#include <mpi.h>
#include <time.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <cstdint>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <unordered_map>
#include <vector>

#include <fmt/format.h>

#include "nnprof/profiler.hpp"
#include "nnprof/rank_recording.hpp"
#include "record/framework_scopes.hpp"

namespace {

namespace arg = nnprof::collective_arg;

// ---- communicators: a name every member agrees on, and a sequence number per communicator ----

struct CommState {
  std::string group;
  int size = 0;
  std::int64_t next_seq = 0;
};

std::mutex g_comms_mu;
// Keyed by the handle, erased by MPI_Comm_free (a freed handle's value may be reused).
std::unordered_map<MPI_Comm, CommState>& comms() {
  static auto* map = new std::unordered_map<MPI_Comm, CommState>;  // used until the very end
  return *map;
}
// How many communicators with the same members this rank has named so far: the ordinal that
// tells two such communicators apart (members create them in the same order, as MPI requires).
std::unordered_map<std::string, int>& member_counts() {
  static auto* map = new std::unordered_map<std::string, int>;
  return *map;
}

/// "world", "self", or "comm<size>-<hash of the members' world ranks>#<ordinal>".
std::string name_of(MPI_Comm comm, int size) {
  if (comm == MPI_COMM_WORLD) return "world";
  if (comm == MPI_COMM_SELF) return "self";
  MPI_Group group = MPI_GROUP_NULL, world = MPI_GROUP_NULL;
  std::vector<int> local(static_cast<std::size_t>(size)), global(static_cast<std::size_t>(size), MPI_UNDEFINED);
  for (int i = 0; i < size; ++i) local[static_cast<std::size_t>(i)] = i;
  PMPI_Comm_group(comm, &group);
  PMPI_Comm_group(MPI_COMM_WORLD, &world);
  PMPI_Group_translate_ranks(group, size, local.data(), world, global.data());
  PMPI_Group_free(&group);
  PMPI_Group_free(&world);
  std::uint64_t hash = 14695981039346656037ull;  // FNV-1a over the world ranks, in group order
  for (const int r : global) {
    for (int b = 0; b < 4; ++b) {
      hash ^= static_cast<std::uint8_t>(static_cast<unsigned>(r) >> (8 * b));
      hash *= 1099511628211ull;
    }
  }
  const std::string members = fmt::format("comm{}-{:016x}", size, hash);
  const int ordinal = member_counts()[members]++;
  return fmt::format("{}#{}", members, ordinal);
}

struct CommCall {
  const std::string* group = nullptr;  // a map node's: stable until MPI_Comm_free, which MPI forbids mid-call
  int size = 0;
  std::int64_t seq = 0;
};

CommCall next_call(MPI_Comm comm) {
  std::lock_guard lock(g_comms_mu);
  auto it = comms().find(comm);
  if (it == comms().end()) {
    int size = 0;
    PMPI_Comm_size(comm, &size);
    it = comms().emplace(comm, CommState{name_of(comm, size), size, 0}).first;
  }
  return {&it->second.group, it->second.size, it->second.next_seq++};
}

std::int64_t type_bytes(MPI_Datatype type, std::int64_t count) {
  int size = 0;
  if (type == MPI_DATATYPE_NULL || PMPI_Type_size(type, &size) != MPI_SUCCESS) return 0;
  return count * size;
}

std::int64_t sum(const int counts[], int n) {
  std::int64_t total = 0;
  if (counts != nullptr)
    for (int i = 0; i < n; ++i) total += counts[i];
  return total;
}

// ---- the ends of synchronising collectives on MPI_COMM_WORLD, for the clock ----
//
// No rank leaves a barrier (or an allreduce, allgather, alltoall, reduce-scatter) before every
// rank has entered it, so each one bounds the offset between this rank's clock and rank 0's
// (collective_clock_bound). Their enter and exit times on this rank's clock are kept, in call
// order (the same order on every rank), up to kMaxSyncTimes; MPI_Finalize intersects the bounds
// with the round trips' (refine_clock).

constexpr std::size_t kMaxSyncTimes = 65536;  // 1 MiB: far more bounds than narrowing needs
std::mutex g_sync_mu;
std::vector<std::array<std::int64_t, 2>>& sync_times() {
  static auto* times = new std::vector<std::array<std::int64_t, 2>>;  // used until the very end
  return *times;
}
std::atomic<bool> g_keep_sync_times{false};  // from MPI_Init to MPI_Finalize
std::int64_t g_injected = 0;                 // the test hook's offset, read once at MPI_Init
std::int64_t g_origin_ns = 0;                // the global profiler's start on CLOCK_MONOTONIC, read at MPI_Init

/// This profiler's clock (nanoseconds since the session started), plus the test hook's offset.
std::int64_t local_now_ns() {
  timespec t{};
  clock_gettime(CLOCK_MONOTONIC, &t);
  const std::int64_t mono = static_cast<std::int64_t>(t.tv_sec) * 1'000'000'000 + t.tv_nsec;
  return mono - g_origin_ns + g_injected;
}

enum class Sync : bool { No, Yes };
enum class Nonblocking : bool { No, Yes };

/// The span of one collective: opened before the PMPI call, closed after it. Its arguments go in
/// with the scope under one lock (detail::open_framework_scope, as the LibTorch observer does):
/// six ProfileGuard::arg calls cost six locks, 2.5-4 us per collective against an MPI_Allreduce
/// of 0.5 us on one host.
class CollectiveScope {
 public:
  CollectiveScope(const char* name, const char* operation, MPI_Comm comm, std::int64_t bytes, std::optional<int> root,
                  Sync sync = Sync::No, Nonblocking nonblocking = Nonblocking::No)
      : profiler_(nnprof::global_profiler()), name_(name), call_(next_call(comm)) {
    const CommCall& call = call_;
    using nnprof::detail::arg_value;
    nnprof::detail::SpanArgInput args[7];
    std::size_t n = 0;
    args[n++] = {arg::kOperation, arg_value(std::string_view(operation))};
    args[n++] = {arg::kGroup, arg_value(std::string_view(*call.group))};
    args[n++] = {arg::kSequence, arg_value(call.seq)};
    args[n++] = {arg::kBytes, arg_value(bytes)};
    if (root) args[n++] = {arg::kRoot, arg_value(static_cast<std::int64_t>(*root))};
    args[n++] = {arg::kGroupSize, arg_value(static_cast<std::int64_t>(call.size))};
    if (nonblocking == Nonblocking::Yes) args[n++] = {arg::kNonblocking, arg_value(std::int64_t{1})};
    site_ = nnprof::detail::open_framework_scope(profiler_, name_, {args, n});
    // An allreduce of nothing may return at once without a message: only a barrier or a
    // collective with data waits for every rank.
    const bool synchronising = sync == Sync::Yes && (bytes > 0 || std::string_view(operation) == "barrier");
    if (synchronising && comm == MPI_COMM_WORLD && g_keep_sync_times.load(std::memory_order_relaxed))
      enter_ns_ = local_now_ns();  // last, as close to the collective as this can be
  }
  ~CollectiveScope() {
    if (enter_ns_ >= 0) {
      const std::int64_t exit_ns = local_now_ns();
      std::lock_guard lock(g_sync_mu);
      if (sync_times().size() < kMaxSyncTimes) sync_times().push_back({enter_ns_, exit_ns});
    }
    nnprof::detail::close_framework_scope(profiler_, site_, name_, 0.0, 0, {});
  }
  CollectiveScope(const CollectiveScope&) = delete;
  CollectiveScope& operator=(const CollectiveScope&) = delete;

  [[nodiscard]] const CommCall& call() const noexcept { return call_; }

 private:
  nnprof::Profiler& profiler_;
  const char* name_;
  CommCall call_;
  const nnprof::SourceLocation* site_ = nullptr;
  std::int64_t enter_ns_ = -1;  // -1: not a synchronising collective on the world
};

/// The span of a point-to-point call or a wait: no collective arguments (`nnprof merge` matches
/// collectives only), the peer, tag and bytes where the call names them.
class PointToPointScope {
 public:
  PointToPointScope(const char* name, std::optional<int> peer, std::optional<int> tag, std::optional<std::int64_t> bytes)
      : profiler_(nnprof::global_profiler()), name_(name) {
    using nnprof::detail::arg_value;
    nnprof::detail::SpanArgInput args[3];
    std::size_t n = 0;
    if (peer) args[n++] = {"peer", arg_value(static_cast<std::int64_t>(*peer))};
    if (tag) args[n++] = {"tag", arg_value(static_cast<std::int64_t>(*tag))};
    if (bytes) args[n++] = {arg::kBytes, arg_value(*bytes)};
    site_ = nnprof::detail::open_framework_scope(profiler_, name_, {args, n});
  }
  ~PointToPointScope() { nnprof::detail::close_framework_scope(profiler_, site_, name_, 0.0, 0, {}); }
  PointToPointScope(const PointToPointScope&) = delete;
  PointToPointScope& operator=(const PointToPointScope&) = delete;

 private:
  nnprof::Profiler& profiler_;
  const char* name_;
  const nnprof::SourceLocation* site_ = nullptr;
};

// ---- nonblocking collectives: their requests until a wait or test completes them ----
//
// A request of a nonblocking collective is remembered from its call until a wait or test finds
// it complete (MPI sets a completed request to MPI_REQUEST_NULL); each wait or test that
// includes it adds its duration to the time this rank was blocked on it. Requests of anything
// else (point to point, persistent requests) are not remembered, and a wait or test that holds
// none of ours looks nothing up beyond one relaxed load.

struct PendingCollective {
  const char* completion_name = nullptr;  // "MPI_Iallreduce completed": a literal of the wrapper
  std::string group;
  std::int64_t seq = 0;
  std::int64_t blocked_ns = 0;  // in earlier waits and tests that did not complete it
  // The end of the last wait or test that included it (-1: none yet), and the CPU time its
  // thread had used by then: the gap to the next one counts as blocked when the thread ran
  // for almost none of it (a polling loop, descheduled or not), and not when it computed.
  std::int64_t last_end_ns = -1;
  std::int64_t last_end_cpu_ns = 0;
  std::thread::id last_thread;
};

/// The most CPU time a thread may use between two polls of a request for the gap to count as
/// blocked: a polling loop's own work between two MPI_Test calls is well under a microsecond;
/// computation between them is far more than this.
constexpr std::int64_t kPollGapCpuNs = 20'000;

std::mutex g_requests_mu;
std::unordered_map<MPI_Request, PendingCollective>& pending_requests() {
  static auto* map = new std::unordered_map<MPI_Request, PendingCollective>;  // used until the very end
  return *map;
}
std::atomic<std::size_t> g_pending_count{0};  // pending_requests().size(), read without the lock

void remember_request(MPI_Request request, const char* completion_name, const CommCall& call) {
  if (request == MPI_REQUEST_NULL) return;
  std::lock_guard lock(g_requests_mu);
  PendingCollective& pending = pending_requests()[request];
  pending = PendingCollective{};
  pending.completion_name = completion_name;
  pending.group = *call.group;
  pending.seq = call.seq;
  g_pending_count.store(pending_requests().size(), std::memory_order_relaxed);
}

/// CLOCK_MONOTONIC in nanoseconds: how long a wait or test took.
std::int64_t monotonic_ns() {
  timespec t{};
  clock_gettime(CLOCK_MONOTONIC, &t);
  return static_cast<std::int64_t>(t.tv_sec) * 1'000'000'000 + t.tv_nsec;
}

/// The calling thread's CPU time in nanoseconds.
std::int64_t thread_cpu_ns() {
  timespec t{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
  return static_cast<std::int64_t>(t.tv_sec) * 1'000'000'000 + t.tv_nsec;
}

/// Around one wait or test call over `count` requests: notes which of them are ours before the
/// PMPI call (the call overwrites completed handles with MPI_REQUEST_NULL) and, after it, adds
/// the call's duration to each one's blocked time and records a completion span for each one
/// that completed. Waits are spans from their start; a test is a span only when it completed a
/// request (opened when MPI returned from it: its own time is in the blocked time). The gap
/// since the previous wait or test of a request counts as blocked too when its thread used
/// almost no CPU in it (kPollGapCpuNs): in a polling loop the rank is descheduled between polls
/// as often as in them (4 busy ranks on 2 cores), and that time was waiting as well.
class CompletionScope {
 public:
  enum class Kind : bool { Wait, Test };
  CompletionScope(const char* name, Kind kind, const MPI_Request* requests, int count)
      : profiler_(nnprof::global_profiler()), name_(name), kind_(kind), requests_(requests), start_ns_(monotonic_ns()) {
    // The call's time runs from here to the bookkeeping after it (finish), so that in a loop of
    // polls the time between one poll's measurement and the next is only the loop's own: the
    // interposer's lookups count as blocked, as the MPI call they wrap does.
    if (count > 0 && requests != nullptr && g_pending_count.load(std::memory_order_relaxed) > 0) {
      const std::int64_t cpu_ns = thread_cpu_ns();
      const std::thread::id thread = std::this_thread::get_id();
      std::lock_guard lock(g_requests_mu);
      for (int i = 0; i < count; ++i) {
        if (requests[i] == MPI_REQUEST_NULL) continue;
        const auto it = pending_requests().find(requests[i]);
        if (it == pending_requests().end()) continue;
        note_ours(i, requests[i]);
        PendingCollective& c = it->second;
        if (c.last_end_ns >= 0 && c.last_thread == thread && cpu_ns - c.last_end_cpu_ns < kPollGapCpuNs)
          c.blocked_ns += start_ns_ - c.last_end_ns;
      }
    }
    if (kind_ == Kind::Wait) site_ = nnprof::detail::open_framework_scope(profiler_, name_, {});
  }
  /// After the PMPI call: `requests` now holds MPI_REQUEST_NULL where one completed.
  void finish(bool completed_any) {
    if (kind_ == Kind::Test && completed_any) {
      site_ = nnprof::detail::open_framework_scope(profiler_, name_, {});
      opened_test_ = true;
    }
    std::vector<PendingCollective> completed;
    if (ours_count_ > 0) {
      const std::int64_t cpu_ns = thread_cpu_ns();
      const std::thread::id thread = std::this_thread::get_id();
      std::lock_guard lock(g_requests_mu);
      const std::int64_t end_ns = monotonic_ns();
      const std::int64_t took = end_ns - start_ns_;
      for (std::size_t k = 0; k < ours_count_; ++k) {
        const auto [index, handle] = k < ours_.size() ? ours_[k] : more_ours_[k - ours_.size()];
        const auto it = pending_requests().find(handle);
        if (it == pending_requests().end()) continue;  // completed by another thread meanwhile
        it->second.blocked_ns += took;
        it->second.last_end_ns = end_ns;
        it->second.last_end_cpu_ns = cpu_ns;
        it->second.last_thread = thread;
        if (requests_[index] == MPI_REQUEST_NULL) {
          completed.push_back(std::move(it->second));
          pending_requests().erase(it);
        }
      }
      g_pending_count.store(pending_requests().size(), std::memory_order_relaxed);
    }
    for (const PendingCollective& c : completed) {
      using nnprof::detail::arg_value;
      const nnprof::detail::SpanArgInput args[3] = {
          {arg::kCompletedGroup, arg_value(std::string_view(c.group))},
          {arg::kCompletedSequence, arg_value(c.seq)},
          {arg::kBlocked, arg_value(c.blocked_ns)},
      };
      const nnprof::SourceLocation* site = nnprof::detail::open_framework_scope(profiler_, c.completion_name, args);
      nnprof::detail::close_framework_scope(profiler_, site, c.completion_name, 0.0, 0, {});
    }
  }
  ~CompletionScope() {
    if (kind_ == Kind::Wait || opened_test_) nnprof::detail::close_framework_scope(profiler_, site_, name_, 0.0, 0, {});
  }
  CompletionScope(const CompletionScope&) = delete;
  CompletionScope& operator=(const CompletionScope&) = delete;

 private:
  nnprof::Profiler& profiler_;
  const char* name_;
  Kind kind_;
  const MPI_Request* requests_;
  void note_ours(int index, MPI_Request handle) {
    if (ours_count_ < ours_.size())
      ours_[ours_count_] = {index, handle};
    else
      more_ours_.emplace_back(index, handle);
    ++ours_count_;
  }
  // (index in the call's array, handle before the call) of our requests. The first few inline:
  // a heap allocation freed after the call's time was taken would be time a polling loop spends
  // outside every measured call, so not counted as blocked.
  std::array<std::pair<int, MPI_Request>, 4> ours_{};
  std::vector<std::pair<int, MPI_Request>> more_ours_;
  std::size_t ours_count_ = 0;
  const nnprof::SourceLocation* site_ = nullptr;
  std::int64_t start_ns_;
  bool opened_test_ = false;
};

int comm_size(MPI_Comm comm) {
  int size = 0;
  PMPI_Comm_size(comm, &size);
  return size;
}


// ---- one clock: round trips with rank 0 at MPI_Init and at MPI_Finalize ----

constexpr int kClockTag = 0x6e6e;
constexpr int kRoundTrips = 64;  // per rank and exchange; the shortest one is kept

MPI_Comm g_clock_comm = MPI_COMM_NULL;
std::optional<nnprof::ClockOffsetSample> g_start_sample;

/// One exchange: rank 0 answers each other rank in turn; each other rank returns the offset of
/// its shortest round trip. Every rank takes part (a collective in all but name).
std::optional<nnprof::ClockOffsetSample> exchange_clocks() {
  if (g_clock_comm == MPI_COMM_NULL) return std::nullopt;
  int rank = 0, size = 0;
  PMPI_Comm_rank(g_clock_comm, &rank);
  PMPI_Comm_size(g_clock_comm, &size);
  if (rank == 0) {
    for (int peer = 1; peer < size; ++peer) {
      for (int i = 0; i < kRoundTrips; ++i) {
        std::int64_t ping = 0;
        PMPI_Recv(&ping, 1, MPI_INT64_T, peer, kClockTag, g_clock_comm, MPI_STATUS_IGNORE);
        std::array<std::int64_t, 2> times{};
        times[0] = local_now_ns();
        times[1] = local_now_ns();
        PMPI_Send(times.data(), 2, MPI_INT64_T, peer, kClockTag, g_clock_comm);
      }
    }
    return std::nullopt;
  }
  std::vector<nnprof::ClockRoundTrip> trips(kRoundTrips);
  for (nnprof::ClockRoundTrip& trip : trips) {
    trip.t1 = local_now_ns();
    PMPI_Send(&trip.t1, 1, MPI_INT64_T, 0, kClockTag, g_clock_comm);
    std::array<std::int64_t, 2> times{};
    PMPI_Recv(times.data(), 2, MPI_INT64_T, 0, kClockTag, g_clock_comm, MPI_STATUS_IGNORE);
    trip.t4 = local_now_ns();
    trip.t2 = times[0];
    trip.t3 = times[1];
  }
  return nnprof::best_clock_offset(trips);
}

void start_clock_exchange() {
  g_injected = nnprof::injected_clock_offset_ns();
  g_origin_ns = static_cast<std::int64_t>(nnprof::global_profiler().start_monotonic_ns());
  if (PMPI_Comm_dup(MPI_COMM_WORLD, &g_clock_comm) != MPI_SUCCESS) {
    g_clock_comm = MPI_COMM_NULL;
    return;
  }
  g_start_sample = exchange_clocks();
  g_keep_sync_times.store(true, std::memory_order_relaxed);
}

/// The bounds of the synchronising collectives both this rank and rank 0 kept (rank 0 sends its
/// times to all); empty on rank 0.
std::vector<nnprof::ClockBound> collective_bounds() {
  int rank = 0;
  PMPI_Comm_rank(g_clock_comm, &rank);
  std::vector<std::array<std::int64_t, 2>> mine;
  {
    std::lock_guard lock(g_sync_mu);
    mine = sync_times();
  }
  int count = rank == 0 ? static_cast<int>(mine.size()) : 0;
  PMPI_Bcast(&count, 1, MPI_INT, 0, g_clock_comm);
  std::vector<std::array<std::int64_t, 2>> zero(static_cast<std::size_t>(count));
  if (rank == 0) zero = mine;
  PMPI_Bcast(zero.data(), 2 * count, MPI_INT64_T, 0, g_clock_comm);
  std::vector<nnprof::ClockBound> bounds;
  if (rank == 0) return bounds;
  const std::size_t n = std::min(mine.size(), zero.size());
  bounds.reserve(n);
  for (std::size_t k = 0; k < n; ++k)
    bounds.push_back(nnprof::collective_clock_bound(mine[k][0], mine[k][1], zero[k][0], zero[k][1]));
  return bounds;
}

void finish_clock_exchange() {
  if (g_clock_comm == MPI_COMM_NULL) return;
  g_keep_sync_times.store(false, std::memory_order_relaxed);
  const std::optional<nnprof::ClockOffsetSample> end = exchange_clocks();
  const std::vector<nnprof::ClockBound> bounds = collective_bounds();
  PMPI_Comm_free(&g_clock_comm);
  if (g_start_sample) {
    const nnprof::ClockAlignment measured = nnprof::align_clock(*g_start_sample, end, "mpi-ping-pong");
    nnprof::global_profiler().set_clock_alignment(nnprof::refine_clock(measured, bounds));
  }
}

// ---- the bytes a rank contributes, shared by a blocking call and its nonblocking twin ----

/// Gather and allgather: the send part, or with MPI_IN_PLACE this rank's part of the receive
/// buffer (recvcount elements).
std::int64_t gather_bytes(const void* sendbuf, int sendcount, MPI_Datatype sendtype, int recvcount,
                          MPI_Datatype recvtype) {
  return sendbuf == MPI_IN_PLACE ? type_bytes(recvtype, recvcount) : type_bytes(sendtype, sendcount);
}

std::int64_t allgatherv_bytes(const void* sendbuf, int sendcount, MPI_Datatype sendtype, const int recvcounts[],
                              MPI_Datatype recvtype, MPI_Comm comm) {
  if (sendbuf != MPI_IN_PLACE) return type_bytes(sendtype, sendcount);
  int rank = 0;
  PMPI_Comm_rank(comm, &rank);
  return recvcounts != nullptr ? type_bytes(recvtype, recvcounts[rank]) : 0;
}

/// The size of this rank's part (what it receives; the root's own part when in place).
std::int64_t scatter_bytes(int sendcount, MPI_Datatype sendtype, const void* recvbuf, int recvcount,
                           MPI_Datatype recvtype) {
  return recvbuf == MPI_IN_PLACE ? type_bytes(sendtype, sendcount) : type_bytes(recvtype, recvcount);
}

std::int64_t alltoall_bytes(const void* sendbuf, int sendcount, MPI_Datatype sendtype, int recvcount,
                            MPI_Datatype recvtype, MPI_Comm comm) {
  const int n = comm_size(comm);
  return sendbuf == MPI_IN_PLACE ? type_bytes(recvtype, std::int64_t{recvcount} * n)
                                 : type_bytes(sendtype, std::int64_t{sendcount} * n);
}

std::int64_t alltoallv_bytes(const void* sendbuf, const int sendcounts[], MPI_Datatype sendtype,
                             const int recvcounts[], MPI_Datatype recvtype, MPI_Comm comm) {
  const int n = comm_size(comm);
  return sendbuf == MPI_IN_PLACE ? type_bytes(recvtype, sum(recvcounts, n)) : type_bytes(sendtype, sum(sendcounts, n));
}

/// A nonblocking collective: its span around the PMPI call (its seq from the communicator's
/// counter, as a blocking call's), then its request remembered for the wait or test that
/// completes it.
template <typename PmpiCall>
int nonblocking_collective(const char* name, const char* completion_name, const char* operation, MPI_Comm comm,
                           std::int64_t bytes, std::optional<int> root, MPI_Request* request, PmpiCall&& pmpi_call) {
  CollectiveScope scope(name, operation, comm, bytes, root, Sync::No, Nonblocking::Yes);
  const int rc = pmpi_call();
  if (rc == MPI_SUCCESS && request != nullptr) remember_request(*request, completion_name, scope.call());
  return rc;
}

}  // namespace

extern "C" {

int MPI_Init(int* argc, char*** argv) {
  const int rc = PMPI_Init(argc, argv);
  if (rc == MPI_SUCCESS) start_clock_exchange();
  return rc;
}

int MPI_Init_thread(int* argc, char*** argv, int required, int* provided) {
  const int rc = PMPI_Init_thread(argc, argv, required, provided);
  if (rc == MPI_SUCCESS) start_clock_exchange();
  return rc;
}

int MPI_Finalize() {
  finish_clock_exchange();
  return PMPI_Finalize();
}

int MPI_Comm_free(MPI_Comm* comm) {
  if (comm != nullptr) {
    std::lock_guard lock(g_comms_mu);
    comms().erase(*comm);
  }
  return PMPI_Comm_free(comm);
}

// Point to point: the peer is the communicator's rank the program named (MPI_ANY_SOURCE, -1, for
// a receive from anyone).
int MPI_Send(const void* buf, int count, MPI_Datatype type, int dest, int tag, MPI_Comm comm) {
  PointToPointScope scope(__func__, dest, tag, type_bytes(type, count));
  return PMPI_Send(buf, count, type, dest, tag, comm);
}

int MPI_Recv(void* buf, int count, MPI_Datatype type, int source, int tag, MPI_Comm comm, MPI_Status* status) {
  PointToPointScope scope(__func__, source, tag, type_bytes(type, count));
  return PMPI_Recv(buf, count, type, source, tag, comm, status);
}

int MPI_Sendrecv(const void* sendbuf, int sendcount, MPI_Datatype sendtype, int dest, int sendtag, void* recvbuf,
                 int recvcount, MPI_Datatype recvtype, int source, int recvtag, MPI_Comm comm, MPI_Status* status) {
  PointToPointScope scope(__func__, dest, sendtag, type_bytes(sendtype, sendcount));
  return PMPI_Sendrecv(sendbuf, sendcount, sendtype, dest, sendtag, recvbuf, recvcount, recvtype, source, recvtag, comm,
                       status);
}

int MPI_Isend(const void* buf, int count, MPI_Datatype type, int dest, int tag, MPI_Comm comm, MPI_Request* request) {
  PointToPointScope scope(__func__, dest, tag, type_bytes(type, count));
  return PMPI_Isend(buf, count, type, dest, tag, comm, request);
}

int MPI_Irecv(void* buf, int count, MPI_Datatype type, int source, int tag, MPI_Comm comm, MPI_Request* request) {
  PointToPointScope scope(__func__, source, tag, type_bytes(type, count));
  return PMPI_Irecv(buf, count, type, source, tag, comm, request);
}

// Waits and tests: what completed is what MPI set to MPI_REQUEST_NULL (CompletionScope).
int MPI_Wait(MPI_Request* request, MPI_Status* status) {
  CompletionScope scope(__func__, CompletionScope::Kind::Wait, request, 1);
  const int rc = PMPI_Wait(request, status);
  scope.finish(true);
  return rc;
}

int MPI_Waitall(int count, MPI_Request requests[], MPI_Status statuses[]) {
  CompletionScope scope(__func__, CompletionScope::Kind::Wait, requests, count);
  const int rc = PMPI_Waitall(count, requests, statuses);
  scope.finish(true);
  return rc;
}

int MPI_Waitany(int count, MPI_Request requests[], int* index, MPI_Status* status) {
  CompletionScope scope(__func__, CompletionScope::Kind::Wait, requests, count);
  const int rc = PMPI_Waitany(count, requests, index, status);
  scope.finish(true);
  return rc;
}

int MPI_Waitsome(int incount, MPI_Request requests[], int* outcount, int indices[], MPI_Status statuses[]) {
  CompletionScope scope(__func__, CompletionScope::Kind::Wait, requests, incount);
  const int rc = PMPI_Waitsome(incount, requests, outcount, indices, statuses);
  scope.finish(true);
  return rc;
}

int MPI_Test(MPI_Request* request, int* flag, MPI_Status* status) {
  CompletionScope scope(__func__, CompletionScope::Kind::Test, request, 1);
  const int rc = PMPI_Test(request, flag, status);
  scope.finish(flag != nullptr && *flag != 0);
  return rc;
}

int MPI_Testall(int count, MPI_Request requests[], int* flag, MPI_Status statuses[]) {
  CompletionScope scope(__func__, CompletionScope::Kind::Test, requests, count);
  const int rc = PMPI_Testall(count, requests, flag, statuses);
  scope.finish(flag != nullptr && *flag != 0);
  return rc;
}

int MPI_Testany(int count, MPI_Request requests[], int* index, int* flag, MPI_Status* status) {
  CompletionScope scope(__func__, CompletionScope::Kind::Test, requests, count);
  const int rc = PMPI_Testany(count, requests, index, flag, status);
  // flag is also true when every request was already inactive (index MPI_UNDEFINED).
  scope.finish(flag != nullptr && *flag != 0 && index != nullptr && *index != MPI_UNDEFINED);
  return rc;
}

int MPI_Testsome(int incount, MPI_Request requests[], int* outcount, int indices[], MPI_Status statuses[]) {
  CompletionScope scope(__func__, CompletionScope::Kind::Test, requests, incount);
  const int rc = PMPI_Testsome(incount, requests, outcount, indices, statuses);
  scope.finish(outcount != nullptr && *outcount != MPI_UNDEFINED && *outcount > 0);
  return rc;
}

// MPI forbids freeing a nonblocking collective's request before it completes; a program that
// does so anyway loses the completion (its arrival stays, with no end seen), and the handle,
// which MPI may hand out again, is forgotten.
int MPI_Request_free(MPI_Request* request) {
  if (request != nullptr && g_pending_count.load(std::memory_order_relaxed) > 0) {
    std::lock_guard lock(g_requests_mu);
    pending_requests().erase(*request);
    g_pending_count.store(pending_requests().size(), std::memory_order_relaxed);
  }
  return PMPI_Request_free(request);
}

int MPI_Barrier(MPI_Comm comm) {
  CollectiveScope scope(__func__, "barrier", comm, 0, std::nullopt, Sync::Yes);
  return PMPI_Barrier(comm);
}

int MPI_Bcast(void* buffer, int count, MPI_Datatype type, int root, MPI_Comm comm) {
  CollectiveScope scope(__func__, "broadcast", comm, type_bytes(type, count), root);
  return PMPI_Bcast(buffer, count, type, root, comm);
}

int MPI_Allreduce(const void* sendbuf, void* recvbuf, int count, MPI_Datatype type, MPI_Op op, MPI_Comm comm) {
  CollectiveScope scope(__func__, "allreduce", comm, type_bytes(type, count), std::nullopt, Sync::Yes);
  return PMPI_Allreduce(sendbuf, recvbuf, count, type, op, comm);
}

int MPI_Reduce(const void* sendbuf, void* recvbuf, int count, MPI_Datatype type, MPI_Op op, int root, MPI_Comm comm) {
  CollectiveScope scope(__func__, "reduce", comm, type_bytes(type, count), root);
  return PMPI_Reduce(sendbuf, recvbuf, count, type, op, root, comm);
}

int MPI_Allgather(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf, int recvcount,
                  MPI_Datatype recvtype, MPI_Comm comm) {
  CollectiveScope scope(__func__, "allgather", comm, gather_bytes(sendbuf, sendcount, sendtype, recvcount, recvtype),
                        std::nullopt, Sync::Yes);
  return PMPI_Allgather(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm);
}

int MPI_Allgatherv(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf, const int recvcounts[],
                   const int displs[], MPI_Datatype recvtype, MPI_Comm comm) {
  CollectiveScope scope(__func__, "allgatherv", comm,
                        allgatherv_bytes(sendbuf, sendcount, sendtype, recvcounts, recvtype, comm), std::nullopt);
  return PMPI_Allgatherv(sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs, recvtype, comm);
}

int MPI_Gather(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf, int recvcount,
               MPI_Datatype recvtype, int root, MPI_Comm comm) {
  CollectiveScope scope(__func__, "gather", comm, gather_bytes(sendbuf, sendcount, sendtype, recvcount, recvtype), root);
  return PMPI_Gather(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, root, comm);
}

int MPI_Gatherv(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf, const int recvcounts[],
                const int displs[], MPI_Datatype recvtype, int root, MPI_Comm comm) {
  CollectiveScope scope(__func__, "gatherv", comm, sendbuf == MPI_IN_PLACE ? 0 : type_bytes(sendtype, sendcount), root);
  return PMPI_Gatherv(sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs, recvtype, root, comm);
}

int MPI_Scatter(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf, int recvcount,
                MPI_Datatype recvtype, int root, MPI_Comm comm) {
  CollectiveScope scope(__func__, "scatter", comm, scatter_bytes(sendcount, sendtype, recvbuf, recvcount, recvtype), root);
  return PMPI_Scatter(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, root, comm);
}

int MPI_Scatterv(const void* sendbuf, const int sendcounts[], const int displs[], MPI_Datatype sendtype, void* recvbuf,
                 int recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm) {
  CollectiveScope scope(__func__, "scatterv", comm, recvbuf == MPI_IN_PLACE ? 0 : type_bytes(recvtype, recvcount), root);
  return PMPI_Scatterv(sendbuf, sendcounts, displs, sendtype, recvbuf, recvcount, recvtype, root, comm);
}

int MPI_Alltoall(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf, int recvcount,
                 MPI_Datatype recvtype, MPI_Comm comm) {
  CollectiveScope scope(__func__, "alltoall", comm,
                        alltoall_bytes(sendbuf, sendcount, sendtype, recvcount, recvtype, comm), std::nullopt, Sync::Yes);
  return PMPI_Alltoall(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm);
}

int MPI_Alltoallv(const void* sendbuf, const int sendcounts[], const int sdispls[], MPI_Datatype sendtype,
                  void* recvbuf, const int recvcounts[], const int rdispls[], MPI_Datatype recvtype, MPI_Comm comm) {
  CollectiveScope scope(__func__, "alltoallv", comm,
                        alltoallv_bytes(sendbuf, sendcounts, sendtype, recvcounts, recvtype, comm), std::nullopt);
  return PMPI_Alltoallv(sendbuf, sendcounts, sdispls, sendtype, recvbuf, recvcounts, rdispls, recvtype, comm);
}

int MPI_Reduce_scatter(const void* sendbuf, void* recvbuf, const int recvcounts[], MPI_Datatype type, MPI_Op op,
                       MPI_Comm comm) {
  CollectiveScope scope(__func__, "reduce_scatter", comm, type_bytes(type, sum(recvcounts, comm_size(comm))), std::nullopt);
  return PMPI_Reduce_scatter(sendbuf, recvbuf, recvcounts, type, op, comm);
}

int MPI_Reduce_scatter_block(const void* sendbuf, void* recvbuf, int recvcount, MPI_Datatype type, MPI_Op op,
                             MPI_Comm comm) {
  CollectiveScope scope(__func__, "reduce_scatter_block", comm, type_bytes(type, std::int64_t{recvcount} * comm_size(comm)),
                        std::nullopt);
  return PMPI_Reduce_scatter_block(sendbuf, recvbuf, recvcount, type, op, comm);
}

// Nonblocking collectives: the call is a short span with the collective arguments and
// `nonblocking`; its request is remembered until a wait or test completes it. The bytes are
// counted as for the blocking call of the same name.

int MPI_Ibarrier(MPI_Comm comm, MPI_Request* request) {
  return nonblocking_collective(__func__, "MPI_Ibarrier completed", "barrier", comm, 0, std::nullopt, request,
                                [&] { return PMPI_Ibarrier(comm, request); });
}

int MPI_Ibcast(void* buffer, int count, MPI_Datatype type, int root, MPI_Comm comm, MPI_Request* request) {
  return nonblocking_collective(__func__, "MPI_Ibcast completed", "broadcast", comm, type_bytes(type, count), root,
                                request, [&] { return PMPI_Ibcast(buffer, count, type, root, comm, request); });
}

int MPI_Iallreduce(const void* sendbuf, void* recvbuf, int count, MPI_Datatype type, MPI_Op op, MPI_Comm comm,
                   MPI_Request* request) {
  return nonblocking_collective(__func__, "MPI_Iallreduce completed", "allreduce", comm, type_bytes(type, count),
                                std::nullopt, request,
                                [&] { return PMPI_Iallreduce(sendbuf, recvbuf, count, type, op, comm, request); });
}

int MPI_Ireduce(const void* sendbuf, void* recvbuf, int count, MPI_Datatype type, MPI_Op op, int root, MPI_Comm comm,
                MPI_Request* request) {
  return nonblocking_collective(__func__, "MPI_Ireduce completed", "reduce", comm, type_bytes(type, count), root,
                                request,
                                [&] { return PMPI_Ireduce(sendbuf, recvbuf, count, type, op, root, comm, request); });
}

int MPI_Iallgather(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf, int recvcount,
                   MPI_Datatype recvtype, MPI_Comm comm, MPI_Request* request) {
  return nonblocking_collective(
      __func__, "MPI_Iallgather completed", "allgather", comm,
      gather_bytes(sendbuf, sendcount, sendtype, recvcount, recvtype), std::nullopt, request, [&] {
        return PMPI_Iallgather(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm, request);
      });
}

int MPI_Iallgatherv(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf, const int recvcounts[],
                    const int displs[], MPI_Datatype recvtype, MPI_Comm comm, MPI_Request* request) {
  return nonblocking_collective(
      __func__, "MPI_Iallgatherv completed", "allgatherv", comm,
      allgatherv_bytes(sendbuf, sendcount, sendtype, recvcounts, recvtype, comm), std::nullopt, request, [&] {
        return PMPI_Iallgatherv(sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs, recvtype, comm, request);
      });
}

int MPI_Igather(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf, int recvcount,
                MPI_Datatype recvtype, int root, MPI_Comm comm, MPI_Request* request) {
  return nonblocking_collective(
      __func__, "MPI_Igather completed", "gather", comm, gather_bytes(sendbuf, sendcount, sendtype, recvcount, recvtype),
      root, request, [&] {
        return PMPI_Igather(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, root, comm, request);
      });
}

int MPI_Igatherv(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf, const int recvcounts[],
                 const int displs[], MPI_Datatype recvtype, int root, MPI_Comm comm, MPI_Request* request) {
  return nonblocking_collective(
      __func__, "MPI_Igatherv completed", "gatherv", comm,
      sendbuf == MPI_IN_PLACE ? 0 : type_bytes(sendtype, sendcount), root, request, [&] {
        return PMPI_Igatherv(sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs, recvtype, root, comm, request);
      });
}

int MPI_Iscatter(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf, int recvcount,
                 MPI_Datatype recvtype, int root, MPI_Comm comm, MPI_Request* request) {
  return nonblocking_collective(
      __func__, "MPI_Iscatter completed", "scatter", comm,
      scatter_bytes(sendcount, sendtype, recvbuf, recvcount, recvtype), root, request, [&] {
        return PMPI_Iscatter(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, root, comm, request);
      });
}

int MPI_Iscatterv(const void* sendbuf, const int sendcounts[], const int displs[], MPI_Datatype sendtype,
                  void* recvbuf, int recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm, MPI_Request* request) {
  return nonblocking_collective(
      __func__, "MPI_Iscatterv completed", "scatterv", comm,
      recvbuf == MPI_IN_PLACE ? 0 : type_bytes(recvtype, recvcount), root, request, [&] {
        return PMPI_Iscatterv(sendbuf, sendcounts, displs, sendtype, recvbuf, recvcount, recvtype, root, comm, request);
      });
}

int MPI_Ialltoall(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf, int recvcount,
                  MPI_Datatype recvtype, MPI_Comm comm, MPI_Request* request) {
  return nonblocking_collective(
      __func__, "MPI_Ialltoall completed", "alltoall", comm,
      alltoall_bytes(sendbuf, sendcount, sendtype, recvcount, recvtype, comm), std::nullopt, request, [&] {
        return PMPI_Ialltoall(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm, request);
      });
}

int MPI_Ialltoallv(const void* sendbuf, const int sendcounts[], const int sdispls[], MPI_Datatype sendtype,
                   void* recvbuf, const int recvcounts[], const int rdispls[], MPI_Datatype recvtype, MPI_Comm comm,
                   MPI_Request* request) {
  return nonblocking_collective(
      __func__, "MPI_Ialltoallv completed", "alltoallv", comm,
      alltoallv_bytes(sendbuf, sendcounts, sendtype, recvcounts, recvtype, comm), std::nullopt, request, [&] {
        return PMPI_Ialltoallv(sendbuf, sendcounts, sdispls, sendtype, recvbuf, recvcounts, rdispls, recvtype, comm,
                               request);
      });
}

int MPI_Ireduce_scatter(const void* sendbuf, void* recvbuf, const int recvcounts[], MPI_Datatype type, MPI_Op op,
                        MPI_Comm comm, MPI_Request* request) {
  return nonblocking_collective(
      __func__, "MPI_Ireduce_scatter completed", "reduce_scatter", comm,
      type_bytes(type, sum(recvcounts, comm_size(comm))), std::nullopt, request,
      [&] { return PMPI_Ireduce_scatter(sendbuf, recvbuf, recvcounts, type, op, comm, request); });
}

int MPI_Ireduce_scatter_block(const void* sendbuf, void* recvbuf, int recvcount, MPI_Datatype type, MPI_Op op,
                              MPI_Comm comm, MPI_Request* request) {
  return nonblocking_collective(
      __func__, "MPI_Ireduce_scatter_block completed", "reduce_scatter_block", comm,
      type_bytes(type, std::int64_t{recvcount} * comm_size(comm)), std::nullopt, request,
      [&] { return PMPI_Ireduce_scatter_block(sendbuf, recvbuf, recvcount, type, op, comm, request); });
}

}  // extern "C"
