// The rank merge: each input is loaded alone and without its spans, which are then read one at
// a time and written to the output as they are mapped; only what every report needs whole
// (strings, threads, the call tree merged by path, per-name statistics, flows, diagnostics) is
// kept until the end. So the merge holds one rank's profile less its spans, the merged call
// tree and SQLite's page caches, whatever the number of ranks and however long each ran.
#include "io/rank_merge.hpp"

#include <algorithm>
#include <bit>
#include <cctype>
#include <cmath>
#include <cstdint>
#include <filesystem>
#include <limits>
#include <map>
#include <optional>
#include <set>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include "analysis/torch_collectives.hpp"
#include "io/profile_store.hpp"
#include "io/sqlite.hpp"
#include "nnprof/distributed.hpp"
#include "nnprof/error.hpp"
#include "nnprof/profile.hpp"
#include "nnprof/rank_recording.hpp"
#include "report/format.hpp"

namespace nnprof::io {
namespace {

using sqlite::Database;
using sqlite::Statement;
using report::format_duration;

/// Times of one rank's profile onto rank 0's: t0 = t - (offset + drift * (t - reference)).
struct ClockMap {
  double offset_ns = 0.0;
  double drift = 0.0;  ///< ns per ns
  double reference_ns = 0.0;
  [[nodiscard]] std::int64_t operator()(std::uint64_t t) const {
    const double local = static_cast<double>(t);
    // Rounded as one correction so that an identity map stays exact for any t.
    return static_cast<std::int64_t>(t) - std::llround(offset_ns + drift * (local - reference_ns));
  }
};

/// Pooled duration statistics: counts, sums, extremes, mean and variance exactly (Chan's
/// combination); percentiles are not stored with enough detail to pool, so each is the largest
/// of the parts' (an upper bound, said in docs/DISTRIBUTED.md).
void pool(DurationStats& into, const DurationStats& add) {
  if (add.count == 0) return;
  if (into.count == 0) {
    into = add;
    return;
  }
  const double n1 = static_cast<double>(into.count), n2 = static_cast<double>(add.count), n = n1 + n2;
  const double mean = (into.mean_ns * n1 + add.mean_ns * n2) / n;
  const double delta = add.mean_ns - into.mean_ns;
  const double m2 = into.stddev_ns * into.stddev_ns * (n1 - 1.0) + add.stddev_ns * add.stddev_ns * (n2 - 1.0) +
                    delta * delta * n1 * n2 / n;
  into.count += add.count;
  into.sum_ns += add.sum_ns;
  into.min_ns = std::min(into.min_ns, add.min_ns);
  into.max_ns = std::max(into.max_ns, add.max_ns);
  into.mean_ns = mean;
  into.stddev_ns = n > 1.0 ? std::sqrt(std::max(0.0, m2 / (n - 1.0))) : 0.0;
  into.p50_ns = std::max(into.p50_ns, add.p50_ns);
  into.p95_ns = std::max(into.p95_ns, add.p95_ns);
  into.p99_ns = std::max(into.p99_ns, add.p99_ns);
}
void pool(MemoryAttribution& into, const MemoryAttribution& add) {
  into.alloc_bytes += add.alloc_bytes;
  into.alloc_count += add.alloc_count;
  into.free_bytes += add.free_bytes;
  into.free_count += add.free_count;
}
void pool(HeapAttribution& into, const HeapAttribution& add) {
  into.alloc_bytes += add.alloc_bytes;
  into.alloc_count += add.alloc_count;
  into.free_bytes += add.free_bytes;
  into.free_count += add.free_count;
  into.retained_bytes += add.retained_bytes;
  into.retained_blocks += add.retained_blocks;
  into.peak_live_bytes = std::max(into.peak_live_bytes, add.peak_live_bytes);  // separate processes
}

constexpr std::string_view kArgTypes[] = {"string", "int", "real"};  // by SpanArg::Type, as profile_store writes them

std::string display_value(const SpanArg& a) {
  switch (a.type) {
    case SpanArg::Type::Int: return std::to_string(a.int_value);
    case SpanArg::Type::Real: return fmt::format("{}", a.real_value);
    case SpanArg::Type::String: break;
  }
  return a.string_value;
}

// The integer left open in argument sets (format 9's 'slice_int', docs/FORMAT.md): a
// collective's sequence number, and PyTorch's operator sequence number, differ on every call,
// so with the value in the set no two calls would share one.
bool open_int(const SpanArg& a) { return a.type == SpanArg::Type::Int && a.key == collective_arg::kSequence; }

/// A collective call's (group, seq), from its span's arguments (nnprof::collective_arg); nullopt
/// for a span that carries no such pair. The group points into `args`.
struct CollectiveKey {
  const std::string* group = nullptr;
  std::int64_t seq = 0;
};
std::optional<CollectiveKey> collective_key(const std::vector<SpanArg>& args) {
  const std::string* group = nullptr;
  std::optional<std::int64_t> seq;
  for (const SpanArg& a : args) {
    if (a.key == collective_arg::kGroup && a.type == SpanArg::Type::String) group = &a.string_value;
    if (a.key == collective_arg::kSequence && a.type == SpanArg::Type::Int) seq = a.int_value;
  }
  if (group == nullptr || !seq) return std::nullopt;
  return CollectiveKey{group, *seq};
}

/// A span's arguments as one string: equal sets give equal keys (reals bit for bit; the open
/// integer by its key alone).
void append_key(std::string& key, const SpanArg& a, bool open) {
  if (open) {
    key += a.key;
    key += "\0open\x01";
    return;
  }
  key += a.key;
  key += '\0';
  key += static_cast<char>('0' + static_cast<int>(a.type));
  switch (a.type) {
    case SpanArg::Type::Int: key += std::to_string(a.int_value); break;
    case SpanArg::Type::Real: key += std::to_string(std::bit_cast<std::uint64_t>(a.real_value)); break;
    case SpanArg::Type::String: key += a.string_value; break;
  }
  key += '\x01';
}

/// One collective call's arrivals, for judging the clocks' residual against the waits.
struct Arrivals {
  std::int64_t first = std::numeric_limits<std::int64_t>::max();
  std::int64_t last = std::numeric_limits<std::int64_t>::min();
};

/// One synchronising collective of torch.distributed on one rank, on that rank's own clock:
/// entered when its c10d operator started, left when gloo's record of its work ended.
struct SyncTimes {
  std::uint64_t enter_ns = 0;
  std::uint64_t exit_ns = 0;
};
using SyncTable = std::map<std::pair<std::string, std::int64_t>, SyncTimes>;  // by (group, seq)

/// The synchronising torch collectives of one rank's file (`rest`: its load_without_spans) that
/// prove when the rank left them, each paired with its backend's work as the rank analysis
/// pairs them. Left out, since a bound must hold, not merely be likely:
/// - an operator without a paired work: its own span ends at the enqueue, before the other
///   ranks need have arrived;
/// - NCCL's works: PyTorch ends their records when the kernel is enqueued on the GPU, not when
///   it has run;
/// - an operation this rank ran in more than one process group: the pairing goes by operation
///   and start order only, so two groups' works could be crossed.
SyncTable torch_sync_times(const std::string& path, const Profile& rest) {
  std::vector<std::string> c10d_of(rest.strings.size()), work_of(rest.strings.size());
  std::vector<bool> gloo(rest.strings.size(), false);
  for (std::size_t i = 0; i < rest.strings.size(); ++i) {
    c10d_of[i] = analysis::c10d_operation(rest.strings[i]);
    work_of[i] = analysis::backend_work_operation(rest.strings[i]);
    gloo[i] = rest.strings[i].starts_with("gloo:");
  }
  std::vector<analysis::TimedOperation> calls, works;
  std::vector<std::pair<std::string, std::int64_t>> keys;  // of calls
  std::vector<SyncTimes> times;                            // of calls
  std::vector<std::pair<std::uint64_t, bool>> work_ends;   // of works: end, and whether gloo's
  std::map<std::string, std::set<std::string>> groups_of;  // operation -> the groups it ran in
  SpanReader reader(path, rest);
  Span s;
  std::vector<SpanArg> args;
  while (reader.next(s, args)) {
    if (s.name >= rest.strings.size()) continue;
    if (!work_of[s.name].empty()) {
      works.push_back({s.start_ns, work_of[s.name]});
      work_ends.emplace_back(s.end_ns, gloo[s.name]);
      continue;
    }
    if (c10d_of[s.name].empty()) continue;
    const std::optional<CollectiveKey> key = collective_key(args);
    if (!key) continue;
    calls.push_back({s.start_ns, c10d_of[s.name]});
    keys.emplace_back(*key->group, key->seq);
    times.push_back({s.start_ns, s.end_ns});
    groups_of[c10d_of[s.name]].insert(*key->group);
  }
  const std::vector<std::uint32_t> pair = analysis::pair_backend_works(calls, works);
  SyncTable table;
  for (std::size_t k = 0; k < calls.size(); ++k) {
    if (pair[k] == kNone || !work_ends[pair[k]].second || groups_of[calls[k].operation].size() > 1 ||
        !analysis::synchronises_every_member(calls[k].operation))
      continue;
    times[k].exit_ns = std::max(times[k].exit_ns, work_ends[pair[k]].first);
    table.try_emplace(keys[k], times[k]);  // a call recorded twice: its first record
  }
  return table;
}

/// What one rank's torch collectives shared with rank 0 prove about its clock offset: every
/// bound (collective_clock_bound) moved to the rank's reference time by its drift and
/// intersected, so that a rank costs two numbers however many collectives it ran.
struct CollectiveInterval {
  double lower_ns = -std::numeric_limits<double>::infinity();
  double upper_ns = std::numeric_limits<double>::infinity();
  std::uint64_t collectives = 0;
};

CollectiveInterval collective_interval(const SyncTable& mine, const SyncTable& zero, const ClockAlignment& clock) {
  // An unaligned rank is placed with no drift from time 0 (place_by_session_start).
  const double drift = clock.aligned ? clock.drift_ppb * 1e-9 : 0.0;
  const std::int64_t reference = clock.aligned ? clock.reference_ns : 0;
  CollectiveInterval out;
  for (const auto& [key, t] : mine) {
    const auto z = zero.find(key);
    if (z == zero.end()) continue;
    const ClockBound b = collective_clock_bound(static_cast<std::int64_t>(t.enter_ns), static_cast<std::int64_t>(t.exit_ns),
                                                static_cast<std::int64_t>(z->second.enter_ns),
                                                static_cast<std::int64_t>(z->second.exit_ns));
    const double shift = drift * static_cast<double>(b.local_ns - reference);
    out.lower_ns = std::max(out.lower_ns, b.lower_ns - shift);
    out.upper_ns = std::min(out.upper_ns, b.upper_ns - shift);
    ++out.collectives;
  }
  return out;
}

class RankMerger {
 public:
  RankMerger(const RankMergeOptions& options, RankMergeResult& result) : options_(options), result_(result) {
    merged_.call_tree.resize(1);
    merged_.call_tree[0].parent = kNone;
  }

