// The .nnprof file: a SQLite database (schema in docs/FORMAT.md) that round-trips a Profile
// exactly. Tables are named as in Perfetto's trace processor where the concept is the same
// (thread, slice, counter_track, counter), so `sqlite3 run.nnprof` is a query engine.
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <bit>
#include <chrono>
#include <cerrno>
#include <cstring>
#include <cstdio>
#include <filesystem>
#include <functional>
#include <limits>
#include <map>
#include <memory>
#include <optional>
#include <ostream>
#include <string_view>
#include <unordered_map>
#include <unordered_set>
#include <variant>

#include <fmt/format.h>

#include "report/format.hpp"
#include "io/exporter_registry.hpp"
#include "io/flow_store.hpp"
#include "io/rank_store.hpp"
#include "io/gpu_store.hpp"
#include "io/metric_store.hpp"
#include "io/system_store.hpp"
#include "io/continuous_store.hpp"
#include "io/output_file.hpp"
#include "io/profile_store.hpp"
#include "io/progress.hpp"
#include "io/sqlite.hpp"
#include "model/annotation_key.hpp"
#include "model/enum_parse.hpp"
#include "nnprof/error.hpp"
#include "nnprof/profile.hpp"

namespace nnprof {

namespace {

using io::sqlite::Database;
using io::sqlite::Row;
using io::sqlite::Statement;

constexpr int kSchemaVersion = 11;
// Version 2 added heap tracking: heap columns on the scope tables, frame, callsite, stack,
// leak_site, the heap timeline as counter tracks, and the heap summary in meta.
// Version 3 added CPU sampling: cpu_profile_stack_sample, frame.inlined, the cpu_* meta keys.
// Version 4 added declared work: flops and bytes on the scope tables, the machine_* meta keys.
// Version 5 added run annotations (Profiler::annotate): the annotation table.
// Version 6 added GPU tracing: the gpu_* tables and the gpu_* meta keys (io/gpu_store.cpp).
// Version 7 added span arguments (ProfileGuard::arg): the args table, slice.arg_set_id; and
// the largest single heap allocation: the heap_largest_alloc_bytes meta key and
// memory_counter.largest_alloc_bytes.
// Version 8 stores identical argument sets once: slice_data.arg_set_id (NULL: no arguments)
// names a set of args rows shared by every slice with the same arguments.
// Version 9 lets a set leave one integer open, given per slice: an args row of value_type
// 'slice_int' takes its value from slice_data.arg_int. The save opens the integer key whose
// values are nearly all distinct (PyTorch's autograd sequence number, `seq`), which otherwise
// gave every operator call a set of its own.
// Version 10 added the system monitor: system_info, system_sample, system_counter_track,
// system_counter, energy_domain and system_note (io/system_store.cpp).
// Version 11 added the ranks of a distributed job: rank and thread_rank (io/rank_store.cpp).
constexpr int kApplicationId = 0x6E6E7066;  // "nnpf" in the SQLite header: file(1) can tell

constexpr const char* kSchema = R"sql(
CREATE TABLE meta(key TEXT PRIMARY KEY, value) WITHOUT ROWID;
CREATE TABLE strings(id INTEGER PRIMARY KEY, str TEXT NOT NULL);
CREATE TABLE thread(utid INTEGER PRIMARY KEY, tid INTEGER NOT NULL, name TEXT NOT NULL, exited INTEGER NOT NULL,
  scopes_recorded INTEGER NOT NULL, top_level_ns INTEGER NOT NULL);
CREATE TABLE scope_tree(id INTEGER PRIMARY KEY, parent_id INTEGER, name_id INTEGER, depth INTEGER NOT NULL,
  child_rank INTEGER NOT NULL, thread_count INTEGER NOT NULL, count INTEGER NOT NULL, sum_ns INTEGER NOT NULL,
  min_ns INTEGER NOT NULL, max_ns INTEGER NOT NULL, mean_ns REAL NOT NULL, stddev_ns REAL NOT NULL,
  p50_ns INTEGER NOT NULL, p95_ns INTEGER NOT NULL, p99_ns INTEGER NOT NULL, self_ns INTEGER NOT NULL,
  alloc_bytes INTEGER NOT NULL, alloc_count INTEGER NOT NULL, free_bytes INTEGER NOT NULL, free_count INTEGER NOT NULL,
  heap_alloc_bytes INTEGER NOT NULL, heap_alloc_count INTEGER NOT NULL, heap_free_bytes INTEGER NOT NULL,
  heap_free_count INTEGER NOT NULL, heap_retained_bytes INTEGER NOT NULL, heap_retained_blocks INTEGER NOT NULL,
  heap_peak_live_bytes INTEGER NOT NULL, flops REAL NOT NULL, bytes INTEGER NOT NULL);
CREATE TABLE scope_stats(rank INTEGER PRIMARY KEY, name_id INTEGER NOT NULL, total_ns INTEGER NOT NULL,
  self_ns INTEGER NOT NULL, count INTEGER NOT NULL, sum_ns INTEGER NOT NULL, min_ns INTEGER NOT NULL,
  max_ns INTEGER NOT NULL, mean_ns REAL NOT NULL, stddev_ns REAL NOT NULL, p50_ns INTEGER NOT NULL,
  p95_ns INTEGER NOT NULL, p99_ns INTEGER NOT NULL, thread_count INTEGER NOT NULL, items INTEGER NOT NULL,
  alloc_bytes INTEGER NOT NULL, alloc_count INTEGER NOT NULL, free_bytes INTEGER NOT NULL, free_count INTEGER NOT NULL,
  heap_alloc_bytes INTEGER NOT NULL, heap_alloc_count INTEGER NOT NULL, heap_free_bytes INTEGER NOT NULL,
  heap_free_count INTEGER NOT NULL, heap_retained_bytes INTEGER NOT NULL, heap_retained_blocks INTEGER NOT NULL,
  heap_peak_live_bytes INTEGER NOT NULL, flops REAL NOT NULL, bytes INTEGER NOT NULL);
CREATE TABLE slice_data(id INTEGER PRIMARY KEY, ts INTEGER NOT NULL, dur INTEGER NOT NULL, utid INTEGER NOT NULL,
  node_id INTEGER NOT NULL, arg_set_id INTEGER, arg_int INTEGER);
CREATE VIEW slice AS
  SELECT d.id AS id, d.ts AS ts, d.dur AS dur, d.utid AS utid, s.str AS name, t.depth AS depth,
         d.node_id AS node_id, t.name_id AS name_id, d.arg_set_id AS arg_set_id, d.arg_int AS arg_int
  FROM slice_data d JOIN scope_tree t ON t.id = d.node_id JOIN strings s ON s.id = t.name_id;
CREATE TABLE args(id INTEGER PRIMARY KEY, arg_set_id INTEGER NOT NULL, key TEXT NOT NULL, value_type TEXT NOT NULL,
  int_value INTEGER, string_value TEXT, real_value REAL, display_value TEXT NOT NULL);
CREATE TABLE memory_counter(id INTEGER PRIMARY KEY, name_id INTEGER NOT NULL, current_bytes INTEGER NOT NULL,
  peak_bytes INTEGER NOT NULL, alloc_bytes INTEGER NOT NULL, freed_bytes INTEGER NOT NULL,
  alloc_count INTEGER NOT NULL, free_count INTEGER NOT NULL, largest_alloc_bytes INTEGER NOT NULL);
CREATE TABLE counter_track(id INTEGER PRIMARY KEY, name TEXT NOT NULL, unit TEXT NOT NULL,
  memory_counter_id INTEGER, kind TEXT NOT NULL);
CREATE TABLE counter(id INTEGER PRIMARY KEY, ts INTEGER NOT NULL, track_id INTEGER NOT NULL, value REAL NOT NULL,
  delta INTEGER NOT NULL, utid INTEGER);
CREATE TABLE frame(id INTEGER PRIMARY KEY, address INTEGER NOT NULL, function_id INTEGER, file_id INTEGER,
  line INTEGER NOT NULL, module_id INTEGER, module_offset INTEGER NOT NULL, inlined INTEGER NOT NULL);
CREATE TABLE callsite(id INTEGER PRIMARY KEY, parent_id INTEGER, frame_id INTEGER NOT NULL, depth INTEGER NOT NULL);
CREATE TABLE stack(id INTEGER PRIMARY KEY, callsite_id INTEGER);
CREATE TABLE leak_site(id INTEGER PRIMARY KEY, node_id INTEGER NOT NULL, caller_frame_id INTEGER, stack_id INTEGER,
  reachable INTEGER NOT NULL, blocks INTEGER NOT NULL, bytes INTEGER NOT NULL);
CREATE TABLE cpu_profile_stack_sample(id INTEGER PRIMARY KEY, ts INTEGER NOT NULL, utid INTEGER NOT NULL,
  stack_id INTEGER, node_id INTEGER NOT NULL, weight_ns INTEGER NOT NULL);
CREATE TABLE diagnostic(id INTEGER PRIMARY KEY, kind TEXT NOT NULL, severity TEXT NOT NULL, utid INTEGER,
  name_id INTEGER, count INTEGER NOT NULL, message TEXT NOT NULL);
CREATE TABLE annotation(key TEXT PRIMARY KEY, value TEXT NOT NULL) WITHOUT ROWID;
)sql";

// ---- meta: one list of (key, field) pairs serves both directions ---------------------

/// An index that may be kNone, stored as NULL rather than as 4294967295.
template <class U32>
struct OptionalId {
  U32 id;
};

template <class P>
auto meta_fields(P& p) {
  using std::add_pointer_t;
  constexpr bool c = std::is_const_v<P>;
  using S = std::conditional_t<c, const std::string*, std::string*>;
  using U = std::conditional_t<c, const std::uint64_t*, std::uint64_t*>;
  using I = std::conditional_t<c, const std::int64_t*, std::int64_t*>;
  using D = std::conditional_t<c, const double*, double*>;
  using U32 = std::conditional_t<c, const std::uint32_t*, std::uint32_t*>;
  using B = std::conditional_t<c, const bool*, bool*>;
  using Id = OptionalId<U32>;
  using Field = std::variant<S, U, I, D, U32, B, Id>;
  auto& m = p.meta;
  auto& k = p.meta.clock;
  auto& q = p.completeness;
  auto& h = p.heap;
  auto& cpu = p.cpu;
  auto& mp = p.machine;
  return std::vector<std::pair<const char*, Field>>{
      {"nnprof_version", &m.nnprof_version},
      {"hostname", &m.hostname},
      {"os", &m.os},
      {"cpu_model", &m.cpu_model},
      {"logical_cpus", &m.logical_cpus},
      {"compiler", &m.compiler},
      {"command_line", &m.command_line},
      {"pid", &m.pid},
      {"duration_ns", &m.duration_ns},
      {"clock_source", &k.source},
      {"clock_ns_per_tick", &k.ns_per_tick},
      {"clock_tick_origin", &k.tick_origin},
      {"clock_monotonic_origin_ns", &k.monotonic_origin_ns},
      {"clock_unix_origin_ns", &k.unix_origin_ns},
      {"clock_relative_error", &k.relative_error},
      {"memory_current_bytes", &p.memory.current_bytes},
      {"memory_peak_bytes", &p.memory.peak_bytes},
      {"memory_peak_time_ns", &p.memory.peak_time_ns},
      {"scopes_recorded", &q.scopes_recorded},
      {"spans_kept", &q.spans_kept},
      {"spans_dropped", &q.spans_dropped},
      {"spans_overwritten", &q.spans_overwritten},
      {"events_dropped", &q.events_dropped},
      {"spans_enabled", &q.spans_enabled},
      {"buffer_policy", &q.buffer_policy},
      {"memory_cap_bytes", &q.memory_cap_bytes},
      {"hot_path_allocations", &q.hot_path_allocations},
      {"overhead_per_scope_ns", &q.overhead_per_scope_ns},
      {"overhead_total_ns", &q.overhead_total_ns},
      {"heap_tracked", &h.tracked},
      {"heap_source", &h.source},
      {"heap_alloc_bytes", &h.alloc_bytes},
      {"heap_alloc_count", &h.alloc_count},
      {"heap_free_bytes", &h.free_bytes},
      {"heap_free_count", &h.free_count},
      {"heap_current_bytes", &h.current_bytes},
      {"heap_current_blocks", &h.current_blocks},
      {"heap_peak_bytes", &h.peak_bytes},
      {"heap_peak_time_ns", &h.peak_time_ns},
      {"heap_peak_utid", Id{&h.peak_thread}},
      {"heap_peak_node_id", &h.peak_node},
      {"heap_peak_resolution_bytes", &h.peak_resolution_bytes},
      {"heap_untracked_frees", &h.untracked_frees},
      {"heap_untracked_allocs", &h.untracked_allocs},
      {"heap_leaked_bytes", &h.leaked_bytes},
      {"heap_leaked_blocks", &h.leaked_blocks},
      {"heap_reachable_bytes", &h.reachable_bytes},
      {"heap_reachable_blocks", &h.reachable_blocks},
      {"heap_reachability_checked", &h.reachability_checked},
      {"heap_stack_sample_bytes", &h.stack_sample_bytes},
      {"heap_sample_interval_ns", &h.sample_interval_ns},
      {"rss_initial_bytes", &h.rss_initial_bytes},
      {"rss_peak_bytes", &h.rss_peak_bytes},
      {"rss_final_bytes", &h.rss_final_bytes},
      {"heap_largest_alloc_bytes", &h.largest_alloc_bytes},
      {"cpu_sampled", &cpu.sampled},
      {"cpu_mode", &cpu.mode},
      {"cpu_mechanism", &cpu.mechanism},
      {"cpu_unwinder", &cpu.unwinder},
      {"cpu_requested_hz", &cpu.requested_hz},
      {"cpu_period_ns", &cpu.period_ns},
      {"cpu_samples", &cpu.samples},
      {"cpu_samples_dropped", &cpu.samples_dropped},
      {"cpu_truncated_stacks", &cpu.truncated_stacks},
      {"cpu_threads_sampled", &cpu.threads_sampled},
      {"machine_cpu_model", &mp.cpu_model},
      {"machine_threads", &mp.threads},
      {"machine_isa", &mp.isa},
      {"machine_fp32_flops", &mp.fp32_flops},
      {"machine_fp64_flops", &mp.fp64_flops},
      {"machine_fp32_flops_one_core", &mp.fp32_flops_one_core},
      {"machine_fp64_flops_one_core", &mp.fp64_flops_one_core},
      {"machine_bandwidth", &mp.bandwidth},
      {"machine_bandwidth_one_core", &mp.bandwidth_one_core},
      {"machine_measured_unix", &mp.measured_unix},
  };
}

std::int64_t i64(std::uint64_t v) { return static_cast<std::int64_t>(v); }

void bind_stats(Statement& st, int first, const DurationStats& t) {
  st.bind_u64(first, t.count)
      .bind_u64(first + 1, t.sum_ns)
      .bind_u64(first + 2, t.min_ns)
      .bind_u64(first + 3, t.max_ns)
      .bind(first + 4, t.mean_ns)
      .bind(first + 5, t.stddev_ns)
      .bind_u64(first + 6, t.p50_ns)
      .bind_u64(first + 7, t.p95_ns)
      .bind_u64(first + 8, t.p99_ns);
}

DurationStats read_stats(const Row& st, int first) {
  DurationStats t;
  t.count = st.u64(first);
  t.sum_ns = st.u64(first + 1);
  t.min_ns = st.u64(first + 2);
  t.max_ns = st.u64(first + 3);
  t.mean_ns = st.f64(first + 4);
  t.stddev_ns = st.f64(first + 5);
  t.p50_ns = st.u64(first + 6);
  t.p95_ns = st.u64(first + 7);
  t.p99_ns = st.u64(first + 8);
  return t;
}

void bind_memory(Statement& st, int first, const MemoryAttribution& m) {
  st.bind_u64(first, m.alloc_bytes).bind_u64(first + 1, m.alloc_count).bind_u64(first + 2, m.free_bytes);
  st.bind_u64(first + 3, m.free_count);
}

MemoryAttribution read_memory(const Row& st, int first) {
  return MemoryAttribution{st.u64(first), st.u64(first + 1), st.u64(first + 2), st.u64(first + 3)};
}

void bind_heap(Statement& st, int first, const HeapAttribution& h) {
  st.bind_u64(first, h.alloc_bytes).bind_u64(first + 1, h.alloc_count).bind_u64(first + 2, h.free_bytes);
  st.bind_u64(first + 3, h.free_count).bind_u64(first + 4, h.retained_bytes).bind_u64(first + 5, h.retained_blocks);
  st.bind_u64(first + 6, h.peak_live_bytes);
}

HeapAttribution read_heap(const Row& st, int first) {
  return HeapAttribution{st.u64(first),     st.u64(first + 1), st.u64(first + 2), st.u64(first + 3),
                         st.u64(first + 4), st.u64(first + 5), st.u64(first + 6)};
}

void bind_id(Statement& st, int i, std::uint32_t id) {
  if (id == kNone)
    st.bind_null(i);
  else
    st.bind(i, static_cast<std::int64_t>(id));
}

// One meta value (parameter 2 of the insert, column 1 of the select), by its type.
void bind_meta(Statement& st, const std::string* v) { st.bind(2, std::string_view(*v)); }
void bind_meta(Statement& st, const double* v) { st.bind(2, *v); }
void bind_meta(Statement& st, const std::uint64_t* v) { st.bind_u64(2, *v); }
void bind_meta(Statement& st, OptionalId<const std::uint32_t*> v) { bind_id(st, 2, *v.id); }
template <class T>
void bind_meta(Statement& st, const T* v) {
  st.bind(2, static_cast<std::int64_t>(*v));
}

void read_meta_value(const Row& r, std::string* v) { *v = r.text(1); }
void read_meta_value(const Row& r, double* v) { *v = r.f64(1); }
void read_meta_value(const Row& r, std::uint64_t* v) { *v = r.u64(1); }
void read_meta_value(const Row& r, bool* v) { *v = r.flag(1); }
void read_meta_value(const Row& r, OptionalId<std::uint32_t*> v) { *v.id = r.optional_u32(1); }
template <class T>
void read_meta_value(const Row& r, T* v) {
  *v = r.ranged<T>(1);
}

// The format version that added a meta key (the groups of meta_fields, in order).
std::int64_t meta_key_since(std::string_view key) {
  if (key == "heap_largest_alloc_bytes") return 7;
  if (key.starts_with("heap_") || key.starts_with("rss_")) return 2;
  if (key.starts_with("cpu_") && key != "cpu_model") return 3;
  if (key.starts_with("machine_")) return 4;
  return 1;
}

// The tables each format version has (docs/FORMAT.md); the loader reads them all.
struct RequiredTable {
  const char* name;
  std::int64_t since;
};
constexpr RequiredTable kRequiredTables[] = {
    {"meta", 1},      {"strings", 1},      {"thread", 1},  {"scope_tree", 1},        {"scope_stats", 1},
    {"slice_data", 1}, {"memory_counter", 1}, {"counter_track", 1}, {"counter", 1}, {"diagnostic", 1},
    {"frame", 2},     {"callsite", 2},     {"stack", 2},   {"leak_site", 2},         {"cpu_profile_stack_sample", 3},
    {"annotation", 5}, {"args", 7}, {"system_info", 10}, {"system_sample", 10}, {"system_counter_track", 10},
    {"system_counter", 10}, {"energy_domain", 10}, {"system_note", 10},
    {"rank", 11}, {"thread_rank", 11},
    {"system_counter", 10}, {"energy_domain", 10}, {"system_note", 10}, {"continuous_info", 11},
    {"continuous_window", 11}, {"window_scope", 11}, {"window_function", 11}, {"anomaly", 11}, {"trend", 11},
};

// ---- span arguments: the args table, named and typed as Perfetto's ---------------------

constexpr std::string_view kArgTypes[] = {"string", "int", "real"};  // by SpanArg::Type
constexpr std::string_view kSliceIntType = "slice_int";  // version 9: an Int given per slice (slice_data.arg_int)

std::string display_value(const SpanArg& a) {
  switch (a.type) {
    case SpanArg::Type::Int: return std::to_string(a.int_value);
    case SpanArg::Type::Real: return fmt::format("{}", a.real_value);
    case SpanArg::Type::String: break;
  }
  return a.string_value;
}

// Version 8 keeps each distinct argument set once, as Perfetto does: operator capture gives
// most calls of an operator the same arguments (scope, shapes, dtypes, work), so sharing
// their rows makes the args table, and the time to write it, a fraction of one row per
// argument. A set is a span's arguments in the order attached; two sets are the same when
// every key, type and value is, reals compared bit for bit (a NaN is the same as itself, so
// sets with one are still shared).
bool same_arg(const SpanArg& a, const SpanArg& b) {
  if (a.type != b.type || a.key != b.key) return false;
  switch (a.type) {
    case SpanArg::Type::Int: return a.int_value == b.int_value;
    case SpanArg::Type::Real:
      return std::bit_cast<std::uint64_t>(a.real_value) == std::bit_cast<std::uint64_t>(b.real_value);
    case SpanArg::Type::String: break;
  }
  return a.string_value == b.string_value;
}

std::uint64_t mix_hash(std::uint64_t h, std::uint64_t v) {
  h ^= v + 0x9E3779B97F4A7C15ull + (h << 6) + (h >> 2);
  return h * 0xFF51AFD7ED558CCDull;
}

std::uint64_t hash_arg(const SpanArg& a) {
  std::uint64_t h = mix_hash(std::hash<std::string_view>{}(a.key), static_cast<std::uint64_t>(a.type));
  switch (a.type) {
    case SpanArg::Type::Int: return mix_hash(h, static_cast<std::uint64_t>(a.int_value));
    case SpanArg::Type::Real: return mix_hash(h, std::bit_cast<std::uint64_t>(a.real_value));
    case SpanArg::Type::String: break;
  }
  return mix_hash(h, std::hash<std::string_view>{}(a.string_value));
}

/// A span's arguments: p.span_args[first, end), with their hash.
struct ArgRange {
  std::uint64_t hash;
  std::uint32_t first;
  std::uint32_t end;
};

/// The argument sets of a profile: each span's set (kNone: no arguments), and the first
/// span's arguments of every distinct set, by set id (first-seen order). One integer key may
/// be left open (`open_key`): a span's first Int argument of that key is compared and hashed
/// by key alone, and its value is stored with the slice (`open_value`, `has_open`).
struct ArgSets {
  std::vector<std::uint32_t> of_span;
  std::vector<ArgRange> sets;
  std::string open_key;                  ///< empty: no key is open
  std::vector<bool> open;                ///< by index in p.span_args: the open argument of its span
  std::vector<std::int64_t> open_value;  ///< by span
  std::vector<bool> has_open;            ///< by span
};

/// The integer key to leave open: the one whose values are the most distinct, when at least
/// half of its values (and 64) differ from each other. Empty when none qualifies.
std::string open_int_key(const Profile& p) {
  struct Seen {
    std::uint64_t count = 0;
    std::unordered_set<std::int64_t> values;
  };
  std::unordered_map<std::string_view, Seen> by_key;
  for (const SpanArg& a : p.span_args) {
    if (a.type != SpanArg::Type::Int) continue;
    Seen& seen = by_key[a.key];
    ++seen.count;
    seen.values.insert(a.int_value);
  }
  std::string best;
  std::size_t best_distinct = 0;
  for (const auto& [key, seen] : by_key) {
    const std::size_t distinct = seen.values.size();
    if (distinct >= 64 && 2 * distinct >= seen.count && distinct > best_distinct) {
      best = std::string(key);
      best_distinct = distinct;
    }
  }
  return best;
}

ArgSets arg_sets(const Profile& p) {
  const std::vector<SpanArg>& args = p.span_args;
  ArgSets out;
  out.open_key = open_int_key(p);
  out.open.assign(args.size(), false);
  out.open_value.assign(p.spans.size(), 0);
  out.has_open.assign(p.spans.size(), false);
  const auto same = [&](std::uint32_t i, std::uint32_t j) {
    if (out.open[i] != out.open[j]) return false;
    return out.open[i] ? args[i].key == args[j].key : same_arg(args[i], args[j]);
  };
  const auto same_set = [&](const ArgRange& a, const ArgRange& b) {
    if (a.hash != b.hash || a.end - a.first != b.end - b.first) return false;
    for (std::uint32_t k = 0; k < a.end - a.first; ++k)
      if (!same(a.first + k, b.first + k)) return false;
    return true;
  };
  const auto by_hash = [](const ArgRange& r) { return static_cast<std::size_t>(r.hash); };
  std::unordered_map<ArgRange, std::uint32_t, decltype(by_hash), decltype(same_set)> ids(0, by_hash, same_set);
  out.of_span.assign(p.spans.size(), kNone);
  for (std::size_t i = 0; i < args.size();) {
    const std::uint32_t span = args[i].span;
    ArgRange range{0, static_cast<std::uint32_t>(i), 0};
    std::uint64_t h = 0;
    for (; i < args.size() && args[i].span == span; ++i) {
      const SpanArg& a = args[i];
      if (!out.open_key.empty() && !out.has_open[span] && a.type == SpanArg::Type::Int && a.key == out.open_key) {
        out.open[i] = true;
        out.has_open[span] = true;
        out.open_value[span] = a.int_value;
        h = mix_hash(h, mix_hash(std::hash<std::string_view>{}(a.key), 0x0BE4ull));
      } else {
        h = mix_hash(h, hash_arg(a));
      }
    }
    range.hash = h;
    range.end = static_cast<std::uint32_t>(i);
    const auto [found, added] = ids.try_emplace(range, static_cast<std::uint32_t>(out.sets.size()));
    if (added) out.sets.push_back(range);
    out.of_span[span] = found->second;
  }
  return out;
}

// Each distinct set's rows once, sets one after another by id, a set's rows in the order
// attached; slice_data.arg_set_id names the set.
void write_arg_sets(Database& db, const Profile& p, const ArgSets& sets) {
  Statement st(db, "INSERT INTO args VALUES (?, ?, ?, ?, ?, ?, ?, ?)");
  std::int64_t id = 0;
  for (std::size_t set = 0; set < sets.sets.size(); ++set) {
    for (std::uint32_t i = sets.sets[set].first; i < sets.sets[set].end; ++i) {
      const SpanArg& a = p.span_args[i];
      st.bind(1, id++).bind(2, i64(set)).bind(3, std::string_view(a.key));
      if (sets.open[i]) {  // its value is each slice's slice_data.arg_int
        st.bind(4, kSliceIntType).bind_null(5).bind_null(6).bind_null(7).bind(8, std::string_view("")).run();
        continue;
      }
      st.bind(4, kArgTypes[static_cast<std::size_t>(a.type)]);
      if (a.type == SpanArg::Type::Int) st.bind(5, a.int_value); else st.bind_null(5);
      if (a.type == SpanArg::Type::String) st.bind(6, std::string_view(a.string_value)); else st.bind_null(6);
      if (a.type == SpanArg::Type::Real) st.bind(7, a.real_value); else st.bind_null(7);
      st.bind(8, std::string_view(display_value(a))).run();
    }
  }
}

// ---- writing -------------------------------------------------------------------------

void check_consistent(const Profile& p) {
  for (const auto& [key, value] : p.annotations)
    if (!is_valid_annotation_key(key))
      throw Error(fmt::format("cannot save: annotation key '{}' is empty or has characters other than printable "
                              "ASCII (Profiler::annotate refuses such keys)",
                              key));
  for (std::size_t i = 0; i < p.stacks.size(); ++i)
    for (const std::uint32_t frame : p.stacks[i].frames)
      if (frame >= p.frames.size())
        throw Error(fmt::format("cannot save: stack {} refers to frame {} of {}; the profile was built "
                                "inconsistently",
                                i, frame, p.frames.size()));
  for (std::size_t i = 0; i < p.spans.size(); ++i) {
    const Span& s = p.spans[i];
    if (s.node >= p.call_tree.size() || p.call_tree[s.node].name != s.name || p.call_tree[s.node].depth != s.depth)
      throw Error(fmt::format("cannot save: span {} does not match its call-tree node (name and depth of a span "
                              "are those of its node); the profile was built inconsistently",
                              i));
  }
  // A span's arguments are one run of span_args: that run is its argument set.
  for (std::size_t i = 0; i < p.span_args.size(); ++i) {
    const std::uint32_t span = p.span_args[i].span;
    if (span >= p.spans.size() || (i > 0 && span < p.span_args[i - 1].span))
      throw Error(fmt::format("cannot save: span argument {} refers to span {} of {}, or is out of span order; the "
                              "profile was built inconsistently",
                              i, span, p.spans.size()));
  }
}

// The three series of the heap timeline, each a counter track after those of the memory
// counters. `delta` holds the exact change from the previous sample, so that values above
// 2^53 bytes (where the REAL `value` rounds) still read back exactly.
struct HeapSeries {
  const char* kind;
  const char* name;
  std::uint64_t HeapSample::*field;
};
constexpr HeapSeries kHeapSeries[] = {{"heap", "heap in use", &HeapSample::heap_bytes},
                                      {"rss", "RSS", &HeapSample::rss_bytes},
                                      {"rss_peak", "RSS peak (VmHWM)", &HeapSample::rss_peak_bytes}};

void write_heap_timeline(Database& db, const Profile& p, std::int64_t next_counter_id) {
  if (!p.heap.tracked && p.heap_samples.empty()) return;
  Statement track(db, "INSERT INTO counter_track VALUES (?, ?, 'bytes', NULL, ?)");
  Statement row(db, "INSERT INTO counter VALUES (?, ?, ?, ?, ?, NULL)");
  std::int64_t track_id = i64(p.memory_counters.size());
  for (const HeapSeries& series : kHeapSeries) {
    track.bind(1, track_id).bind(2, std::string_view(series.name)).bind(3, std::string_view(series.kind)).run();
    std::uint64_t previous = 0;
    for (const HeapSample& sample : p.heap_samples) {
      const std::uint64_t value = sample.*series.field;
      row.bind(1, next_counter_id++).bind_u64(2, sample.time_ns).bind(3, track_id);
      row.bind(4, static_cast<double>(value)).bind_u64(5, value - previous).run();
      previous = value;
    }
    ++track_id;
  }
}

// Stacks as Perfetto stores them: a callsite is a frame under its caller's callsite, so
// stacks that share their outer frames share rows. A stack names its innermost callsite.
void write_stacks(Database& db, const Profile& p) {
  Statement frame(db, "INSERT INTO frame VALUES (?, ?, ?, ?, ?, ?, ?, ?)");
  for (std::size_t i = 0; i < p.frames.size(); ++i) {
    const StackFrame& f = p.frames[i];
    frame.bind(1, i64(i)).bind_u64(2, f.address);
    bind_id(frame, 3, f.function);
    bind_id(frame, 4, f.file);
    frame.bind(5, std::int64_t{f.line});
    bind_id(frame, 6, f.module);
    frame.bind_u64(7, f.module_offset).bind(8, std::int64_t{f.inlined});
    frame.run();
  }
  Statement callsite(db, "INSERT INTO callsite VALUES (?, ?, ?, ?)");
  Statement stack(db, "INSERT INTO stack VALUES (?, ?)");
  std::map<std::pair<std::uint32_t, std::uint32_t>, std::uint32_t> ids;  // (parent, frame) -> callsite
  std::vector<std::uint32_t> depth;
  for (std::size_t s = 0; s < p.stacks.size(); ++s) {
    std::uint32_t parent = kNone;
    const std::vector<std::uint32_t>& frames = p.stacks[s].frames;
    for (auto it = frames.rbegin(); it != frames.rend(); ++it) {
      const auto [found, added] = ids.try_emplace(std::pair{parent, *it}, static_cast<std::uint32_t>(depth.size()));
      if (added) {
        depth.push_back(parent == kNone ? 0 : depth[parent] + 1);
        callsite.bind(1, std::int64_t{found->second});
        bind_id(callsite, 2, parent);
        callsite.bind(3, std::int64_t{*it}).bind(4, std::int64_t{depth.back()}).run();
      }
      parent = found->second;
    }
    stack.bind(1, i64(s));
    bind_id(stack, 2, parent);
    stack.run();
  }
}

void write_leaks(Database& db, const Profile& p) {
  Statement st(db, "INSERT INTO leak_site VALUES (?, ?, ?, ?, ?, ?, ?)");
  for (std::size_t i = 0; i < p.leaks.size(); ++i) {
    const LeakSite& l = p.leaks[i];
    st.bind(1, i64(i)).bind(2, std::int64_t{l.node});
    bind_id(st, 3, l.caller);
    bind_id(st, 4, l.stack);
    st.bind(5, std::int64_t{l.reachable}).bind_u64(6, l.blocks).bind_u64(7, l.bytes).run();
  }
}

void write_cpu_samples(Database& db, const Profile& p) {
  Statement st(db, "INSERT INTO cpu_profile_stack_sample VALUES (?, ?, ?, ?, ?, ?)");
  for (std::size_t i = 0; i < p.cpu_samples.size(); ++i) {
    const CpuSample& x = p.cpu_samples[i];
    st.bind(1, i64(i)).bind_u64(2, x.time_ns).bind(3, std::int64_t{x.thread});
    bind_id(st, 4, x.stack);
    st.bind(5, std::int64_t{x.node}).bind_u64(6, x.weight_ns).run();
  }
}

void write_tables(Database& db, const Profile& p) {
  const ArgSets args = arg_sets(p);
  {
    Statement st(db, "INSERT INTO meta(key, value) VALUES (?, ?)");
    for (const auto& [key, field] : meta_fields(p)) {
      st.bind(1, std::string_view(key));
      std::visit([&](auto ptr) { bind_meta(st, ptr); }, field);
      st.run();
    }
    st.bind(1, std::string_view("schema_version")).bind(2, std::int64_t{kSchemaVersion}).run();
  }
  {
    Statement st(db, "INSERT INTO strings(id, str) VALUES (?, ?)");
    for (std::size_t i = 0; i < p.strings.size(); ++i) st.bind(1, i64(i)).bind(2, std::string_view(p.strings[i])).run();
  }
  {
    Statement st(db, "INSERT INTO thread VALUES (?, ?, ?, ?, ?, ?)");
    for (const ThreadInfo& t : p.threads)
      st.bind(1, std::int64_t{t.id})
          .bind(2, t.os_tid)
          .bind(3, std::string_view(t.name))
          .bind(4, std::int64_t{t.exited})
          .bind_u64(5, t.scopes_recorded)
          .bind_u64(6, t.top_level_ns)
          .run();
  }
  {
    std::vector<std::uint32_t> rank(p.call_tree.size(), 0);
    for (const CallTreeNode& n : p.call_tree)
      for (std::size_t r = 0; r < n.children.size(); ++r)
        if (n.children[r] < rank.size()) rank[n.children[r]] = static_cast<std::uint32_t>(r);
    Statement st(db, "INSERT INTO scope_tree VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, "
                     "?, ?, ?, ?, ?, ?, ?, ?, ?)");
    for (const CallTreeNode& n : p.call_tree) {
      st.bind(1, std::int64_t{n.id});
      bind_id(st, 2, n.parent);
      bind_id(st, 3, n.name);
      st.bind(4, std::int64_t{n.depth}).bind(5, std::int64_t{rank[n.id]}).bind(6, std::int64_t{n.thread_count});
      bind_stats(st, 7, n.time);
      st.bind_u64(16, n.self_ns);
      bind_memory(st, 17, n.memory);
      bind_heap(st, 21, n.heap);
      st.bind(28, n.flops).bind_u64(29, n.bytes);
      st.run();
    }
  }
  {
    Statement st(db, "INSERT INTO scope_stats VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, "
                     "?, ?, ?, ?, ?, ?, ?, ?, ?)");
    std::int64_t rank = 0;
    for (const ScopeStats& s : p.scopes) {
      st.bind(1, rank++).bind(2, std::int64_t{s.name}).bind_u64(3, s.total_ns).bind_u64(4, s.self_ns);
      bind_stats(st, 5, s.time);
      st.bind(14, std::int64_t{s.thread_count}).bind_u64(15, s.items);
      bind_memory(st, 16, s.memory);
      bind_heap(st, 20, s.heap);
      st.bind(27, s.flops).bind_u64(28, s.bytes);
      st.run();
    }
  }
  {
    io::Progress progress("saving spans", p.spans.size());
    Statement st(db, "INSERT INTO slice_data VALUES (?, ?, ?, ?, ?, ?, ?)");
    for (std::size_t i = 0; i < p.spans.size(); ++i) {
      const Span& s = p.spans[i];
      st.bind(1, i64(i)).bind_u64(2, s.start_ns).bind_u64(3, s.end_ns - s.start_ns).bind(4, std::int64_t{s.thread});
      st.bind(5, std::int64_t{s.node});
      bind_id(st, 6, args.of_span[i]);
      if (args.has_open[i]) st.bind(7, args.open_value[i]); else st.bind_null(7);
      st.run();
      progress.advance(1);
    }
  }
  {
    Statement counter(db, "INSERT INTO memory_counter VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)");
    Statement track(db, "INSERT INTO counter_track VALUES (?, ?, 'bytes', ?, 'memory_counter')");
    for (std::size_t i = 0; i < p.memory_counters.size(); ++i) {
      const MemoryCounter& c = p.memory_counters[i];
      counter.bind(1, i64(i)).bind(2, std::int64_t{c.name}).bind(3, c.current_bytes).bind_u64(4, c.peak_bytes);
      counter.bind_u64(5, c.alloc_bytes).bind_u64(6, c.freed_bytes).bind_u64(7, c.alloc_count);
      counter.bind_u64(8, c.free_count).bind_u64(9, c.largest_alloc_bytes).run();
      track.bind(1, i64(i)).bind(2, std::string_view("memory: " + p.str(c.name))).bind(3, i64(i)).run();
    }
    Statement ev(db, "INSERT INTO counter VALUES (?, ?, ?, ?, ?, ?)");
    std::vector<std::int64_t> running(p.memory_counters.size(), 0);
    std::int64_t id = 0;
    for (const MemoryEvent& e : p.memory_events) {
      if (e.counter < running.size()) running[e.counter] += e.delta_bytes;
      const double value = e.counter < running.size() ? static_cast<double>(running[e.counter]) : 0.0;
      ev.bind(1, id++).bind_u64(2, e.time_ns).bind(3, std::int64_t{e.counter}).bind(4, value);
      ev.bind(5, e.delta_bytes).bind(6, std::int64_t{e.thread}).run();
    }
    write_heap_timeline(db, p, id);
  }
  write_stacks(db, p);
  write_leaks(db, p);
  write_cpu_samples(db, p);
  {
    Statement st(db, "INSERT INTO diagnostic VALUES (?, ?, ?, ?, ?, ?, ?)");
    std::int64_t id = 0;
    for (const Diagnostic& d : p.diagnostics) {
      st.bind(1, id++).bind(2, std::string_view(to_string(d.kind))).bind(3, std::string_view(to_string(d.severity)));
      bind_id(st, 4, d.thread);
      bind_id(st, 5, d.name);
      st.bind_u64(6, d.count).bind(7, std::string_view(d.message)).run();
    }
  }
  {
    Statement st(db, "INSERT INTO annotation(key, value) VALUES (?, ?)");
    for (const auto& [key, value] : p.annotations)
      st.bind(1, std::string_view(key)).bind(2, std::string_view(value)).run();
  }
  write_arg_sets(db, p, args);
}

// ---- reading -------------------------------------------------------------------------

[[noreturn]] void invalid(const std::string& path, const std::string& what) {
  throw Error(fmt::format("'{}' is damaged: {}; record the profile again", path, what));
}

// Every table of the file's format version, before any is read: a missing one is named
// rather than reported as SQLite's "no such table".
void check_tables(Database& db, std::int64_t version) {
  for (const RequiredTable& t : kRequiredTables)
    if (version >= t.since && !io::sqlite::has_table(db, t.name))
      throw Error(fmt::format("'{}' is damaged or not an nnprof profile: it has no {} table, which every profile of "
                              "its format version ({}) has; the file was edited, damaged or written by another "
                              "program: record the profile again",
                              db.path(), t.name, version));
}

// Every key of the file's version must be there, with a value of its type: a missing key
// would otherwise read as 0 or "" and pass for a real value.
void read_meta(Database& db, Profile& p, std::int64_t version) {
  Statement st(db, "SELECT key, value FROM meta", "meta");
  auto fields = meta_fields(p);
  std::vector<bool> seen(fields.size(), false);
  std::size_t index = 0;
  while (st.step()) {
    const Row key_row(st, "meta", index++);
    const std::string key = key_row.text(0);
    const Row r(st, "meta", key_row.index(), key);
    for (std::size_t i = 0; i < fields.size(); ++i) {
      if (key != fields[i].first) continue;
      std::visit([&](auto ptr) { read_meta_value(r, ptr); }, fields[i].second);
      seen[i] = true;
    }
  }
  if (index == 0) invalid(db.path(), "its meta table is empty (it names the run, its clock and what was recorded)");
  for (std::size_t i = 0; i < fields.size(); ++i)
    if (!seen[i] && meta_key_since(fields[i].first) <= version)
      invalid(db.path(), fmt::format("its meta table has no '{}' key, which every profile of its format version ({}) "
                                     "has",
                                     fields[i].first, version));
}

// The heap timeline back from its three counter tracks: the i-th row of each is sample i.
void read_heap_timeline(Database& db, Profile& p) {
  Statement st(db,
               "SELECT c.ts, c.delta, t.kind FROM counter c JOIN counter_track t ON t.id = c.track_id "
               "WHERE t.kind IN ('heap', 'rss', 'rss_peak') ORDER BY c.id",
               "counter");
  std::vector<std::vector<std::pair<std::uint64_t, std::uint64_t>>> rows(std::size(kHeapSeries));
  std::vector<std::uint64_t> running(std::size(kHeapSeries), 0);
  std::size_t index = 0;
  while (st.step()) {
    const Row r(st, "counter", index++);
    const std::string kind = r.text(2);
    for (std::size_t s = 0; s < std::size(kHeapSeries); ++s) {
      if (kind != kHeapSeries[s].kind) continue;
      running[s] += r.u64(1);  // wraps like the subtraction that wrote it: exact
      rows[s].emplace_back(r.u64(0), running[s]);
    }
  }
  for (std::size_t i = 0; i < rows[0].size(); ++i) {
    if (rows[1].size() != rows[0].size() || rows[2].size() != rows[0].size() || rows[1][i].first != rows[0][i].first ||
        rows[2][i].first != rows[0][i].first)
      invalid(db.path(), "the heap timeline's tracks (heap, rss, rss_peak) do not have the same samples");
    p.heap_samples.push_back(HeapSample{rows[0][i].first, rows[0][i].second, rows[1][i].second, rows[2][i].second});
  }
  if (rows[0].empty() && (!rows[1].empty() || !rows[2].empty()))
    invalid(db.path(), "the heap timeline's tracks (heap, rss, rss_peak) do not have the same samples");
}

void read_stacks(Database& db, Profile& p, std::int64_t version) {
  {
    Statement st(db,
                 version >= 3 ? "SELECT id, address, function_id, file_id, line, module_id, module_offset, inlined "
                                "FROM frame ORDER BY id"
                              : "SELECT id, address, function_id, file_id, line, module_id, 0, 0 FROM frame ORDER BY id",
                 "frame");
    while (st.step()) {
      const Row r(st, "frame", p.frames.size());
      if (r.i64(0) != static_cast<std::int64_t>(p.frames.size())) invalid(db.path(), "frame ids are not dense");
      p.frames.push_back(StackFrame{r.u64(1), r.optional_u32(2), r.optional_u32(3), r.u32(4), r.optional_u32(5),
                                    r.u64(6), r.flag(7)});
    }
  }
  // Callsites refer to smaller ids only, so walking up from any of them ends at a root.
  std::vector<std::pair<std::uint32_t, std::uint32_t>> callsites;  // (parent, frame)
  {
    Statement st(db, "SELECT id, parent_id, frame_id FROM callsite ORDER BY id", "callsite");
    while (st.step()) {
      const Row r(st, "callsite", callsites.size());
      const std::int64_t id = r.i64(0);
      const std::uint32_t parent = r.optional_u32(1);
      const std::uint32_t frame = r.u32(2);
      if (id != static_cast<std::int64_t>(callsites.size()) || (parent != kNone && parent >= callsites.size()) ||
          frame >= p.frames.size())
        invalid(db.path(), fmt::format("callsite {} refers to a missing callsite or frame", id));
      callsites.emplace_back(parent, frame);
    }
  }
  Statement st(db, "SELECT id, callsite_id FROM stack ORDER BY id", "stack");
  while (st.step()) {
    const Row r(st, "stack", p.stacks.size());
    if (r.i64(0) != static_cast<std::int64_t>(p.stacks.size())) invalid(db.path(), "stack ids are not dense");
    CallStack stack;
    for (std::uint32_t c = r.optional_u32(1); c != kNone; c = callsites[c].first) {
      if (c >= callsites.size()) invalid(db.path(), "a stack refers to a missing callsite");
      stack.frames.push_back(callsites[c].second);
    }
    p.stacks.push_back(std::move(stack));
  }
}

void read_leaks(Database& db, Profile& p) {
  Statement st(db, "SELECT node_id, caller_frame_id, stack_id, reachable, blocks, bytes FROM leak_site ORDER BY id",
               "leak_site");
  while (st.step()) {
    const Row r(st, "leak_site", p.leaks.size());
    p.leaks.push_back(LeakSite{r.u32(0), r.optional_u32(1), r.optional_u32(2), r.flag(3), r.u64(4), r.u64(5)});
  }
}

// Rows checked one by one: a file is not trusted to have kept the table's constraints.
void read_annotations(Database& db, Profile& p) {
  {
    Statement columns(db, "SELECT count(*) FROM pragma_table_info('annotation') WHERE name IN ('key', 'value')");
    if (!columns.step() || columns.i64(0) != 2)
      invalid(db.path(), "it has no annotation table with key and value columns");
  }
  Statement st(db, "SELECT key, value, typeof(key), typeof(value) FROM annotation ORDER BY key", "annotation");
  while (st.step()) {
    if (st.text(2) != "text" || st.text(3) != "text") invalid(db.path(), "an annotation's key or value is not text");
    std::string key = st.text(0);
    if (!is_valid_annotation_key(key))
      invalid(db.path(), "an annotation key is empty or has characters other than printable ASCII");
    if (!p.annotations.try_emplace(std::move(key), st.text(1)).second)
      invalid(db.path(), fmt::format("annotation key '{}' appears twice", st.text(0)));
  }
}

/// The number of rows of `table`, for reserving: never more than SQLite says.
std::size_t row_count(Database& db, const char* table) {
  Statement count(db, fmt::format("SELECT count(*) FROM {}", table), table);
  return count.step() ? static_cast<std::size_t>(std::max<std::int64_t>(0, count.i64(0))) : 0;
}

// One args row's key and value (columns 0 to 4: key, value_type, int_value, string_value,
// real_value); the span is the caller's. `open`, where given (version 9), is set for a
// 'slice_int' row: an Int whose value each slice gives.
SpanArg read_arg(const Row& r, int first, bool* open = nullptr) {
  SpanArg a;
  a.key = r.text(first);
  const std::string type = r.text(first + 1);
  if (open != nullptr) *open = type == kSliceIntType;
  if (open != nullptr && *open) {
    a.type = SpanArg::Type::Int;
    return a;
  }
  const auto known = std::find(std::begin(kArgTypes), std::end(kArgTypes), type);
  if (known == std::end(kArgTypes)) r.fail(fmt::format("has the unknown value_type '{}'", type));
  a.type = static_cast<SpanArg::Type>(known - std::begin(kArgTypes));
  if (a.type == SpanArg::Type::Int) a.int_value = r.i64(first + 2);
  if (a.type == SpanArg::Type::String) a.string_value = r.text(first + 3);
  // SQLite stores a NaN as NULL: a real argument's NULL is the NaN it was.
  if (a.type == SpanArg::Type::Real)
    a.real_value = r.is_null(first + 4) ? std::numeric_limits<double>::quiet_NaN() : r.f64(first + 4);
  return a;
}

// Version 7: one row per argument, its arg_set_id the slice's id.
void read_span_args_per_slice(Database& db, Profile& p) {
  p.span_args.reserve(row_count(db, "args"));
  Statement st(db, "SELECT arg_set_id, key, value_type, int_value, string_value, real_value FROM args ORDER BY id",
               "args");
  while (st.step()) {
    const Row r(st, "args", p.span_args.size());
    SpanArg a = read_arg(r, 1);
    a.span = r.u32(0);
    if (a.span >= p.spans.size()) r.fail(fmt::format("refers to the missing slice {}", a.span));
    if (!p.span_args.empty() && a.span < p.span_args.back().span) r.fail("is out of slice order");
    p.span_args.push_back(std::move(a));
  }
}

// Version 8: the rows of set 0, then of set 1, ... (as write_arg_sets stores them), each
// slice's set copied to it. Every set a slice names must have rows, and every set must be
// some slice's: a damaged id would otherwise move arguments to another slice unseen.
// Version 9: a set's 'slice_int' row (at most one) takes each slice's arg_int, which a slice
// has exactly when its set has that row.
struct ArgSetTable {
  std::vector<SpanArg> rows;
  std::vector<bool> open_row;
  std::vector<std::uint32_t> set_first;  // by set id: its first row; then one past the last set
  std::vector<bool> used;                // by set id: some slice named it

