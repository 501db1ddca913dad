#include "io/gpu_store.hpp"

#include <cstdint>
#include <limits>
#include <string>
#include <string_view>
#include <tuple>
#include <vector>

#include <fmt/format.h>

#include "nnprof/error.hpp"

namespace nnprof::io {

namespace {

using sqlite::Statement;

// Every table has a dense `id` (or `rank`) from 0 that is the index in its GpuProfile vector,
// so that the *_id columns that refer to it join in SQL exactly as the indices do in C++.
// Indices that may be kNone are NULL. Unsigned 64-bit values are bound bit-exactly.
constexpr const char* kGpuSchema = R"sql(
CREATE TABLE gpu_device(id INTEGER PRIMARY KEY, device_id INTEGER NOT NULL, name TEXT NOT NULL,
  pci_bus_id TEXT NOT NULL, cc_major INTEGER NOT NULL, cc_minor INTEGER NOT NULL, sms INTEGER NOT NULL,
  max_warps_per_sm INTEGER NOT NULL, max_threads_per_block INTEGER NOT NULL, max_registers_per_sm INTEGER NOT NULL,
  max_shared_bytes_per_sm INTEGER NOT NULL, max_blocks_per_sm INTEGER NOT NULL, core_clock_khz INTEGER NOT NULL,
  memory_bytes INTEGER NOT NULL, bandwidth_bytes_per_s INTEGER NOT NULL);
CREATE TABLE gpu_track(id INTEGER PRIMARY KEY, device_id INTEGER NOT NULL, context_id INTEGER NOT NULL,
  stream_id INTEGER NOT NULL, priority INTEGER NOT NULL, is_default INTEGER NOT NULL);
CREATE TABLE gpu_api_call(id INTEGER PRIMARY KEY, ts INTEGER NOT NULL, dur INTEGER NOT NULL, utid INTEGER,
  tid INTEGER NOT NULL, name_id INTEGER, driver INTEGER NOT NULL, cbid INTEGER NOT NULL,
  correlation_id INTEGER NOT NULL, return_value INTEGER NOT NULL, node_id INTEGER NOT NULL,
  external_id INTEGER NOT NULL, external_kind INTEGER NOT NULL);
CREATE TABLE gpu_slice(id INTEGER PRIMARY KEY, ts INTEGER NOT NULL, dur INTEGER NOT NULL, track_id INTEGER NOT NULL,
  kind TEXT NOT NULL, name_id INTEGER, correlation_id INTEGER NOT NULL, launch_utid INTEGER,
  launch_ts INTEGER NOT NULL, launch_node_id INTEGER NOT NULL, launch_slice_id INTEGER, api_id INTEGER,
  detail_id INTEGER NOT NULL);
CREATE TABLE gpu_kernel(id INTEGER PRIMARY KEY, slice_id INTEGER, grid_x INTEGER NOT NULL, grid_y INTEGER NOT NULL,
  grid_z INTEGER NOT NULL, block_x INTEGER NOT NULL, block_y INTEGER NOT NULL, block_z INTEGER NOT NULL,
  registers_per_thread INTEGER NOT NULL, static_shared_bytes INTEGER NOT NULL, dynamic_shared_bytes INTEGER NOT NULL,
  local_bytes_per_thread INTEGER NOT NULL, graph_id INTEGER NOT NULL, occupancy REAL NOT NULL,
  occupancy_estimated INTEGER NOT NULL);
CREATE TABLE gpu_memcpy(id INTEGER PRIMARY KEY, slice_id INTEGER, kind TEXT NOT NULL, src_memory TEXT NOT NULL,
  dst_memory TEXT NOT NULL, async INTEGER NOT NULL, bytes INTEGER NOT NULL, src_device_id INTEGER NOT NULL,
  dst_device_id INTEGER NOT NULL);
CREATE TABLE gpu_memset(id INTEGER PRIMARY KEY, slice_id INTEGER, bytes INTEGER NOT NULL, value INTEGER NOT NULL,
  memory_kind TEXT NOT NULL);
CREATE TABLE gpu_sync(id INTEGER PRIMARY KEY, ts INTEGER NOT NULL, dur INTEGER NOT NULL, type TEXT NOT NULL,
  track_id INTEGER, correlation_id INTEGER NOT NULL, launch_utid INTEGER, launch_ts INTEGER NOT NULL,
  launch_node_id INTEGER NOT NULL, launch_slice_id INTEGER, api_id INTEGER);
CREATE TABLE gpu_memory_event(id INTEGER PRIMARY KEY, ts INTEGER NOT NULL, device_id INTEGER NOT NULL,
  operation TEXT NOT NULL, memory_kind TEXT NOT NULL, async INTEGER NOT NULL, address INTEGER NOT NULL,
  bytes INTEGER NOT NULL, correlation_id INTEGER NOT NULL, launch_utid INTEGER, launch_ts INTEGER NOT NULL,
  launch_node_id INTEGER NOT NULL, launch_slice_id INTEGER, api_id INTEGER, source_id INTEGER);
CREATE TABLE gpu_counter_track(id INTEGER PRIMARY KEY, device_id INTEGER NOT NULL, name TEXT NOT NULL,
  unit TEXT NOT NULL);
CREATE TABLE gpu_counter(id INTEGER PRIMARY KEY, ts INTEGER NOT NULL, track_id INTEGER NOT NULL, value REAL NOT NULL);
CREATE TABLE gpu_scope(rank INTEGER PRIMARY KEY, name_id INTEGER, kernels INTEGER NOT NULL, kernel_ns INTEGER NOT NULL,
  memcpys INTEGER NOT NULL, memcpy_ns INTEGER NOT NULL, memcpy_bytes INTEGER NOT NULL, memsets INTEGER NOT NULL,
  memset_ns INTEGER NOT NULL, alloc_bytes INTEGER NOT NULL, alloc_count INTEGER NOT NULL, free_bytes INTEGER NOT NULL);
)sql";

constexpr const char* kGpuTables[] = {"gpu_device", "gpu_track",  "gpu_api_call",     "gpu_slice",
                                      "gpu_kernel", "gpu_memcpy", "gpu_memset",       "gpu_sync",
                                      "gpu_memory_event", "gpu_counter_track", "gpu_counter", "gpu_scope"};

// ---- enums as text ---------------------------------------------------------------------

constexpr const char* kOpKinds[] = {"kernel", "memcpy", "memset"};
constexpr const auto& kMemcpyKinds = kMemcpyKindNames;  // nnprof/gpu_profile.hpp: one spelling everywhere
constexpr const auto& kMemoryKinds = kGpuMemoryKindNames;
// CUpti_ActivitySynchronizationType by value; any other value is stored as its decimal digits,
// so that every uint8_t round-trips.
constexpr const char* kSyncTypes[] = {"unknown", "event_synchronize", "stream_wait_event", "stream_synchronize",
                                      "context_synchronize"};

template <class E, std::size_t N>
const char* name_in(const char* const (&names)[N], E value) noexcept {
  const auto i = static_cast<std::size_t>(value);
  return i < N ? names[i] : names[0];
}

template <class E, std::size_t N>
bool parse_in(const char* const (&names)[N], const std::string& text, E& out) {
  for (std::size_t i = 0; i < N; ++i)
    if (text == names[i]) {
      out = static_cast<E>(i);
      return true;
    }
  return false;
}

std::string sync_type_name(std::uint8_t type) {
  return type < std::size(kSyncTypes) ? std::string(kSyncTypes[type]) : std::to_string(type);
}

bool parse_sync_type(const std::string& text, std::uint8_t& out) {
  if (parse_in(kSyncTypes, text, out)) return true;
  // Decimal digits only, as written above: no sign, no spaces, at most three digits.
  if (text.empty() || text.size() > 3 || text.find_first_not_of("0123456789") != std::string::npos) return false;
  const int v = std::stoi(text);
  if (v < static_cast<int>(std::size(kSyncTypes)) || v > 255) return false;
  out = static_cast<std::uint8_t>(v);
  return true;
}

// ---- writing ---------------------------------------------------------------------------

std::int64_t i64(std::uint64_t v) { return static_cast<std::int64_t>(v); }

void bind_optional(Statement& st, int i, std::uint32_t v) {
  if (v == kNone)
    st.bind_null(i);
  else
    st.bind(i, std::int64_t{v});
}

// launch_utid, launch_ts, launch_node_id, launch_slice_id, api_id from parameter `first`.
void bind_launch(Statement& st, int first, const GpuLaunch& l) {
  bind_optional(st, first, l.thread);
  st.bind_u64(first + 1, l.time_ns).bind(first + 2, std::int64_t{l.node});
  bind_optional(st, first + 3, l.span);
  bind_optional(st, first + 4, l.api);
}

// One meta value per GpuSummary field, by its type; the same list serves both directions.
template <class Summary, class F>
void for_each_summary_field(Summary& s, F&& f) {
  f("gpu_traced", s.traced);
  f("gpu_status", s.status);
  f("gpu_clock_source", s.clock_source);
  f("gpu_cupti_version", s.cupti_version);
  f("gpu_driver_version", s.driver_version);
  f("gpu_clock_offset_ns", s.clock_offset_ns);
  f("gpu_clock_slope", s.clock_slope);
  f("gpu_clock_uncertainty_ns", s.clock_uncertainty_ns);
  f("gpu_records_dropped", s.records_dropped);
  f("gpu_records_refused", s.records_refused);
  f("gpu_records_incomplete", s.records_incomplete);
  f("gpu_records_untimed", s.records_untimed);
  f("gpu_unmatched_correlations", s.unmatched_correlations);
  f("gpu_untracked_frees", s.untracked_frees);
  f("gpu_nvml", s.nvml);
}

void bind_meta(Statement& st, bool v) { st.bind(2, std::int64_t{v}); }
void bind_meta(Statement& st, const std::string& v) { st.bind(2, std::string_view(v)); }
void bind_meta(Statement& st, std::uint32_t v) { st.bind(2, std::int64_t{v}); }
void bind_meta(Statement& st, std::int32_t v) { st.bind(2, std::int64_t{v}); }
void bind_meta(Statement& st, std::int64_t v) { st.bind(2, v); }
void bind_meta(Statement& st, std::uint64_t v) { st.bind_u64(2, v); }
void bind_meta(Statement& st, double v) { st.bind(2, v); }

void write_summary(sqlite::Database& db, const GpuSummary& s) {
  Statement st(db, "INSERT INTO meta(key, value) VALUES (?, ?)");
  for_each_summary_field(s, [&](const char* key, const auto& value) {
    st.bind(1, std::string_view(key));
    bind_meta(st, value);
    st.run();
  });
}

// The first op that uses each detail row (NULL in slice_id when none does), for SQL joins.
std::vector<std::uint32_t> first_op_of(const GpuProfile& g, GpuOpKind kind, std::size_t rows) {
  std::vector<std::uint32_t> first(rows, kNone);
  for (std::size_t i = 0; i < g.ops.size(); ++i)
    if (g.ops[i].kind == kind && g.ops[i].detail < rows && first[g.ops[i].detail] == kNone)
      first[g.ops[i].detail] = static_cast<std::uint32_t>(i);
  return first;
}

void write_devices_and_tracks(sqlite::Database& db, const GpuProfile& g) {
  Statement dev(db, "INSERT INTO gpu_device VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)");
  for (std::size_t i = 0; i < g.devices.size(); ++i) {
    const GpuDevice& d = g.devices[i];
    dev.bind(1, i64(i)).bind(2, std::int64_t{d.id}).bind(3, std::string_view(d.name));
    dev.bind(4, std::string_view(d.pci_bus_id)).bind(5, std::int64_t{d.cc_major}).bind(6, std::int64_t{d.cc_minor});
    dev.bind(7, std::int64_t{d.sms}).bind(8, std::int64_t{d.max_warps_per_sm});
    dev.bind(9, std::int64_t{d.max_threads_per_block}).bind(10, std::int64_t{d.max_registers_per_sm});
    dev.bind(11, std::int64_t{d.max_shared_bytes_per_sm}).bind(12, std::int64_t{d.max_blocks_per_sm});
    dev.bind(13, std::int64_t{d.core_clock_khz}).bind_u64(14, d.memory_bytes).bind_u64(15, d.bandwidth_bytes_per_s);
    dev.run();
  }
  Statement track(db, "INSERT INTO gpu_track VALUES (?, ?, ?, ?, ?, ?)");
  for (std::size_t i = 0; i < g.streams.size(); ++i) {
    const GpuStream& s = g.streams[i];
    track.bind(1, i64(i)).bind(2, std::int64_t{s.device}).bind(3, std::int64_t{s.context});
    track.bind(4, std::int64_t{s.stream}).bind(5, std::int64_t{s.priority}).bind(6, std::int64_t{s.is_default});
    track.run();
  }
}

void write_api_calls_and_slices(sqlite::Database& db, const GpuProfile& g) {
  Statement api(db, "INSERT INTO gpu_api_call VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)");
  for (std::size_t i = 0; i < g.api_calls.size(); ++i) {
    const GpuApiCall& a = g.api_calls[i];
    api.bind(1, i64(i)).bind_u64(2, a.start_ns).bind_u64(3, a.end_ns - a.start_ns);
    bind_optional(api, 4, a.thread);
    api.bind(5, a.os_tid);
    bind_optional(api, 6, a.name);
    api.bind(7, std::int64_t{a.driver}).bind(8, std::int64_t{a.cbid}).bind(9, std::int64_t{a.correlation_id});
    api.bind(10, std::int64_t{a.return_value}).bind(11, std::int64_t{a.node}).bind_u64(12, a.external_id);
    api.bind(13, std::int64_t{a.external_kind});
    api.run();
  }
  Statement slice(db, "INSERT INTO gpu_slice VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)");
  for (std::size_t i = 0; i < g.ops.size(); ++i) {
    const GpuOp& op = g.ops[i];
    slice.bind(1, i64(i)).bind_u64(2, op.start_ns).bind_u64(3, op.end_ns - op.start_ns);
    slice.bind(4, std::int64_t{op.stream}).bind(5, std::string_view(stored_name(op.kind)));
    bind_optional(slice, 6, op.name);
    slice.bind(7, std::int64_t{op.correlation_id});
    bind_launch(slice, 8, op.launch);
    slice.bind(13, std::int64_t{op.detail});
    slice.run();
  }
}

void write_details(sqlite::Database& db, const GpuProfile& g) {
  {
    const auto first = first_op_of(g, GpuOpKind::Kernel, g.kernels.size());
    Statement st(db, "INSERT INTO gpu_kernel VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)");
    for (std::size_t i = 0; i < g.kernels.size(); ++i) {
      const GpuKernel& k = g.kernels[i];
      st.bind(1, i64(i));
      bind_optional(st, 2, first[i]);
      for (int d = 0; d < 3; ++d) st.bind(3 + d, std::int64_t{k.grid[d]}).bind(6 + d, std::int64_t{k.block[d]});
      st.bind(9, std::int64_t{k.registers_per_thread}).bind(10, std::int64_t{k.static_shared_bytes});
      st.bind(11, std::int64_t{k.dynamic_shared_bytes}).bind(12, std::int64_t{k.local_bytes_per_thread});
      st.bind(13, std::int64_t{k.graph_id}).bind(14, k.occupancy).bind(15, std::int64_t{k.occupancy_estimated});
      st.run();
    }
  }
  {
    const auto first = first_op_of(g, GpuOpKind::Memcpy, g.memcpys.size());
    Statement st(db, "INSERT INTO gpu_memcpy VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)");
    for (std::size_t i = 0; i < g.memcpys.size(); ++i) {
      const GpuMemcpy& m = g.memcpys[i];
      st.bind(1, i64(i));
      bind_optional(st, 2, first[i]);
      st.bind(3, std::string_view(to_string(m.kind))).bind(4, std::string_view(to_string(m.src)));
      st.bind(5, std::string_view(to_string(m.dst))).bind(6, std::int64_t{m.async}).bind_u64(7, m.bytes);
      st.bind(8, std::int64_t{m.src_device}).bind(9, std::int64_t{m.dst_device});
      st.run();
    }
  }
  {
    const auto first = first_op_of(g, GpuOpKind::Memset, g.memsets.size());
    Statement st(db, "INSERT INTO gpu_memset VALUES (?, ?, ?, ?, ?)");
    for (std::size_t i = 0; i < g.memsets.size(); ++i) {
      const GpuMemset& m = g.memsets[i];
      st.bind(1, i64(i));
      bind_optional(st, 2, first[i]);
      st.bind_u64(3, m.bytes).bind(4, std::int64_t{m.value}).bind(5, std::string_view(to_string(m.memory)));
      st.run();
    }
  }
}

void write_syncs_and_memory(sqlite::Database& db, const GpuProfile& g) {
  Statement sync(db, "INSERT INTO gpu_sync VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)");
  for (std::size_t i = 0; i < g.syncs.size(); ++i) {
    const GpuSync& s = g.syncs[i];
    sync.bind(1, i64(i)).bind_u64(2, s.start_ns).bind_u64(3, s.end_ns - s.start_ns);
    sync.bind(4, std::string_view(sync_type_name(s.type)));
    bind_optional(sync, 5, s.stream);
    sync.bind(6, std::int64_t{s.correlation_id});
    bind_launch(sync, 7, s.launch);
    sync.run();
  }
  Statement mem(db, "INSERT INTO gpu_memory_event VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)");
  for (std::size_t i = 0; i < g.memory_events.size(); ++i) {
    const GpuMemoryEvent& e = g.memory_events[i];
    mem.bind(1, i64(i)).bind_u64(2, e.time_ns).bind(3, std::int64_t{e.device});
    mem.bind(4, std::string_view(e.alloc ? "alloc" : "free")).bind(5, std::string_view(to_string(e.kind)));
    mem.bind(6, std::int64_t{e.async}).bind_u64(7, e.address).bind_u64(8, e.bytes);
    mem.bind(9, std::int64_t{e.correlation_id});
    bind_launch(mem, 10, e.launch);
    bind_optional(mem, 15, e.source);
    mem.run();
  }
}

void write_counters_and_scopes(sqlite::Database& db, const GpuProfile& g) {
  Statement track(db, "INSERT INTO gpu_counter_track VALUES (?, ?, ?, ?)");
  Statement point(db, "INSERT INTO gpu_counter VALUES (?, ?, ?, ?)");
  std::int64_t id = 0;
  for (std::size_t i = 0; i < g.counters.size(); ++i) {
    const GpuCounter& c = g.counters[i];
    track.bind(1, i64(i)).bind(2, std::int64_t{c.device}).bind(3, std::string_view(c.name));
    track.bind(4, std::string_view(c.unit)).run();
    for (const auto& [time_ns, value] : c.points) point.bind(1, id++).bind_u64(2, time_ns).bind(3, i64(i)).bind(4, value).run();
  }
  Statement scope(db, "INSERT INTO gpu_scope VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)");
  for (std::size_t i = 0; i < g.scopes.size(); ++i) {
    const GpuScopeStats& s = g.scopes[i];
    scope.bind(1, i64(i));
    bind_optional(scope, 2, s.name);
    scope.bind_u64(3, s.kernels).bind_u64(4, s.kernel_ns).bind_u64(5, s.memcpys).bind_u64(6, s.memcpy_ns);
    scope.bind_u64(7, s.memcpy_bytes).bind_u64(8, s.memsets).bind_u64(9, s.memset_ns).bind_u64(10, s.alloc_bytes);
    scope.bind_u64(11, s.alloc_count).bind_u64(12, s.free_bytes);
    scope.run();
  }
}

// ---- reading ---------------------------------------------------------------------------

using sqlite::has_table;

[[noreturn]] void invalid(const std::string& path, std::string_view where, std::string_view what) {
  throw Error(fmt::format("'{}' is not a valid nnprof profile: {} {}; the file is damaged or was not "
                          "written by nnprof, record the profile again",
                          path, where, what));
}

// One row of a gpu_* table being read (sqlite::Row checks each column), whose id must be its
// position: the index other rows refer to.
class Row : public sqlite::Row {
 public:
  Row(const Statement& st, const char* table, std::size_t index) : sqlite::Row(st, table, index) {
    if (i64(0) != static_cast<std::int64_t>(index)) fail(fmt::format("has id {}: ids are not dense from 0", i64(0)));
  }