  const Profile& run(Database& db, const std::vector<std::string>& inputs) {
    Statement slice(db, "INSERT INTO slice_data VALUES (?, ?, ?, ?, ?, ?, ?)");
    Statement arg(db, "INSERT INTO args VALUES (?, ?, ?, ?, ?, ?, ?, ?)");
    // A rank without a clock alignment is placed against rank 0's session start: one that comes
    // before rank 0 waits (loaded again after it; one rank is still all that is held).
    std::vector<std::string> after_rank0;
    std::uint64_t slices = 0;
    // The synchronising collectives of torch.distributed bound each rank's clock offset against
    // rank 0's: each rank's are read, and reduced to one interval against rank 0's, before any
    // rank is placed. A second read of those ranks' spans; MPI narrows its clocks itself. Only
    // rank 0's table is kept (and a rank's that comes before rank 0, until it comes).
    {
      std::optional<SyncTable> zero;
      std::vector<std::pair<RankInfo, SyncTable>> before_zero;
      for (const std::string& path : inputs) {
        if (!holds_string_with_prefix(path, "c10d::")) continue;
        const Profile rank = load_without_spans(path, slices);
        if (rank.ranks.size() != 1) continue;  // refused, with the reason, when it is merged
        const RankInfo& info = rank.ranks.front();
        SyncTable table = torch_sync_times(path, rank);
        if (info.rank == 0) {
          zero = std::move(table);
          for (const auto& [other, times] : before_zero)
            collective_intervals_[other.rank] = collective_interval(times, *zero, other.clock);
          before_zero.clear();
        } else if (zero) {
          collective_intervals_[info.rank] = collective_interval(table, *zero, info.clock);
        } else {
          before_zero.emplace_back(info, std::move(table));
        }
      }
    }
    for (const std::string& path : inputs) {
      std::error_code ec;
      const auto bytes = std::filesystem::file_size(path, ec);
      if (!ec) result_.input_bytes += bytes;
      Profile rank = load_without_spans(path, slices);
      if (!rank0_ && rank.ranks.size() == 1 && rank.ranks.front().rank != 0 && !rank.ranks.front().clock.aligned) {
        after_rank0.push_back(path);
        continue;
      }
      add(path, rank, slice, arg);
    }
    for (const std::string& path : after_rank0) {
      Profile rank = load_without_spans(path, slices);
      add(path, rank, slice, arg);
    }
    finish(db);
    return merged_;
  }