  [[nodiscard]] std::size_t sets() const noexcept { return set_first.size() - 1; }
};

ArgSetTable read_arg_set_table(Database& db, bool open_ints) {
  ArgSetTable t;
  t.rows.reserve(row_count(db, "args"));
  Statement st(db, "SELECT arg_set_id, key, value_type, int_value, string_value, real_value FROM args ORDER BY id",
               "args");
  while (st.step()) {
    const Row r(st, "args", t.rows.size());
    const std::int64_t set = r.i64(0);
    if (set != static_cast<std::int64_t>(t.set_first.size()) - 1) {
      if (set != static_cast<std::int64_t>(t.set_first.size()))
        r.fail(fmt::format("has arg_set_id {} where {} was expected: argument sets are stored one after another, "
                           "numbered from 0",
                           set, t.set_first.empty() ? std::string("0") : fmt::format("{} or {}", t.set_first.size() - 1,
                                                                                     t.set_first.size())));
      t.set_first.push_back(static_cast<std::uint32_t>(t.rows.size()));
    }
    bool open = false;
    t.rows.push_back(read_arg(r, 1, open_ints ? &open : nullptr));
    if (open && t.open_row.size() > t.set_first.back() &&
        std::find(t.open_row.begin() + t.set_first.back(), t.open_row.end(), true) != t.open_row.end())
      r.fail(fmt::format("is a second '{}' row of argument set {}: a set leaves one integer open", kSliceIntType, set));
    t.open_row.push_back(open);
  }
  t.set_first.push_back(static_cast<std::uint32_t>(t.rows.size()));
  t.used.assign(t.sets(), false);
  return t;
}

/// Slice `slice`'s arguments (its set `set`, its open integer `open_int`) appended to `out`.
void append_slice_args(const std::string& path, ArgSetTable& t, std::size_t slice, std::uint32_t set,
                       std::optional<std::int64_t> open_int, std::vector<SpanArg>& out) {
  if (set == kNone) return;
  if (set >= t.sets())
    invalid(path, fmt::format("slice {} refers to the missing argument set {} (args has {} set{})", slice, set,
                              t.sets(), t.sets() == 1 ? "" : "s"));
  t.used[set] = true;
  bool filled = false;
  for (std::uint32_t i = t.set_first[set]; i < t.set_first[set + 1]; ++i) {
    out.push_back(t.rows[i]);
    out.back().span = static_cast<std::uint32_t>(slice);
    if (!t.open_row[i]) continue;
    if (!open_int)
      invalid(path, fmt::format("slice {} has no arg_int for the open integer '{}' of its argument set {}", slice,
                                t.rows[i].key, set));
    out.back().int_value = *open_int;
    filled = true;
  }
  if (!filled && open_int)
    invalid(path, fmt::format("slice {} has an arg_int but its argument set {} leaves no integer open", slice, set));
}

void check_every_set_used(const std::string& path, const ArgSetTable& t) {
  for (std::size_t set = 0; set < t.sets(); ++set)
    if (!t.used[set]) invalid(path, fmt::format("argument set {} in args belongs to no slice", set));
}

/// One slice_data row of version 8 or later (or 7, without sets): the span, its argument set
/// and its open integer.
struct SliceRow {
  Span span;
  std::uint32_t set = kNone;
  std::optional<std::int64_t> open_int;
};

const char* slice_query(std::int64_t version) {
  return version >= 9   ? "SELECT ts, dur, utid, node_id, arg_set_id, arg_int FROM slice_data ORDER BY id"
         : version >= 8 ? "SELECT ts, dur, utid, node_id, arg_set_id FROM slice_data ORDER BY id"
                        : "SELECT ts, dur, utid, node_id FROM slice_data ORDER BY id";
}

SliceRow read_slice(const Row& r, const Profile& p, std::int64_t version) {
  SliceRow out;
  if (version >= 8 && !r.is_null(4)) {
    // kNone stands for NULL: a stored 4294967295 is out of range rather than "no arguments".
    const std::int64_t id = r.i64(4);
    if (id < 0 || id >= static_cast<std::int64_t>(kNone)) r.fail(fmt::format("has arg_set_id = {}, out of range", id));
    out.set = static_cast<std::uint32_t>(id);
  }
  if (version >= 9 && !r.is_null(5)) out.open_int = r.i64(5);
  if (out.set == kNone && out.open_int) r.fail("has an arg_int but no argument set");
  Span& s = out.span;
  s.start_ns = r.u64(0);
  s.end_ns = r.end(0, 1);
  s.thread = r.u32(2);
  s.node = r.u32(3);
  if (s.node >= p.call_tree.size()) r.fail(fmt::format("refers to the missing call-tree node {}", s.node));
  s.name = p.call_tree[s.node].name;
  s.depth = p.call_tree[s.node].depth;
  return out;
}

// `with_spans` false: everything but slice_data and args (load_without_spans).
void read_tables(Database& db, Profile& p, std::int64_t version, bool with_spans) {
  const bool has_heap = version >= 2;
  const bool has_work = version >= 4;
  check_tables(db, version);
  read_meta(db, p, version);
  {
    Statement st(db, "SELECT id, str FROM strings ORDER BY id", "strings");
    while (st.step()) {
      const Row r(st, "strings", p.strings.size());
      if (r.i64(0) != static_cast<std::int64_t>(p.strings.size())) invalid(db.path(), "string ids are not dense");
      p.strings.push_back(r.text(1));
    }
  }
  {
    Statement st(db, "SELECT utid, tid, name, exited, scopes_recorded, top_level_ns FROM thread ORDER BY utid",
                 "thread");
    while (st.step()) {
      const Row r(st, "thread", p.threads.size());
      p.threads.push_back(ThreadInfo{r.u32(0), r.i64(1), r.text(2), r.flag(3), r.u64(4), r.u64(5)});
    }
  }
  {
    Statement st(db, "SELECT * FROM scope_tree ORDER BY id", "scope_tree");
    std::vector<std::pair<std::uint32_t, std::uint32_t>> ranks;  // (child rank, id) per node
    while (st.step()) {
      const Row r(st, "scope_tree", p.call_tree.size());
      CallTreeNode n;
      if (r.i64(0) != static_cast<std::int64_t>(p.call_tree.size())) invalid(db.path(), "call-tree node ids are not dense");
      n.id = static_cast<std::uint32_t>(p.call_tree.size());
      n.parent = r.optional_u32(1);
      n.name = r.optional_u32(2);
      n.depth = r.u32(3);
      ranks.emplace_back(r.u32(4), n.id);
      n.thread_count = r.u32(5);
      n.time = read_stats(r, 6);
      n.self_ns = r.u64(15);
      n.memory = read_memory(r, 16);
      if (has_heap) n.heap = read_heap(r, 20);
      if (has_work) {
        n.flops = r.f64(27);
        n.bytes = r.u64(28);
      }
      p.call_tree.push_back(std::move(n));
    }
    // Children in their stored order.
    std::sort(ranks.begin(), ranks.end());
    for (const auto& [rank, id] : ranks) {
      const std::uint32_t parent = p.call_tree[id].parent;
      if (parent == kNone) continue;
      if (parent >= id) invalid(db.path(), fmt::format("call-tree node {} has parent {}", id, parent));
      p.call_tree[parent].children.push_back(id);
    }
  }
  {
    Statement st(db, "SELECT * FROM scope_stats ORDER BY rank", "scope_stats");
    while (st.step()) {
      const Row r(st, "scope_stats", p.scopes.size());
      ScopeStats s;
      s.name = r.u32(1);
      s.total_ns = r.u64(2);
      s.self_ns = r.u64(3);
      s.time = read_stats(r, 4);
      s.thread_count = r.u32(13);
      s.items = r.u64(14);
      s.memory = read_memory(r, 15);
      if (has_heap) s.heap = read_heap(r, 19);
      if (has_work) {
        s.flops = r.f64(26);
        s.bytes = r.u64(27);
      }
      p.scopes.push_back(s);
    }
  }
  std::vector<std::uint32_t> set_of_slice;  // version 8: each slice's arg_set_id, kNone for NULL
  std::vector<std::optional<std::int64_t>> int_of_slice;  // version 9: each slice's arg_int
  if (with_spans) {
    p.spans.reserve(row_count(db, "slice_data"));
    if (version >= 8) set_of_slice.reserve(p.spans.capacity());
    if (version >= 8) int_of_slice.reserve(p.spans.capacity());
    Statement st(db, slice_query(version), "slice_data");
    while (st.step()) {
      const SliceRow row = read_slice(Row(st, "slice_data", p.spans.size()), p, version);
      if (version >= 8) {
        set_of_slice.push_back(row.set);
        int_of_slice.push_back(row.open_int);
      }
      p.spans.push_back(row.span);
    }
  }
  {
    // largest_alloc_bytes since version 7: older files read 0 (not recorded).
    Statement st(db,
                 version >= 7 ? "SELECT name_id, current_bytes, peak_bytes, alloc_bytes, freed_bytes, alloc_count, "
                                "free_count, largest_alloc_bytes FROM memory_counter ORDER BY id"
                              : "SELECT name_id, current_bytes, peak_bytes, alloc_bytes, freed_bytes, alloc_count, "
                                "free_count, 0 FROM memory_counter ORDER BY id",
                 "memory_counter");
    while (st.step()) {
      const Row r(st, "memory_counter", p.memory_counters.size());
      p.memory_counters.push_back(
          MemoryCounter{r.u32(0), r.i64(1), r.u64(2), r.u64(3), r.u64(4), r.u64(5), r.u64(6), r.u64(7)});
    }
    // A row whose track is missing stays a memory event, so that validation rejects it.
    Statement ev(db,
                 has_heap ? "SELECT c.ts, c.track_id, c.delta, c.utid FROM counter c LEFT JOIN counter_track t "
                            "ON t.id = c.track_id WHERE t.kind IS NULL OR t.kind = 'memory_counter' ORDER BY c.id"
                          : "SELECT ts, track_id, delta, utid FROM counter ORDER BY id",
                 "counter");
    while (ev.step()) {
      const Row r(ev, "counter", p.memory_events.size());
      p.memory_events.push_back(MemoryEvent{r.u64(0), r.optional_u32(3), r.u32(1), r.i64(2)});
    }
  }
  if (has_heap) {
    read_heap_timeline(db, p);
    read_stacks(db, p, version);
    read_leaks(db, p);
  }
  if (version >= 3) {
    p.cpu_samples.reserve(row_count(db, "cpu_profile_stack_sample"));
    Statement st(db, "SELECT ts, utid, stack_id, node_id, weight_ns FROM cpu_profile_stack_sample ORDER BY id",
                 "cpu_profile_stack_sample");
    while (st.step()) {
      const Row r(st, "cpu_profile_stack_sample", p.cpu_samples.size());
      p.cpu_samples.push_back(CpuSample{r.u64(0), r.u32(1), r.optional_u32(2), r.u32(3), r.u64(4)});
    }
  }
  {
    Statement st(db, "SELECT kind, severity, utid, name_id, count, message FROM diagnostic ORDER BY id", "diagnostic");
    while (st.step()) {
      const Row r(st, "diagnostic", p.diagnostics.size());
      const auto kind = parse_diagnostic_kind(r.text(0));
      const auto severity = parse_severity(r.text(1));
      if (!kind || !severity) r.fail("has an unknown kind or severity");
      p.diagnostics.push_back(
          Diagnostic{*kind, *severity, r.optional_u32(2), r.optional_u32(3), r.u64(4), r.text(5)});
    }
  }
  if (version >= 5) read_annotations(db, p);
  if (!with_spans) return;
  if (version >= 8) {
    ArgSetTable sets = read_arg_set_table(db, version >= 9);
    std::size_t total = 0;
    for (const std::uint32_t set : set_of_slice)
      if (set < sets.sets()) total += sets.set_first[set + 1] - sets.set_first[set];
    p.span_args.reserve(total);
    for (std::size_t slice = 0; slice < set_of_slice.size(); ++slice)
      append_slice_args(db.path(), sets, slice, set_of_slice[slice], int_of_slice[slice], p.span_args);
    check_every_set_used(db.path(), sets);
  } else if (version == 7) {
    read_span_args_per_slice(db, p);
  }
}

void validate_heap(const Profile& p, const std::string& path) {
  const auto name_ok = [&](StringId id) { return id == kNone || id < p.strings.size(); };
  const HeapSummary& h = p.heap;
  if (h.peak_node >= p.call_tree.size() || (h.peak_thread != kNone && h.peak_thread >= p.threads.size()))
    invalid(path, "the heap peak refers to a missing call-tree node or thread");
  for (std::size_t i = 0; i < p.frames.size(); ++i) {
    const StackFrame& f = p.frames[i];
    if (!name_ok(f.function) || !name_ok(f.file) || !name_ok(f.module))
      invalid(path, fmt::format("frame {} names a missing string", i));
  }
  for (std::size_t i = 0; i < p.leaks.size(); ++i) {
    const LeakSite& l = p.leaks[i];
    if (l.node >= p.call_tree.size() || (l.caller != kNone && l.caller >= p.frames.size()) ||
        (l.stack != kNone && l.stack >= p.stacks.size()))
      invalid(path, fmt::format("leak site {} refers to a missing call-tree node, frame or stack", i));
  }
  for (std::size_t i = 1; i < p.heap_samples.size(); ++i)
    if (p.heap_samples[i].time_ns < p.heap_samples[i - 1].time_ns)
      invalid(path, "the heap timeline is not in time order");
  for (std::size_t i = 0; i < p.cpu_samples.size(); ++i) {
    const CpuSample& x = p.cpu_samples[i];
    if (x.thread >= p.threads.size() || x.node >= p.call_tree.size() || (x.stack != kNone && x.stack >= p.stacks.size()))
      invalid(path, fmt::format("CPU sample {} refers to a missing thread, call-tree node or stack", i));
    if (i > 0 && x.time_ns < p.cpu_samples[i - 1].time_ns) invalid(path, "the CPU samples are not in time order");
  }
}

/// Every index in the profile points where it should, so no later stage can read out of bounds.
void validate(const Profile& p, const std::string& path) {
  const auto name_ok = [&](StringId id) { return id == kNone || id < p.strings.size(); };
  if (p.call_tree.empty() || p.call_tree[0].parent != kNone) invalid(path, "the call tree has no root");
  for (std::size_t i = 1; i < p.call_tree.size(); ++i) {
    const CallTreeNode& n = p.call_tree[i];
    if (n.parent >= i)
      invalid(path, fmt::format("call-tree node {} has the parent {}, which does not come before it", i,
                                n.parent == kNone ? std::string("NULL") : std::to_string(n.parent)));
    if (!name_ok(n.name) || n.name == kNone) invalid(path, fmt::format("call-tree node {} names a missing string", i));
    if (n.depth != p.call_tree[n.parent].depth + 1 || n.depth > 1024)
      invalid(path, fmt::format("call-tree node {} has a wrong depth", i));
  }
  for (std::size_t i = 0; i < p.scopes.size(); ++i)
    if (p.scopes[i].name >= p.strings.size())
      invalid(path, fmt::format("scope statistic {} names the missing string {}", i, p.scopes[i].name));
  for (std::size_t i = 0; i < p.spans.size(); ++i) {
    const Span& s = p.spans[i];
    if (s.thread >= p.threads.size()) invalid(path, fmt::format("slice {} refers to the missing thread {}", i, s.thread));
    if (s.node == 0) invalid(path, fmt::format("slice {} is the call tree's root, which is no scope", i));
  }
  for (std::size_t i = 0; i < p.memory_counters.size(); ++i)
    if (p.memory_counters[i].name >= p.strings.size())
      invalid(path, fmt::format("memory counter {} names a missing string", i));
  for (std::size_t i = 0; i < p.memory_events.size(); ++i) {
    const MemoryEvent& e = p.memory_events[i];
    if (e.counter >= p.memory_counters.size())
      invalid(path, fmt::format("memory counter event {} refers to the missing track {}", i, e.counter));
    if (e.thread >= p.threads.size()) invalid(path, fmt::format("memory counter event {} refers to a missing thread", i));
  }
  for (std::size_t i = 0; i < p.diagnostics.size(); ++i) {
    const Diagnostic& d = p.diagnostics[i];
    if (!name_ok(d.name) || (d.thread != kNone && d.thread >= p.threads.size()))
      invalid(path, fmt::format("diagnostic {} refers to a missing thread or string", i));
  }
  for (std::size_t i = 0; i < p.threads.size(); ++i)
    if (p.threads[i].id != i) invalid(path, "thread ids are not dense");
  validate_heap(p, path);
}

void check_readable_file(const std::string& path) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0)
    throw Error(fmt::format("no such file: '{}' (check the path; profiles are written by `nnprof demo`, "
                            "`nnprof record` or Profiler::save)",
                            path));
  if (S_ISDIR(st.st_mode)) throw Error(fmt::format("'{}' is a directory, not a profile", path));
  if (st.st_size == 0)
    throw Error(fmt::format("'{}' is empty (0 bytes): the program that wrote it probably stopped before "
                            "saving; record the profile again",
                            path));
  if (::access(path.c_str(), R_OK) != 0) throw Error(fmt::format("cannot read '{}': permission denied", path));
  // SQLite opens any file and fails at the first query with a vague message; its 100-byte
  // header says at once whether this is a database at all.
  constexpr std::string_view kMagic("SQLite format 3\0", 16);
  constexpr std::size_t kHeaderBytes = 100;
  if (S_ISREG(st.st_mode) && static_cast<std::size_t>(st.st_size) < kHeaderBytes)
    throw Error(fmt::format("'{}' is not an nnprof profile: it is {} byte{} long, too short for a SQLite database "
                            "(a profile has at least a few kilobytes); it was probably cut off or is another file",
                            path, st.st_size, st.st_size == 1 ? "" : "s"));
  std::FILE* f = std::fopen(path.c_str(), "rb");
  if (f == nullptr) throw Error(fmt::format("cannot read '{}': {}", path, std::strerror(errno)));
  char header[16] = {};
  const std::size_t got = std::fread(header, 1, sizeof header, f);
  std::fclose(f);
  if (got != sizeof header || std::string_view(header, sizeof header) != kMagic)
    throw Error(fmt::format("'{}' is not an nnprof profile: it is not a SQLite database (its first bytes are not "
                            "SQLite's header); profiles are written by `nnprof record`, `nnprof demo` or "
                            "Profiler::save",
                            path));
}

