#include "io/system_store.hpp"

#include <cmath>
#include <limits>
#include <string>

#include <fmt/format.h>

#include "nnprof/error.hpp"

namespace nnprof::io {

namespace {

using sqlite::Row;
using sqlite::Statement;

// Counters as Perfetto keeps them (a track, then its values), with the samples shared by every
// track: one row per sample in system_sample, one per value read in system_counter. A value
// not read at a sample has no row (NaN in the profile).
constexpr const char* kSystemSchema = R"sql(
CREATE TABLE system_info(key TEXT PRIMARY KEY, value) WITHOUT ROWID;
CREATE TABLE system_sample(id INTEGER PRIMARY KEY, ts INTEGER NOT NULL, scope_name_id INTEGER);
CREATE TABLE system_counter_track(id INTEGER PRIMARY KEY, name TEXT NOT NULL, unit TEXT NOT NULL);
CREATE TABLE system_counter(track_id INTEGER NOT NULL, sample_id INTEGER NOT NULL, value REAL NOT NULL,
  PRIMARY KEY(track_id, sample_id)) WITHOUT ROWID;
CREATE VIEW system_counter_at AS SELECT t.name AS track, t.unit, s.ts, c.value
  FROM system_counter c JOIN system_counter_track t ON t.id = c.track_id JOIN system_sample s ON s.id = c.sample_id;
CREATE TABLE energy_domain(id INTEGER PRIMARY KEY, name TEXT NOT NULL, kind TEXT NOT NULL, method TEXT NOT NULL,
  joules REAL NOT NULL, uncertainty REAL NOT NULL, track TEXT NOT NULL, note TEXT NOT NULL);
CREATE TABLE system_note(id INTEGER PRIMARY KEY, text TEXT NOT NULL);
)sql";

constexpr EnergyMethod kMethods[] = {EnergyMethod::Rapl, EnergyMethod::NvmlEnergy, EnergyMethod::NvmlPower,
                                     EnergyMethod::Modelled};

// The method stored as `text` (to_string(EnergyMethod) wrote it) into `out`; false for an unknown text.
bool parse_energy_method(std::string_view text, EnergyMethod& out) noexcept {
  for (EnergyMethod m : kMethods)
    if (text == to_string(m)) {
      out = m;
      return true;
    }
  return false;
}

void write_info(sqlite::Database& db, const SystemProfile& s) {
  Statement info(db, "INSERT INTO system_info VALUES (?, ?)");
  const auto put = [&](std::string_view key, std::int64_t v) { info.bind(1, key).bind(2, v).run(); };
  put("interval_ms", s.interval_ms);
  put("logical_cpus", s.limits.logical_cpus);
  info.bind(1, std::string_view("cgroup_cpu_cores")).bind(2, s.limits.cgroup_cpu_cores).run();
  info.bind(1, std::string_view("host_memory_bytes")).bind_u64(2, s.limits.host_memory_bytes).run();
  info.bind(1, std::string_view("cgroup_memory_bytes")).bind_u64(2, s.limits.cgroup_memory_bytes).run();
  info.bind(1, std::string_view("cgroup")).bind(2, std::string_view(s.limits.cgroup)).run();
  if (s.scope_thread == kNone)
    info.bind(1, std::string_view("scope_utid")).bind_null(2).run();
  else
    put("scope_utid", s.scope_thread);
}

// The file's system_info as a SystemProfile's scalars; every key must be there.
class InfoReader {
 public:
  InfoReader(sqlite::Database& db, SystemProfile& s) : db_(db), s_(s) {}

  void read() {
    Statement st(db_, "SELECT key, value FROM system_info", "system_info");
    int seen = 0;
    while (st.step()) {
      const std::string key = st.text(0);
      const Row r(st, "system_info", 0, key);
      ++seen;
      if (key == "interval_ms") s_.interval_ms = r.u32(1);
      else if (key == "logical_cpus") s_.limits.logical_cpus = r.u32(1);
      else if (key == "cgroup_cpu_cores") s_.limits.cgroup_cpu_cores = r.f64(1);
      else if (key == "host_memory_bytes") s_.limits.host_memory_bytes = r.u64(1);
      else if (key == "cgroup_memory_bytes") s_.limits.cgroup_memory_bytes = r.u64(1);
      else if (key == "cgroup") s_.limits.cgroup = r.text(1);
      else if (key == "scope_utid") s_.scope_thread = r.optional_u32(1);
      else --seen;  // a key of a later version: ignored
    }
    if (seen == 0) return;  // the monitor did not run
    if (seen != 7)
      throw Error(fmt::format("'{}' is not a valid nnprof profile: its system_info table lacks some of its 7 keys; "
                              "the file is damaged or was edited",
                              db_.path()));
    s_.monitored = true;
  }

 private:
  sqlite::Database& db_;
  SystemProfile& s_;
};

}  // namespace