 private:
  StringId intern(const std::string& s) {
    const auto [it, added] = interned_.try_emplace(s, static_cast<StringId>(merged_.strings.size()));
    if (added) merged_.strings.push_back(s);
    return it->second;
  }

  void check_rank(const std::string& path, const Profile& p) {
    if (p.ranks.empty())
      throw Error(fmt::format("'{}' is not the profile of a rank of a distributed job (it records no rank): a rank "
                              "merge needs every input recorded as one rank (launched by torchrun, mpirun or srun "
                              "under `nnprof record`); to analyse separate profiles together, write a report "
                              "instead (-o combined.html)",
                              path));
    if (p.ranks.size() > 1)
      throw Error(fmt::format("'{}' is already a merge of {} ranks: merge the ranks' own profiles", path, p.ranks.size()));
    const RankInfo& info = p.ranks.front();
    if (info.world_size <= 0 || info.rank < 0 || info.rank >= info.world_size)
      throw Error(fmt::format("'{}' records rank {} of a world of {}, which is no rank of a job", path, info.rank,
                              info.world_size));
    if (result_.world_size == 0) {
      result_.world_size = static_cast<std::uint32_t>(info.world_size);
      seen_.assign(result_.world_size, {});
    } else if (static_cast<std::uint32_t>(info.world_size) != result_.world_size) {
      throw Error(fmt::format("'{}' is a rank of a job of {} ranks, but the inputs before it were of a job of {}: "
                              "merge the ranks of one job at a time",
                              path, info.world_size, result_.world_size));
    }
    std::optional<std::string>& earlier = seen_[static_cast<std::size_t>(info.rank)];
    if (earlier)
      throw Error(fmt::format("rank {} appears twice: in '{}' and in '{}'; give each rank's profile once", info.rank,
                              *earlier, path));
    earlier = path;
  }