std::int64_t check_header(Database& db) {
  Statement app(db, "PRAGMA application_id");
  const std::int64_t id = app.step() ? app.i64(0) : 0;
  Statement ver(db, "PRAGMA user_version");
  const std::int64_t version = ver.step() ? ver.i64(0) : 0;
  if (id != kApplicationId)
    throw Error(fmt::format("'{}' is a SQLite database but not an nnprof profile (its application id is {:#x}, "
                            "not nnprof's {:#x})",
                            db.path(), id, kApplicationId));
  if (version > kSchemaVersion)
    throw Error(fmt::format("'{}' was written by a newer nnprof (file format version {}; this nnprof reads up to "
                            "version {}): upgrade nnprof to read it",
                            db.path(), version, kSchemaVersion));
  if (version < 1) invalid(db.path(), "its format version is missing");
  return version;
}

/// SQLite's structural check: a damaged page is found here rather than read as plausible rows.
void check_integrity(Database& db) {
  Statement st(db, "PRAGMA quick_check(1)");
  if (st.step()) {
    const std::string verdict = st.text(0);
    if (verdict != "ok") invalid(db.path(), "SQLite's integrity check failed (" + verdict + ")");
  }
}

}  // namespace

namespace {
// A fresh file's settings, header and schema, inside the transaction its tables are written in.
// The file is renamed into place at the end (io::write_file_by_name): no journal is needed for
// atomicity.
void begin_new_file(Database& db) {
  db.exec("PRAGMA journal_mode=OFF; PRAGMA synchronous=OFF; PRAGMA locking_mode=EXCLUSIVE;"
          "PRAGMA page_size=16384; PRAGMA cache_size=-65536;");
  db.exec(fmt::format("PRAGMA application_id={}; PRAGMA user_version={};", kApplicationId, kSchemaVersion));
  db.exec("BEGIN");
  db.exec(kSchema);
}

// Every table of a profile, after the schema: what Profile::save and io::save_streamed (whose
// spans and arguments its stream wrote already) both write.
void write_every_table(Database& db, const Profile& profile) {
  write_tables(db, profile);
  io::write_metric_tables(db, profile);
  io::write_flow_table(db, profile);
  io::write_gpu_tables(db, profile);
  io::write_system_tables(db, profile);
  io::write_rank_tables(db, profile);
  io::write_continuous_tables(db, profile);
}
}  // namespace