void write_system_tables(sqlite::Database& db, const Profile& p) {
  db.exec(kSystemSchema);
  const SystemProfile& s = p.system;
  if (!s.monitored) return;
  write_info(db, s);
  Statement sample(db, "INSERT INTO system_sample VALUES (?, ?, ?)");
  for (std::size_t i = 0; i < s.sample_ns.size(); ++i) {
    sample.bind(1, static_cast<std::int64_t>(i)).bind_u64(2, s.sample_ns[i]);
    const StringId scope = i < s.sample_scope.size() ? s.sample_scope[i] : kNone;
    if (scope == kNone)
      sample.bind_null(3);
    else
      sample.bind(3, std::int64_t{scope});
    sample.run();
  }
  Statement track(db, "INSERT INTO system_counter_track VALUES (?, ?, ?)");
  Statement counter(db, "INSERT INTO system_counter VALUES (?, ?, ?)");
  for (std::size_t t = 0; t < s.tracks.size(); ++t) {
    const SystemTrack& tr = s.tracks[t];
    track.bind(1, static_cast<std::int64_t>(t)).bind(2, std::string_view(tr.name)).bind(3, std::string_view(tr.unit)).run();
    for (std::size_t i = 0; i < tr.values.size(); ++i)
      if (!std::isnan(tr.values[i]))
        counter.bind(1, static_cast<std::int64_t>(t)).bind(2, static_cast<std::int64_t>(i)).bind(3, tr.values[i]).run();
  }
  Statement domain(db, "INSERT INTO energy_domain VALUES (?, ?, ?, ?, ?, ?, ?, ?)");
  for (std::size_t d = 0; d < s.energy.size(); ++d) {
    const EnergyDomain& e = s.energy[d];
    domain.bind(1, static_cast<std::int64_t>(d))
        .bind(2, std::string_view(e.name))
        .bind(3, std::string_view(e.kind))
        .bind(4, std::string_view(to_string(e.method)))
        .bind(5, e.joules)
        .bind(6, e.uncertainty)
        .bind(7, std::string_view(e.track))
        .bind(8, std::string_view(e.note))
        .run();
  }
  Statement note(db, "INSERT INTO system_note VALUES (?, ?)");
  for (std::size_t n = 0; n < s.notes.size(); ++n)
    note.bind(1, static_cast<std::int64_t>(n)).bind(2, std::string_view(s.notes[n])).run();
}

void read_system_tables(sqlite::Database& db, Profile& p) {
  if (!sqlite::has_table(db, "system_info")) return;  // written before format version 10
  SystemProfile s;
  InfoReader(db, s).read();
  if (!s.monitored) return;
  if (s.scope_thread != kNone && s.scope_thread >= p.threads.size())
    throw Error(fmt::format("'{}' is not a valid nnprof profile: system_info scope_utid {} names a missing thread; "
                            "the file is damaged or was edited",
                            db.path(), s.scope_thread));
  {
    Statement st(db, "SELECT id, ts, scope_name_id FROM system_sample ORDER BY id", "system_sample");
    while (st.step()) {
      const Row r(st, "system_sample", s.sample_ns.size());
      if (r.u64(0) != s.sample_ns.size()) r.fail("breaks the numbering of samples (ids must be 0, 1, 2, ...)");
      const std::uint64_t ts = r.u64(1);
      if (!s.sample_ns.empty() && ts < s.sample_ns.back()) r.fail("is out of order (samples are sorted by ts)");
      const StringId scope = r.optional_u32(2);
      if (scope != kNone && scope >= p.strings.size()) r.fail("names a missing string (scope_name_id)");
      s.sample_ns.push_back(ts);
      s.sample_scope.push_back(scope);
    }
  }
  {
    Statement st(db, "SELECT id, name, unit FROM system_counter_track ORDER BY id", "system_counter_track");
    while (st.step()) {
      const Row r(st, "system_counter_track", s.tracks.size());
      if (r.u64(0) != s.tracks.size()) r.fail("breaks the numbering of tracks (ids must be 0, 1, 2, ...)");
      s.tracks.push_back(SystemTrack{r.text(1), r.text(2),
                                     std::vector<double>(s.sample_ns.size(), std::numeric_limits<double>::quiet_NaN())});
    }
  }
  {
    Statement st(db, "SELECT track_id, sample_id, value FROM system_counter", "system_counter");
    std::size_t index = 0;
    while (st.step()) {
      const Row r(st, "system_counter", index++);
      const std::uint32_t track = r.u32(0), sample = r.u32(1);
      if (track >= s.tracks.size()) r.fail("refers to a missing system_counter_track (track_id)");
      if (sample >= s.sample_ns.size()) r.fail("refers to a missing system_sample (sample_id)");
      s.tracks[track].values[sample] = r.f64(2);
    }
  }
  {
    Statement st(db, "SELECT name, kind, method, joules, uncertainty, track, note FROM energy_domain ORDER BY id",
                 "energy_domain");
    while (st.step()) {
      const Row r(st, "energy_domain", s.energy.size());
      EnergyDomain e;
      e.name = r.text(0);
      e.kind = r.text(1);
      if (!parse_energy_method(r.text(2), e.method))
        r.fail(fmt::format("has an unknown method '{}' (rapl, nvml_energy, nvml_power, modelled)", r.text(2)));
      e.joules = r.f64(3);
      e.uncertainty = r.f64(4);
      if (!(e.joules >= 0.0) || !(e.uncertainty >= 0.0)) r.fail("has a negative or not-a-number joules or uncertainty");
      e.track = r.text(5);
      e.note = r.text(6);
      s.energy.push_back(std::move(e));
    }
  }
  {
    Statement st(db, "SELECT text FROM system_note ORDER BY id", "system_note");
    std::size_t index = 0;
    while (st.step()) s.notes.push_back(Row(st, "system_note", index++).text(0));
  }
  p.system = std::move(s);
}

}  // namespace nnprof::io