  template <class E, std::size_t N>
  [[nodiscard]] E parsed(const char* const (&names)[N], int i) const {
    E out{};
    const std::string name = text(i);
    if (!parse_in(names, name, out)) fail(fmt::format("has the unknown {} '{}'", column(i), name));
    return out;
  }

  [[nodiscard]] GpuLaunch launch(int first) const {
    return GpuLaunch{optional_u32(first), u64(first + 1), u32(first + 2), optional_u32(first + 3),
                     optional_u32(first + 4)};
  }
};

class GpuReader {
 public:
  GpuReader(sqlite::Database& db, Profile& p, const SliceThreads& slices) : db_(db), p_(p), g_(p.gpu), slices_(slices) {}

  void read() {
    for (const char* table : kGpuTables)
      if (!has_table(db_, table))
        invalid(db_.path(), "the GPU tables", fmt::format("are incomplete: it has gpu_device but no {} table", table));
    read_summary();
    devices_and_tracks();
    api_calls();
    slices();
    details();
    syncs();
    memory_events();
    counters();
    scopes();
  }

 private:
  void read_summary() {
    Statement st(db_, "SELECT key, value FROM meta WHERE key GLOB 'gpu_*'", "meta");
    while (st.step()) {
      const std::string key = st.text(0);
      const sqlite::Row row(st, "meta", 0, key);
      for_each_summary_field(g_.summary, [&](const char* name, auto& field) {
        if (key == name) read_meta_value(row, key, field);
      });
    }
  }