void Profile::save(const std::string& path) const {
  check_consistent(*this);
  if (path.empty()) throw Error("cannot save a profile: no file name given");
  // A name that ends in a report's extension ("profile.json", "run.html") asks for that
  // report: a database under it would be a file that no reader of that format opens.
  if (const io::Exporter* exporter = io::find_exporter_for_path(path)) {
    io::write_file_atomically(path, [&](std::ostream& out) { exporter->write(*this, out, ReportOptions{}); });
    return;
  }
  // SQLite writes the file by name: write_file_by_name gives it a fresh temporary file and
  // then renames it onto `path`, or copies it to a device, a FIFO or standard output.
  io::write_file_by_name(path, [&](const std::string& file) {
    Database db(file, Database::Mode::Create);
    begin_new_file(db);
    write_every_table(db, *this);
    db.exec("COMMIT");
  });
}

namespace io {

void save_streamed(const std::string& path, const std::function<const Profile&(sqlite::Database&)>& stream) {
  if (path.empty()) throw Error("cannot save a profile: no file name given");
  io::write_file_by_name(path, [&](const std::string& file) {
    Database db(file, Database::Mode::Create);
    begin_new_file(db);
    const Profile& rest = stream(db);
    if (!rest.spans.empty() || !rest.span_args.empty())
      throw Error("cannot save: a streamed profile's spans and arguments are written by its stream, not held in it");
    check_consistent(rest);
    write_every_table(db, rest);
    db.exec("COMMIT");
  });
}

}  // namespace io