  // The rank's clock onto rank 0's. A rank without an alignment estimate is placed by the
  // session origins: exactly on one host (CLOCK_MONOTONIC is the host's), by the wall clocks
  // otherwise, with their error unknown and said. Either is then narrowed by the torch
  // collectives the rank and rank 0 both ran.
  ClockMap clock_of(const std::string& path, const Profile& p, RankInfo& info) {
    ClockAlignment& c = info.clock;
    if (info.rank == 0) return {};
    const bool by_wall_clock = !c.aligned && !place_by_session_start(path, p, c, info.rank);
    const bool narrowed = narrow_by_collectives(path, info, by_wall_clock);
    if (by_wall_clock)
      result_.warnings.push_back(fmt::format(
          "rank {} ('{}') on host {} has no clock alignment: it is placed by the wall clocks of its host and rank 0's, "
          "whose difference is unknown (NTP keeps it to milliseconds at best); {}",
          info.rank, path, p.meta.hostname,
          narrowed ? fmt::format("the torch collectives it shares with rank 0 place it within ±{}",
                                 format_duration(static_cast<std::uint64_t>(c.residual_ns)))
                   : fmt::format("its residual is taken as {}",
                                 format_duration(static_cast<std::uint64_t>(kWallClockResidualNs)))));
    return {c.offset_ns, c.drift_ppb * 1e-9, static_cast<double>(c.reference_ns)};
  }

  /// Places an unaligned rank by its session's start against rank 0's; true when that is exact
  /// (the same host's CLOCK_MONOTONIC), false when only the wall clocks could be used.
  bool place_by_session_start(const std::string& path, const Profile& p, ClockAlignment& c, std::int32_t rank) const {
    if (!rank0_)
      throw Error(fmt::format("rank {} ('{}') has no clock alignment, so it can only be placed by its session's "
                              "start against rank 0's, and rank 0's profile is not among the inputs",
                              rank, path));
    const bool same_host = p.meta.hostname == rank0_->hostname && p.meta.clock.monotonic_origin_ns != 0;
    c.aligned = true;
    c.reference_ns = 0;
    c.drift_ppb = 0.0;
    if (same_host) {
      c.offset_ns = -static_cast<double>(static_cast<std::int64_t>(p.meta.clock.monotonic_origin_ns -
                                                                    rank0_->clock.monotonic_origin_ns));
      c.method = "merge: session start on the host's CLOCK_MONOTONIC";
      c.residual_ns = 0.0;
      return true;
    }
    c.offset_ns = -static_cast<double>(p.meta.clock.unix_origin_ns - rank0_->clock.unix_origin_ns);
    c.method = "merge: session start on the wall clock (error unknown)";
    c.residual_ns = kWallClockResidualNs;
    return false;
  }