  void read_meta_value(const sqlite::Row& r, const std::string&, bool& v) { v = r.flag(1); }
  void read_meta_value(const sqlite::Row& r, const std::string&, std::string& v) { v = r.text(1); }
  void read_meta_value(const sqlite::Row& r, const std::string&, std::int64_t& v) { v = r.i64(1); }
  void read_meta_value(const sqlite::Row& r, const std::string&, std::uint64_t& v) { v = r.u64(1); }
  void read_meta_value(const sqlite::Row& r, const std::string&, double& v) { v = r.f64(1); }
  template <class T>
  void read_meta_value(const sqlite::Row& r, const std::string& key, T& v) {
    const std::int64_t x = r.i64(1);
    if (x < static_cast<std::int64_t>(std::numeric_limits<T>::min()) ||
        x > static_cast<std::int64_t>(std::numeric_limits<T>::max()))
      invalid(db_.path(), fmt::format("meta key {}", key), fmt::format("has the value {}, out of range", x));
    v = static_cast<T>(x);
  }

  bool name_ok(StringId id) const { return id == kNone || id < p_.strings.size(); }

  // The CPU side of GPU work: a known thread (or none), node, slice on that thread, API call.
  void check_launch(const Row& r, const GpuLaunch& l) const {
    if (l.thread != kNone && l.thread >= p_.threads.size()) r.fail("refers to a missing thread (launch_utid)");
    if (l.node >= p_.call_tree.size()) r.fail("refers to a missing call-tree node (launch_node_id)");
    if (l.span != kNone && slices_.thread_of(l.span) != l.thread)
      r.fail("refers to a missing slice, or to one on another thread (launch_slice_id)");
    if (l.api != kNone && l.api >= g_.api_calls.size()) r.fail("refers to a missing CUDA API call (api_id)");
  }