namespace {

/// Profile::load, with or without the spans and their arguments.
Profile load_profile(const std::string& path, bool with_spans, std::uint64_t& slices) {
  check_readable_file(path);
  Database db(path, Database::Mode::ReadOnly);
  const std::int64_t version = check_header(db);
  check_integrity(db);
  Profile p;
  read_tables(db, p, version, with_spans);
  slices = with_spans ? p.spans.size() : row_count(db, "slice_data");
  const std::optional<io::SliceThreads> from_file =
      with_spans ? std::nullopt : std::optional<io::SliceThreads>(std::in_place, db, slices);
  const io::SliceThreads from_spans(p);
  const io::SliceThreads& slice_threads = with_spans ? from_spans : *from_file;
  io::read_metric_tables(db, p);
  io::read_flow_table(db, p, slice_threads);
  io::read_gpu_tables(db, p, slice_threads);
  io::read_system_tables(db, p);
  io::read_rank_tables(db, p);
  io::read_continuous_tables(db, p);
  validate(p, path);
  return p;
}

}  // namespace

Profile Profile::load(const std::string& path) {
  std::uint64_t slices = 0;
  return load_profile(path, true, slices);
}

namespace io {

SliceThreads::SliceThreads(sqlite::Database& db, std::uint64_t slices)
    : slices_(slices), lookup_(std::make_unique<Statement>(db, "SELECT utid FROM slice_data WHERE id = ?", "slice_data")) {}
SliceThreads::~SliceThreads() = default;

std::optional<std::uint32_t> SliceThreads::thread_of(std::uint32_t slice) const {
  if (loaded_ != nullptr) {
    if (slice >= loaded_->spans.size()) return std::nullopt;
    return loaded_->spans[slice].thread;
  }
  if (slice >= slices_) return std::nullopt;
  lookup_->reset();
  lookup_->bind(1, std::int64_t{slice});
  if (!lookup_->step()) return std::nullopt;
  return Row(*lookup_, "slice_data", slice).u32(0);
}

Profile load_without_spans(const std::string& path, std::uint64_t& slices) { return load_profile(path, false, slices); }

bool holds_string_with_prefix(const std::string& path, std::string_view prefix) noexcept {
  try {
    Database db(path, Database::Mode::ReadOnly);
    check_header(db);
    // The first bytes compared as blobs: LIKE and GLOB would read wildcards in the prefix, and
    // substr() of text counts characters, not bytes.
    Statement q(db, "SELECT 1 FROM strings WHERE substr(CAST(str AS BLOB), 1, ?) = CAST(? AS BLOB) LIMIT 1");
    q.bind(1, static_cast<std::int64_t>(prefix.size())).bind(2, std::string(prefix));
    return q.step();
  } catch (...) {
    return false;
  }
}

struct SpanReader::State {
  State(const std::string& path, const Profile& rest)
      : rest(rest), db(path, Database::Mode::ReadOnly), version(check_header(db)) {
    if (version < 8)
      throw Error(fmt::format("'{}' was written by an older nnprof (format {}): read it whole with Profile::load",
                              path, version));
    sets = read_arg_set_table(db, version >= 9);
    slices.emplace(db, slice_query(version), "slice_data");
  }
  const Profile& rest;
  Database db;
  std::int64_t version;
  ArgSetTable sets;
  std::optional<Statement> slices;
  std::size_t next = 0;
  bool done = false;
};

SpanReader::SpanReader(const std::string& path, const Profile& rest) : state_(std::make_unique<State>(path, rest)) {}
SpanReader::~SpanReader() = default;

bool SpanReader::next(Span& span, std::vector<SpanArg>& args) {
  State& s = *state_;
  args.clear();
  if (s.done) return false;
  if (!s.slices->step()) {
    s.done = true;
    check_every_set_used(s.db.path(), s.sets);
    return false;
  }
  const SliceRow row = read_slice(Row(*s.slices, "slice_data", s.next), s.rest, s.version);
  // What validate() checks of the spans of a whole load.
  if (row.span.thread >= s.rest.threads.size())
    invalid(s.db.path(), fmt::format("slice {} refers to the missing thread {}", s.next, row.span.thread));
  if (row.span.node == 0) invalid(s.db.path(), fmt::format("slice {} is the call tree's root, which is no scope", s.next));
  append_slice_args(s.db.path(), s.sets, s.next, row.set, row.open_int, args);
  span = row.span;
  ++s.next;
  return true;
}

}  // namespace io