  /// The rank's clock narrowed by the interval its torch collectives shared with rank 0 prove
  /// (refine_clock, with the interval as one bound at the reference time); true when narrowed.
  /// A rank placed by the wall clocks starts from no window at all, since the ±10 ms taken for
  /// them is a guess that the collectives may prove wrong. A rank whose process narrowed its
  /// clock already (MPI, at MPI_Finalize) is left alone. Collectives that contradict the clock
  /// (a clock that stepped, or works paired wrongly) change nothing and are warned about.
  bool narrow_by_collectives(const std::string& path, RankInfo& info, bool by_wall_clock) {
    const auto found = collective_intervals_.find(info.rank);
    if (found == collective_intervals_.end() || found->second.collectives == 0) return false;
    if (info.clock.method.find("+collectives") != std::string::npos) return false;
    const CollectiveInterval& iv = found->second;
    ClockAlignment start = info.clock;
    if (by_wall_clock) start.residual_ns = 1e18;  // 31 years: no window
    const ClockBound bound{iv.lower_ns, iv.upper_ns, info.clock.reference_ns};
    bool narrowed = false;
    ClockAlignment refined = refine_clock(start, std::span(&bound, 1), &narrowed);
    if (narrowed) {
      if (by_wall_clock) refined.method = "merge: session start on the wall clock+collectives";
      info.clock = std::move(refined);
      return true;
    }
    const double lower = info.clock.offset_ns - info.clock.residual_ns, upper = info.clock.offset_ns + info.clock.residual_ns;
    if (iv.lower_ns > iv.upper_ns || iv.upper_ns < lower || iv.lower_ns > upper)
      result_.warnings.push_back(fmt::format(
          "rank {} ('{}'): its {} torch collectives shared with rank 0 {} the offset its clock was placed at ({:.0f} ns "
          "± {:.0f} ns); the placement is kept, but a clock may have stepped during the run",
          info.rank, path, iv.collectives,
          iv.lower_ns > iv.upper_ns ? "contradict each other and"
                                    : fmt::format("put its offset in [{:.0f}, {:.0f}] ns, outside", iv.lower_ns, iv.upper_ns),
          info.clock.offset_ns, info.clock.residual_ns));
    return false;
  }