  void devices_and_tracks() {
    {
      Statement st(db_, "SELECT id, device_id, name, pci_bus_id, cc_major, cc_minor, sms, max_warps_per_sm, "
                        "max_threads_per_block, max_registers_per_sm, max_shared_bytes_per_sm, max_blocks_per_sm, "
                        "core_clock_khz, memory_bytes, bandwidth_bytes_per_s FROM gpu_device ORDER BY id", "gpu_device");
      while (st.step()) {
        const Row r(st, "gpu_device", g_.devices.size());
        GpuDevice d;
        d.id = r.u32(1);
        d.name = r.text(2);
        d.pci_bus_id = r.text(3);
        d.cc_major = r.u32(4);
        d.cc_minor = r.u32(5);
        d.sms = r.u32(6);
        d.max_warps_per_sm = r.u32(7);
        d.max_threads_per_block = r.u32(8);
        d.max_registers_per_sm = r.u32(9);
        d.max_shared_bytes_per_sm = r.u32(10);
        d.max_blocks_per_sm = r.u32(11);
        d.core_clock_khz = r.u32(12);
        d.memory_bytes = r.u64(13);
        d.bandwidth_bytes_per_s = r.u64(14);
        g_.devices.push_back(std::move(d));
      }
    }
    Statement st(db_, "SELECT id, device_id, context_id, stream_id, priority, is_default FROM gpu_track ORDER BY id", "gpu_track");
    while (st.step()) {
      const Row r(st, "gpu_track", g_.streams.size());
      g_.streams.push_back(GpuStream{r.u32(1), r.u32(2), r.u32(3), r.u32(4), r.flag(5)});
    }
  }