namespace {

// `nnprof query` is read-only whatever the SQL says: reading a profile must not write files
// (VACUUM INTO, ATTACH), change it, or hang.
constexpr std::size_t kMaxQueryResultBytes = std::size_t{256} << 20;

struct QueryGuard {
  std::string denied;  // what the authorizer refused first, for the message
  bool limited = false;
  std::chrono::steady_clock::time_point deadline;
  bool timed_out = false;
};

// Pragmas that only describe the schema.
bool schema_pragma(std::string_view name) {
  for (const std::string_view p : {"table_info", "table_xinfo", "table_list", "index_list", "index_info", "index_xinfo",
                                   "foreign_key_list"})
    if (name == p) return true;
  return false;
}

std::string denied_action(int action, const char* a1, const char* a2) {
  const std::string_view arg1 = a1 != nullptr ? a1 : "";
  switch (action) {
    case SQLITE_ATTACH: return "ATTACH";
    case SQLITE_DETACH: return "DETACH";
    case SQLITE_PRAGMA: return fmt::format("PRAGMA {}", arg1);
    case SQLITE_TRANSACTION: return "a transaction statement";
    case SQLITE_SAVEPOINT: return "SAVEPOINT";
    case SQLITE_INSERT: return fmt::format("INSERT into {}", arg1);
    case SQLITE_UPDATE: return fmt::format("UPDATE of {}", arg1);
    case SQLITE_DELETE: return fmt::format("DELETE from {}", arg1);
    case SQLITE_ALTER_TABLE: return "ALTER TABLE";
    case SQLITE_ANALYZE: return "ANALYZE";
    case SQLITE_REINDEX: return "REINDEX";
    default:
      if (action >= SQLITE_CREATE_INDEX && action <= SQLITE_DROP_VIEW) return "CREATE or DROP";
      if (action == SQLITE_CREATE_VTABLE || action == SQLITE_DROP_VTABLE) return "CREATE or DROP";
      return fmt::format("this statement ({}{})", arg1, a2 != nullptr ? fmt::format(" {}", a2) : "");
  }
}

int authorize_reading(void* data, int action, const char* a1, const char* a2, const char*, const char*) {
  switch (action) {
    case SQLITE_SELECT:
    case SQLITE_READ:
    case SQLITE_FUNCTION:
    case SQLITE_RECURSIVE:
      return SQLITE_OK;
    case SQLITE_PRAGMA:
      if (a1 != nullptr && schema_pragma(a1)) return SQLITE_OK;
      break;
    case SQLITE_UPDATE:
      // The first use of a table-valued pragma (pragma_table_info('slice')) on a connection
      // declares its eponymous virtual table, which SQLite reports as an UPDATE of the schema
      // table. Nothing can be written: the connection is read-only and defensive, and every
      // statement must also pass sqlite3_stmt_readonly.
      if (a1 != nullptr && (std::string_view(a1) == "sqlite_master" || std::string_view(a1) == "sqlite_schema"))
        return SQLITE_OK;
      break;
    default:
      break;
  }
  auto* guard = static_cast<QueryGuard*>(data);
  if (guard->denied.empty()) guard->denied = denied_action(action, a1, a2);
  return SQLITE_DENY;
}

int check_deadline(void* data) {
  auto* guard = static_cast<QueryGuard*>(data);
  if (guard->limited && std::chrono::steady_clock::now() > guard->deadline) guard->timed_out = true;
  return guard->timed_out ? 1 : 0;
}

[[noreturn]] void refuse_writing(const std::string& what) {
  throw Error(fmt::format("nnprof query only reads: {} is not allowed (use SELECT or WITH ... SELECT; "
                          "PRAGMA table_info(TABLE) lists a table's columns)",
                          what));
}

using StatementPtr = std::unique_ptr<sqlite3_stmt, decltype(&sqlite3_finalize)>;

StatementPtr prepare_one(Database& db, QueryGuard& guard, const std::string& sql) {
  sqlite3_stmt* raw = nullptr;
  const char* tail = nullptr;
  const int rc = sqlite3_prepare_v2(db.handle(), sql.c_str(), static_cast<int>(sql.size()), &raw, &tail);
  StatementPtr st(raw, &sqlite3_finalize);
  if (rc != SQLITE_OK) {
    if (!guard.denied.empty()) refuse_writing(guard.denied);
    throw Error(fmt::format("invalid query: {} (tables: meta, strings, thread, slice, args, scope_tree, scope_stats, "
                            "memory_counter, counter_track, counter, frame, callsite, stack, leak_site, "
                            "cpu_profile_stack_sample, metric, metric_point, flow, diagnostic, annotation, gpu_device, gpu_track, "
                            "gpu_slice, gpu_kernel, gpu_memcpy, gpu_memset, gpu_api_call, gpu_sync, gpu_memory_event, "
                            "gpu_counter_track, gpu_counter, gpu_scope, rank, thread_rank; see docs/FORMAT.md)",
                            sqlite3_errmsg(db.handle())));
  }
  if (!st)
    throw Error("empty SQL: give a query, e.g. nnprof query run.nnprof \"select name, sum(dur) from slice group "
                "by name\"");
  // Whatever follows the statement must be blank or comments: a second statement is not run
  // silently behind the first one's back.
  const std::string rest(tail, static_cast<std::size_t>(sql.c_str() + sql.size() - tail));
  sqlite3_stmt* next = nullptr;
  const int rc_next = sqlite3_prepare_v2(db.handle(), rest.c_str(), static_cast<int>(rest.size()), &next, nullptr);
  const bool more = rc_next != SQLITE_OK || next != nullptr;
  sqlite3_finalize(next);
  if (more) {
    const std::size_t found = rest.find_first_not_of(" \t\r\n;");
    const std::size_t begin = found == std::string::npos ? 0 : found;
    std::string second = rest.substr(begin, 60);
    for (char& c : second)
      if (static_cast<unsigned char>(c) < 0x20) c = ' ';
    throw Error(fmt::format("nnprof query runs one SQL statement, and a second one follows the first ('{}{}'): "
                            "run them one at a time",
                            second, rest.size() - begin > 60 ? "..." : ""));
  }
  guard.denied.clear();
  // The authorizer sees what a statement reads and writes; VACUUM writes without asking it.
  if (sqlite3_stmt_readonly(st.get()) == 0) refuse_writing("a statement that writes (such as VACUUM INTO)");
  return st;
}

}  // namespace