  void add(const std::string& path, const Profile& p, Statement& slice, Statement& arg) {
    check_rank(path, p);
    RankInfo info = p.ranks.front();
    if (info.rank == 0) rank0_ = p.meta;
    const ClockMap map = clock_of(path, p, info);
    const auto rank_index = static_cast<std::uint32_t>(merged_.ranks.size());
    if (info.hostname.empty()) info.hostname = p.meta.hostname;
    if (info.pid == 0) info.pid = p.meta.pid;
    merged_.ranks.push_back(info);
    result_.clock_residual_ns = std::max(result_.clock_residual_ns, info.clock.residual_ns);
    // Rank 0's facts describe the job; the first input's stand in until it comes (or when it
    // is missing and allowed to be).
    if (info.rank == 0 || merged_.ranks.size() == 1) {
      merged_.meta = p.meta;
      merged_.annotations = p.annotations;
      merged_.machine = p.machine;
      merged_.completeness.buffer_policy = p.completeness.buffer_policy;
      merged_.completeness.overhead_per_scope_ns = p.completeness.overhead_per_scope_ns;
      merged_.completeness.memory_cap_bytes = p.completeness.memory_cap_bytes;
    }
    note_not_carried(path, p);

    std::vector<StringId> string_of(p.strings.size());
    for (std::size_t i = 0; i < p.strings.size(); ++i) string_of[i] = intern(p.strings[i]);
    const auto name = [&](StringId id) { return id < string_of.size() ? string_of[id] : kNone; };
    const auto first_thread = static_cast<std::uint32_t>(merged_.threads.size());
    for (const ThreadInfo& t : p.threads) {
      ThreadInfo copy = t;
      copy.id = first_thread + t.id;
      copy.rank = rank_index;
      merged_.threads.push_back(std::move(copy));
    }
    const auto thread = [&](std::uint32_t t) { return t == kNone ? kNone : first_thread + t; };

    // The call tree by path: a node of this rank becomes the merged node with the same parent
    // and name (parents come before their children in a loaded profile).
    std::vector<std::uint32_t> node_of(p.call_tree.size(), 0);
    for (std::size_t i = 1; i < p.call_tree.size(); ++i) {
      const CallTreeNode& n = p.call_tree[i];
      const std::uint32_t parent = n.parent < i ? node_of[n.parent] : 0;
      const StringId merged_name = name(n.name);
      const auto [it, added] = node_index_.try_emplace({parent, merged_name}, static_cast<std::uint32_t>(merged_.call_tree.size()));
      if (added) {
        CallTreeNode node;
        node.id = it->second;
        node.parent = parent;
        node.name = merged_name;
        node.depth = merged_.call_tree[parent].depth + 1;
        merged_.call_tree.push_back(std::move(node));
        merged_.call_tree[parent].children.push_back(it->second);
      }
      CallTreeNode& into = merged_.call_tree[it->second];
      pool(into.time, n.time);
      into.self_ns += n.self_ns;
      into.thread_count += n.thread_count;
      pool(into.memory, n.memory);
      pool(into.heap, n.heap);
      into.flops += n.flops;
      into.bytes += n.bytes;
      node_of[i] = it->second;
    }
    for (const ScopeStats& s : p.scopes) {
      const StringId merged_name = name(s.name);
      const auto [it, added] = scope_index_.try_emplace(merged_name, merged_.scopes.size());
      if (added) {
        merged_.scopes.emplace_back();
        merged_.scopes.back().name = merged_name;
      }
      ScopeStats& into = merged_.scopes[it->second];
      into.total_ns += s.total_ns;
      into.self_ns += s.self_ns;
      pool(into.time, s.time);
      into.thread_count += s.thread_count;
      pool(into.memory, s.memory);
      pool(into.heap, s.heap);
      into.items += s.items;
      into.flops += s.flops;
      into.bytes += s.bytes;
    }

    // Spans and their arguments, from the input straight to the output. Argument sets are
    // shared within a rank (the map is this rank's: its memory goes with the rank).
    const std::int64_t first_span = next_span_;
    std::unordered_map<std::string, std::int64_t> sets;
    std::string key;
    SpanReader reader(path, p);
    Span s;
    std::vector<SpanArg> args;
    std::uint64_t spans = 0;
    while (reader.next(s, args)) {
      const std::int64_t start = map(s.start_ns);
      const std::int64_t end = std::max(start, map(s.end_ns));
      earliest_ = std::min(earliest_, start);
      latest_ = std::max(latest_, end);
      slice.bind(1, next_span_).bind(2, start).bind(3, end - start).bind(4, std::int64_t{thread(s.thread)});
      slice.bind(5, std::int64_t{node_of[s.node < node_of.size() ? s.node : 0]});
      if (args.empty()) {
        slice.bind_null(6).bind_null(7);
      } else {
        key.clear();
        std::size_t open = args.size();  // the first open integer of the span, if any
        for (std::size_t a = 0; a < args.size(); ++a) {
          if (open == args.size() && open_int(args[a])) open = a;
          append_key(key, args[a], a == open);
        }
        const auto [it, added] = sets.try_emplace(key, next_set_);
        if (added) {
          for (std::size_t a = 0; a < args.size(); ++a) write_arg(arg, args[a], a == open);
          ++next_set_;
        }
        slice.bind(6, it->second);
        if (open != args.size()) slice.bind(7, args[open].int_value); else slice.bind_null(7);
        result_.span_args += args.size();
        note_collective(args, start);
      }
      slice.run();
      ++next_span_;
      ++spans;
    }
    result_.spans += spans;

    for (const Flow& f : p.flows) {
      Flow copy = f;
      for (FlowEndpoint* e : {&copy.out, &copy.in}) {
        e->thread = thread(e->thread);
        e->time_ns = static_cast<std::uint64_t>(map(e->time_ns));  // shifted to the merged origin in finish()
        e->node = e->node < node_of.size() ? node_of[e->node] : 0;
        if (e->span != kNone) e->span = static_cast<std::uint32_t>(first_span + e->span);
      }
      if (copy.wait_begin_ns != Flow::kNoWaitMarked) copy.wait_begin_ns = static_cast<std::uint64_t>(map(copy.wait_begin_ns));
      merged_.flows.push_back(copy);
    }
    for (const Diagnostic& d : p.diagnostics) {
      Diagnostic copy = d;
      copy.thread = thread(d.thread);
      copy.name = name(d.name);
      copy.message = fmt::format("rank {}: {}", info.rank, d.message);
      merged_.diagnostics.push_back(std::move(copy));
    }
    Completeness& q = merged_.completeness;
    q.scopes_recorded += p.completeness.scopes_recorded;
    q.spans_kept += spans;
    q.spans_dropped += p.completeness.spans_dropped;
    q.spans_overwritten += p.completeness.spans_overwritten;
    q.events_dropped += p.completeness.events_dropped;
    q.spans_enabled = q.spans_enabled && p.completeness.spans_enabled;
    q.hot_path_allocations += p.completeness.hot_path_allocations;
    q.overhead_total_ns += p.completeness.overhead_total_ns;
    latest_ = std::max(latest_, map(p.meta.duration_ns));
    earliest_ = std::min(earliest_, map(0));
    ++result_.ranks_merged;
  }

  void write_arg(Statement& st, const SpanArg& a, bool open) {
    st.bind(1, next_arg_row_++).bind(2, next_set_).bind(3, std::string_view(a.key));
    if (open) {  // its value is each slice's slice_data.arg_int
      st.bind(4, std::string_view("slice_int")).bind_null(5).bind_null(6).bind_null(7).bind(8, std::string_view("")).run();
      return;
    }
    st.bind(4, kArgTypes[static_cast<std::size_t>(a.type)]);
    if (a.type == SpanArg::Type::Int) st.bind(5, a.int_value); else st.bind_null(5);
    if (a.type == SpanArg::Type::String) st.bind(6, std::string_view(a.string_value)); else st.bind_null(6);
    if (a.type == SpanArg::Type::Real) st.bind(7, a.real_value); else st.bind_null(7);
    st.bind(8, std::string_view(display_value(a))).run();
  }