  void api_calls() {
    Statement st(db_, "SELECT id, ts, dur, utid, tid, name_id, driver, cbid, correlation_id, return_value, node_id, "
                      "external_id, external_kind FROM gpu_api_call ORDER BY id", "gpu_api_call");
    while (st.step()) {
      const Row r(st, "gpu_api_call", g_.api_calls.size());
      GpuApiCall a;
      a.start_ns = r.u64(1);
      a.end_ns = r.end(1, 2);
      a.thread = r.optional_u32(3);
      a.os_tid = r.i64(4);
      a.name = r.optional_u32(5);
      a.driver = r.flag(6);
      a.cbid = r.u32(7);
      a.correlation_id = r.u32(8);
      a.return_value = r.u32(9);
      a.node = r.u32(10);
      a.external_id = r.u64(11);
      a.external_kind = r.u8(12);
      if (a.thread != kNone && a.thread >= p_.threads.size()) r.fail("refers to a missing thread (utid)");
      if (a.node >= p_.call_tree.size()) r.fail("refers to a missing call-tree node (node_id)");
      if (!name_ok(a.name)) r.fail("names a missing string (name_id)");
      if (!g_.api_calls.empty() && a.start_ns < g_.api_calls.back().start_ns)
        r.fail("is out of order (API calls are sorted by ts)");
      g_.api_calls.push_back(a);
    }
  }