QueryResult query_profile(const std::string& path, const std::string& sql, double timeout_seconds) {
  if (!(timeout_seconds >= 0))
    throw Error(fmt::format("invalid query timeout {} s: give 0 (no limit) or a positive number of seconds",
                            timeout_seconds));
  check_readable_file(path);
  Database db(path, Database::Mode::ReadOnly);
  check_header(db);
  sqlite3* h = db.handle();
  sqlite3_db_config(h, SQLITE_DBCONFIG_DEFENSIVE, 1, nullptr);
  sqlite3_db_config(h, SQLITE_DBCONFIG_TRUSTED_SCHEMA, 0, nullptr);
  sqlite3_limit(h, SQLITE_LIMIT_ATTACHED, 0);
  QueryGuard guard;
  // Beyond about 30 years the deadline would overflow the clock: no limit.
  guard.limited = timeout_seconds > 0 && timeout_seconds < 1e9;
  if (guard.limited)
    guard.deadline = std::chrono::steady_clock::now() +
                     std::chrono::duration_cast<std::chrono::steady_clock::duration>(
                         std::chrono::duration<double>(timeout_seconds));
  sqlite3_set_authorizer(h, authorize_reading, &guard);
  sqlite3_progress_handler(h, 1000, check_deadline, &guard);
  const StatementPtr st = prepare_one(db, guard, sql);

  QueryResult r;
  const int columns = sqlite3_column_count(st.get());
  for (int i = 0; i < columns; ++i) {
    const char* name = sqlite3_column_name(st.get(), i);
    r.columns.emplace_back(name != nullptr ? name : "");
  }
  std::size_t bytes = 0;
  for (;;) {
    const int rc = sqlite3_step(st.get());
    if (rc == SQLITE_DONE) break;
    if (rc != SQLITE_ROW) {
      if (guard.timed_out)
        throw Error(fmt::format("the query was stopped after {} s, its time limit: narrow it, or allow more time "
                                "with --timeout SECONDS (0: no limit)",
                                timeout_seconds));
      if (!guard.denied.empty()) refuse_writing(guard.denied);
      throw Error(fmt::format("the query failed: {}", sqlite3_errmsg(h)));
    }
    std::vector<std::string> row;
    row.reserve(static_cast<std::size_t>(columns));
    for (int i = 0; i < columns; ++i) {
      if (sqlite3_column_type(st.get(), i) == SQLITE_NULL) {
        row.emplace_back("NULL");
      } else {
        const auto* text = reinterpret_cast<const char*>(sqlite3_column_text(st.get(), i));
        row.emplace_back(text != nullptr ? text : "",
                         static_cast<std::size_t>(sqlite3_column_bytes(st.get(), i)));
      }
      bytes += row.back().size() + sizeof(std::string);
    }
    r.rows.push_back(std::move(row));
    if (bytes > kMaxQueryResultBytes)
      throw Error(fmt::format("the query's result passed {} after {} rows: narrow it or add LIMIT",
                              report::format_bytes(kMaxQueryResultBytes), r.rows.size()));
  }
  return r;
}

void write_query_result(const QueryResult& result, std::ostream& out) {
  std::vector<report::Column> columns;
  for (const std::string& c : result.columns) columns.push_back({c, report::Align::Left, ""});
  report::TextTable table(columns);
  for (const auto& row : result.rows) table.add_row(row);
  table.write(out, "");
  out << fmt::format("({} row{})\n", result.rows.size(), result.rows.size() == 1 ? "" : "s");
}

}  // namespace nnprof