  void note_collective(const std::vector<SpanArg>& args, std::int64_t start) {
    // Sequence numbers count calls from 0 in each group: a call's arrivals are found by index,
    // 16 bytes a call, however many ranks. A number far past the calls seen so far (they come
    // one by one) is not judged, so that a stray one cannot make the table huge.
    const std::optional<CollectiveKey> key = collective_key(args);
    if (!key || key->seq < 0) return;
    std::vector<Arrivals>& calls = collectives_[*key->group];
    const auto index = static_cast<std::uint64_t>(key->seq);
    if (index >= calls.size() + kMaxSeqGap) return;
    if (index >= calls.size()) calls.resize(index + 1);
    Arrivals& a = calls[index];
    a.first = std::min(a.first, start);
    a.last = std::max(a.last, start);
  }

  void note_not_carried(const std::string& path, const Profile& p) {
    std::vector<std::string> parts;
    if (!p.cpu_samples.empty()) parts.emplace_back("CPU samples");
    if (p.heap.tracked) parts.emplace_back("heap tracking");
    if (!p.memory_counters.empty()) parts.emplace_back("memory counters");
    if (!p.metrics.empty()) parts.emplace_back("metrics");
    if (p.gpu.summary.traced) parts.emplace_back("GPU activity");
    if (p.system.monitored) parts.emplace_back("system monitor");
    if (parts.empty()) return;
    std::string list;
    for (std::size_t i = 0; i < parts.size(); ++i) list += (i == 0 ? "" : i + 1 == parts.size() ? " and " : ", ") + parts[i];
    result_.warnings.push_back(fmt::format("'{}' has {}, which the merged profile does not carry: open that rank's own "
                                           "profile for them",
                                           path, list));
  }

  void finish(Database& db) {
    if (result_.ranks_merged == 0) throw Error("no ranks to merge");
    for (std::uint32_t r = 0; r < result_.world_size; ++r)
      if (!seen_[r]) result_.missing_ranks.push_back(static_cast<std::int32_t>(r));
    if (!result_.missing_ranks.empty()) {
      std::string list;
      for (std::size_t i = 0; i < result_.missing_ranks.size() && i < 16; ++i)
        list += (i == 0 ? "" : ", ") + std::to_string(result_.missing_ranks[i]);
      if (result_.missing_ranks.size() > 16) list += fmt::format(" and {} more", result_.missing_ranks.size() - 16);
      const std::string what = fmt::format("{} of the job's {} ranks have no profile among the inputs (rank{} {})",
                                           result_.missing_ranks.size(), result_.world_size,
                                           result_.missing_ranks.size() == 1 ? "" : "s", list);
      if (!options_.allow_missing_ranks)
        throw Error(what + ": give every rank's profile, or --allow-missing-ranks to merge those there are (their "
                           "collectives then lack members, and waits for the missing ranks cannot be seen)");
      result_.warnings.push_back(what + ": collectives lack those members, and waits for them cannot be seen");
    }
    judge_residual();

    // The merged origin is the earliest mapped time, so that no time is negative.
    const std::int64_t shift = earliest_ < 0 ? -earliest_ : 0;
    if (shift > 0) db.exec(fmt::format("UPDATE slice_data SET ts = ts + {}", shift));
    const auto shifted = [&](std::uint64_t t) {
      return static_cast<std::uint64_t>(static_cast<std::int64_t>(t) + shift);
    };
    for (Flow& f : merged_.flows) {
      f.out.time_ns = shifted(f.out.time_ns);
      f.in.time_ns = shifted(f.in.time_ns);
      if (f.wait_begin_ns != Flow::kNoWaitMarked) f.wait_begin_ns = shifted(f.wait_begin_ns);
    }
    std::ranges::stable_sort(merged_.flows, {}, [](const Flow& f) { return f.in.time_ns; });
    merged_.meta.clock.monotonic_origin_ns -= static_cast<std::uint64_t>(shift);
    merged_.meta.clock.unix_origin_ns -= shift;
    merged_.meta.duration_ns = static_cast<std::uint64_t>(latest_ + shift);
    merged_.meta.command_line = rank0_ ? rank0_->command_line : merged_.meta.command_line;
    std::ranges::stable_sort(merged_.scopes, [](const ScopeStats& a, const ScopeStats& b) { return a.total_ns > b.total_ns; });
    merged_.completeness.overhead_per_scope_ns =
        merged_.completeness.scopes_recorded == 0
            ? merged_.completeness.overhead_per_scope_ns
            : static_cast<double>(merged_.completeness.overhead_total_ns) /
                  static_cast<double>(merged_.completeness.scopes_recorded);
  }