  void slices() {
    Statement st(db_, "SELECT id, ts, dur, track_id, kind, name_id, correlation_id, launch_utid, launch_ts, "
                      "launch_node_id, launch_slice_id, api_id, detail_id FROM gpu_slice ORDER BY id", "gpu_slice");
    while (st.step()) {
      const Row r(st, "gpu_slice", g_.ops.size());
      GpuOp op;
      op.start_ns = r.u64(1);
      op.end_ns = r.end(1, 2);
      op.stream = r.u32(3);
      op.kind = r.parsed<GpuOpKind>(kOpKinds, 4);
      op.name = r.optional_u32(5);
      op.correlation_id = r.u32(6);
      op.launch = r.launch(7);
      op.detail = r.u32(12);
      if (op.stream >= g_.streams.size()) r.fail("refers to a missing track (track_id)");
      if (!name_ok(op.name)) r.fail("names a missing string (name_id)");
      check_launch(r, op.launch);
      if (!g_.ops.empty() && std::tie(op.stream, op.start_ns) < std::tie(g_.ops.back().stream, g_.ops.back().start_ns))
        r.fail("is out of order (slices are sorted by track_id, then ts)");
      g_.ops.push_back(op);
    }
  }

  // A detail row's slice_id, when set, names an op of its kind that uses this row.
  void check_slice(const Row& r, std::uint32_t slice, GpuOpKind kind, std::size_t index) const {
    if (slice == kNone) return;
    if (slice >= g_.ops.size() || g_.ops[slice].kind != kind || g_.ops[slice].detail != index)
      r.fail(fmt::format("refers to a missing {} slice, or to one whose detail_id is not this row (slice_id)",
                         stored_name(kind)));
  }

  void details() {
    {
      Statement st(db_, "SELECT id, slice_id, grid_x, grid_y, grid_z, block_x, block_y, block_z, registers_per_thread, "
                        "static_shared_bytes, dynamic_shared_bytes, local_bytes_per_thread, graph_id, occupancy, "
                        "occupancy_estimated FROM gpu_kernel ORDER BY id", "gpu_kernel");
      while (st.step()) {
        const Row r(st, "gpu_kernel", g_.kernels.size());
        check_slice(r, r.optional_u32(1), GpuOpKind::Kernel, g_.kernels.size());
        GpuKernel k;
        for (int d = 0; d < 3; ++d) {
          k.grid[d] = r.i32(2 + d);
          k.block[d] = r.i32(5 + d);
        }
        k.registers_per_thread = r.u32(8);
        k.static_shared_bytes = r.i32(9);
        k.dynamic_shared_bytes = r.i32(10);
        k.local_bytes_per_thread = r.u32(11);
        k.graph_id = r.u32(12);
        k.occupancy = r.f64(13);
        k.occupancy_estimated = r.flag(14);
        g_.kernels.push_back(k);
      }
    }
    {
      Statement st(db_, "SELECT id, slice_id, kind, src_memory, dst_memory, async, bytes, src_device_id, dst_device_id "
                        "FROM gpu_memcpy ORDER BY id", "gpu_memcpy");
      while (st.step()) {
        const Row r(st, "gpu_memcpy", g_.memcpys.size());
        check_slice(r, r.optional_u32(1), GpuOpKind::Memcpy, g_.memcpys.size());
        GpuMemcpy m;
        m.kind = r.parsed<MemcpyKind>(kMemcpyKinds, 2);
        m.src = r.parsed<GpuMemoryKind>(kMemoryKinds, 3);
        m.dst = r.parsed<GpuMemoryKind>(kMemoryKinds, 4);
        m.async = r.flag(5);
        m.bytes = r.u64(6);
        m.src_device = r.u32(7);
        m.dst_device = r.u32(8);
        g_.memcpys.push_back(m);
      }
    }
    {
      Statement st(db_, "SELECT id, slice_id, bytes, value, memory_kind FROM gpu_memset ORDER BY id", "gpu_memset");
      while (st.step()) {
        const Row r(st, "gpu_memset", g_.memsets.size());
        check_slice(r, r.optional_u32(1), GpuOpKind::Memset, g_.memsets.size());
        g_.memsets.push_back(GpuMemset{r.u64(2), r.u32(3), r.parsed<GpuMemoryKind>(kMemoryKinds, 4)});
      }
    }
    for (std::size_t i = 0; i < g_.ops.size(); ++i) {
      const GpuOp& op = g_.ops[i];
      const std::size_t rows = op.kind == GpuOpKind::Kernel   ? g_.kernels.size()
                               : op.kind == GpuOpKind::Memcpy ? g_.memcpys.size()
                                                              : g_.memsets.size();
      if (op.detail >= rows)
        invalid(db_.path(), fmt::format("gpu_slice row {}", i),
                fmt::format("refers to a missing gpu_{} row (detail_id {})", stored_name(op.kind), op.detail));
    }
  }

  void syncs() {
    Statement st(db_, "SELECT id, ts, dur, type, track_id, correlation_id, launch_utid, launch_ts, launch_node_id, "
                      "launch_slice_id, api_id FROM gpu_sync ORDER BY id", "gpu_sync");
    while (st.step()) {
      const Row r(st, "gpu_sync", g_.syncs.size());
      GpuSync s;
      s.start_ns = r.u64(1);
      s.end_ns = r.end(1, 2);
      if (!parse_sync_type(r.text(3), s.type)) r.fail(fmt::format("has the unknown type '{}'", r.text(3)));
      s.stream = r.optional_u32(4);
      s.correlation_id = r.u32(5);
      s.launch = r.launch(6);
      if (s.stream != kNone && s.stream >= g_.streams.size()) r.fail("refers to a missing track (track_id)");
      check_launch(r, s.launch);
      if (!g_.syncs.empty() && s.start_ns < g_.syncs.back().start_ns) r.fail("is out of order (syncs are sorted by ts)");
      g_.syncs.push_back(s);
    }
  }