  // `nnprof merge` refuses when the clocks' error is larger than every wait it would judge,
  // and warns when it is larger than the typical one: such waits are clock error, not waiting.
  void judge_residual() {
    std::vector<std::uint64_t> spreads;
    for (const auto& [group, calls] : collectives_)
      for (const Arrivals& a : calls)
        if (a.last >= a.first) spreads.push_back(static_cast<std::uint64_t>(a.last - a.first));
    result_.collectives = spreads.size();
    if (spreads.empty()) return;
    std::ranges::sort(spreads);
    result_.median_spread_ns = spreads[spreads.size() / 2];
    result_.max_spread_ns = spreads.back();
    const double residual = result_.clock_residual_ns;
    if (residual > static_cast<double>(result_.max_spread_ns)) {
      const std::string what = fmt::format(
          "the ranks' clocks are aligned to within {} only, more than the largest wait at any of the {} collectives "
          "({}): every wait the merged profile would show could be clock error",
          format_duration(static_cast<std::uint64_t>(residual)), spreads.size(), format_duration(result_.max_spread_ns));
      if (!options_.allow_clock_residual)
        throw Error(what + "; align the clocks better when recording (more exchanges, one host), or "
                           "--allow-clock-residual to merge anyway");
      result_.warnings.push_back(what);
    } else if (residual > static_cast<double>(result_.median_spread_ns)) {
      result_.warnings.push_back(fmt::format(
          "the ranks' clocks are aligned to within {}, more than the median wait at a collective ({}): waits shorter "
          "than the residual are not told from clock error (the report marks them)",
          format_duration(static_cast<std::uint64_t>(residual)), format_duration(result_.median_spread_ns)));
    }
  }

  // Ranks without an alignment on other hosts are placed by the wall clock, assumed this far off.
  static constexpr double kWallClockResidualNs = 10e6;
  std::map<std::int32_t, CollectiveInterval> collective_intervals_;  ///< by rank: what its torch collectives prove

  const RankMergeOptions& options_;
  RankMergeResult& result_;
  Profile merged_;
  std::unordered_map<std::string, StringId> interned_;
  std::map<std::pair<std::uint32_t, StringId>, std::uint32_t> node_index_;
  std::unordered_map<StringId, std::size_t> scope_index_;
  std::vector<std::optional<std::string>> seen_;  ///< by rank: the file it came from
  std::optional<Metadata> rank0_;
  std::unordered_map<std::string, std::vector<Arrivals>> collectives_;  ///< by group, by seq
  static constexpr std::uint64_t kMaxSeqGap = 1 << 16;
  std::int64_t next_span_ = 0;
  std::int64_t next_set_ = 0;
  std::int64_t next_arg_row_ = 0;
  std::int64_t earliest_ = std::numeric_limits<std::int64_t>::max();
  std::int64_t latest_ = 0;
};

}  // namespace

std::vector<std::string> natural_order(std::vector<std::string> inputs) {
  const auto less = [](const std::string& a, const std::string& b) {
    std::size_t i = 0, j = 0;
    while (i < a.size() && j < b.size()) {
      if (std::isdigit(static_cast<unsigned char>(a[i])) && std::isdigit(static_cast<unsigned char>(b[j]))) {
        std::size_t ie = i, je = j;
        while (ie < a.size() && std::isdigit(static_cast<unsigned char>(a[ie]))) ++ie;
        while (je < b.size() && std::isdigit(static_cast<unsigned char>(b[je]))) ++je;
        std::string_view na(a.data() + i, ie - i), nb(b.data() + j, je - j);
        while (na.size() > 1 && na.front() == '0') na.remove_prefix(1);
        while (nb.size() > 1 && nb.front() == '0') nb.remove_prefix(1);
        if (na.size() != nb.size()) return na.size() < nb.size();
        if (na != nb) return na < nb;
        i = ie;
        j = je;
      } else {
        if (a[i] != b[j]) return a[i] < b[j];
        ++i;
        ++j;
      }
    }
    return a.size() - i < b.size() - j;
  };
  std::ranges::stable_sort(inputs, less);
  return inputs;
}

RankMergeResult merge_rank_profiles(const std::vector<std::string>& inputs, const std::string& output,
                                    const RankMergeOptions& options) {
  if (inputs.size() < 2) throw Error("a rank merge needs the profiles of two or more ranks");
  RankMergeResult result;
  const std::vector<std::string> ordered = natural_order(inputs);
  RankMerger merger(options, result);  // outlives the write that reads the profile it returns
  save_streamed(output, [&](Database& db) -> const Profile& { return merger.run(db, ordered); });
  return result;
}

}  // namespace nnprof::io