  void memory_events() {
    Statement st(db_, "SELECT id, ts, device_id, operation, memory_kind, async, address, bytes, correlation_id, "
                      "launch_utid, launch_ts, launch_node_id, launch_slice_id, api_id, source_id "
                      "FROM gpu_memory_event ORDER BY id", "gpu_memory_event");
    while (st.step()) {
      const Row r(st, "gpu_memory_event", g_.memory_events.size());
      GpuMemoryEvent e;
      e.time_ns = r.u64(1);
      e.device = r.u32(2);
      const std::string operation = r.text(3);
      if (operation != "alloc" && operation != "free") r.fail(fmt::format("has the unknown operation '{}'", operation));
      e.alloc = operation == "alloc";
      e.kind = r.parsed<GpuMemoryKind>(kMemoryKinds, 4);
      e.async = r.flag(5);
      e.address = r.u64(6);
      e.bytes = r.u64(7);
      e.correlation_id = r.u32(8);
      e.launch = r.launch(9);
      e.source = r.optional_u32(14);
      check_launch(r, e.launch);
      if (!name_ok(e.source)) r.fail("names a missing string (source_id)");
      if (!g_.memory_events.empty() && e.time_ns < g_.memory_events.back().time_ns)
        r.fail("is out of order (memory events are sorted by ts)");
      g_.memory_events.push_back(e);
    }
  }

  void counters() {
    {
      Statement st(db_, "SELECT id, device_id, name, unit FROM gpu_counter_track ORDER BY id", "gpu_counter_track");
      while (st.step()) {
        const Row r(st, "gpu_counter_track", g_.counters.size());
        GpuCounter c;
        c.device = r.u32(1);
        c.name = r.text(2);
        c.unit = r.text(3);
        g_.counters.push_back(std::move(c));
      }
    }
    Statement st(db_, "SELECT id, ts, track_id, value FROM gpu_counter ORDER BY id", "gpu_counter");
    std::size_t index = 0;
    while (st.step()) {
      const Row r(st, "gpu_counter", index++);
      const std::uint32_t track = r.u32(2);
      if (track >= g_.counters.size()) r.fail("refers to a missing gpu_counter_track (track_id)");
      g_.counters[track].points.emplace_back(r.u64(1), r.f64(3));
    }
  }

  void scopes() {
    Statement st(db_, "SELECT rank, name_id, kernels, kernel_ns, memcpys, memcpy_ns, memcpy_bytes, memsets, memset_ns, "
                      "alloc_bytes, alloc_count, free_bytes FROM gpu_scope ORDER BY rank", "gpu_scope");
    while (st.step()) {
      const Row r(st, "gpu_scope", g_.scopes.size());
      GpuScopeStats s;
      s.name = r.optional_u32(1);
      if (!name_ok(s.name)) r.fail("names a missing string (name_id)");
      s.kernels = r.u64(2);
      s.kernel_ns = r.u64(3);
      s.memcpys = r.u64(4);
      s.memcpy_ns = r.u64(5);
      s.memcpy_bytes = r.u64(6);
      s.memsets = r.u64(7);
      s.memset_ns = r.u64(8);
      s.alloc_bytes = r.u64(9);
      s.alloc_count = r.u64(10);
      s.free_bytes = r.u64(11);
      g_.scopes.push_back(s);
    }
  }

  sqlite::Database& db_;
  Profile& p_;
  GpuProfile& g_;
  const SliceThreads& slices_;
};

}  // namespace

const char* stored_name(GpuOpKind kind) noexcept { return name_in(kOpKinds, kind); }

void write_gpu_tables(sqlite::Database& db, const Profile& p) {
  db.exec(kGpuSchema);
  const GpuProfile& g = p.gpu;
  write_summary(db, g.summary);
  write_devices_and_tracks(db, g);
  write_api_calls_and_slices(db, g);
  write_details(db, g);
  write_syncs_and_memory(db, g);
  write_counters_and_scopes(db, g);
}

void read_gpu_tables(sqlite::Database& db, Profile& p, const SliceThreads& slices) {
  if (!has_table(db, "gpu_device")) return;  // written before format version 6: no GPU data
  p.gpu = GpuProfile{};
  GpuReader(db, p, slices).read();
}

}  // namespace nnprof::io
