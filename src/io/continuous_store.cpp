#include "io/continuous_store.hpp"

#include <cmath>
#include <string_view>

#include <fmt/format.h>

#include "nnprof/error.hpp"

namespace nnprof::io {

namespace {

using sqlite::Statement;

// A window's lists are rows of their own (top scopes, top functions, each with its rank in
// the window), so `sqlite3 run.nnprof` can ask which function grew its share week by week.
// A figure that was not measured (NaN) is stored as NULL.
constexpr const char* kContinuousSchema = R"sql(
CREATE TABLE continuous_info(key TEXT PRIMARY KEY, value) WITHOUT ROWID;
CREATE TABLE continuous_window(id INTEGER PRIMARY KEY, ts INTEGER NOT NULL, dur INTEGER NOT NULL,
  raw_windows INTEGER NOT NULL, step_aligned INTEGER NOT NULL, steps INTEGER NOT NULL, step_dur INTEGER NOT NULL,
  items INTEGER NOT NULL, scope_calls INTEGER NOT NULL, cpu_samples INTEGER NOT NULL, cpu_sample_dur INTEGER NOT NULL,
  rss INTEGER NOT NULL, rss_peak INTEGER NOT NULL, heap_live INTEGER NOT NULL, heap_alloc INTEGER NOT NULL,
  heap_free INTEGER NOT NULL, gpu_memory REAL, energy_joules REAL, cpu_percent REAL);
CREATE TABLE window_scope(window_id INTEGER NOT NULL, rank INTEGER NOT NULL, name TEXT NOT NULL,
  calls INTEGER NOT NULL, dur INTEGER NOT NULL, self_dur INTEGER NOT NULL, items INTEGER NOT NULL,
  PRIMARY KEY(window_id, rank)) WITHOUT ROWID;
CREATE TABLE window_function(window_id INTEGER NOT NULL, rank INTEGER NOT NULL, name TEXT NOT NULL,
  samples INTEGER NOT NULL, weight INTEGER NOT NULL, PRIMARY KEY(window_id, rank)) WITHOUT ROWID;
CREATE TABLE anomaly(id INTEGER PRIMARY KEY, kind TEXT NOT NULL, metric TEXT NOT NULL, unit TEXT NOT NULL,
  window INTEGER NOT NULL, ts INTEGER NOT NULL, before REAL NOT NULL, after REAL NOT NULL, magnitude REAL NOT NULL,
  score REAL NOT NULL, worse INTEGER NOT NULL, description TEXT NOT NULL);
CREATE TABLE trend(id INTEGER PRIMARY KEY, metric TEXT NOT NULL, unit TEXT NOT NULL, slope_per_hour REAL NOT NULL,
  relative_slope_per_hour REAL NOT NULL, low REAL NOT NULL, high REAL NOT NULL, significant INTEGER NOT NULL,
  windows INTEGER NOT NULL);
)sql";

constexpr AnomalyKind kKinds[] = {AnomalyKind::LevelShift, AnomalyKind::Outlier, AnomalyKind::Growth};

void bind_measured(Statement& st, int index, double v) {
  if (std::isnan(v))
    st.bind_null(index);
  else
    st.bind(index, v);
}

std::int64_t i64(std::uint64_t v) { return static_cast<std::int64_t>(v); }

void write_info(sqlite::Database& db, const ContinuousProfile& c) {
  Statement info(db, "INSERT OR REPLACE INTO continuous_info VALUES (?, ?)");
  info.bind(1, std::string_view("interval_ns")).bind_u64(2, c.interval_ns).run();
  info.bind(1, std::string_view("step_scope")).bind(2, std::string_view(c.step_scope)).run();
  info.bind(1, std::string_view("finished")).bind(2, std::int64_t{c.finished}).run();
}

void write_window(sqlite::Database& db, std::uint64_t id, const ProfileWindow& w) {
  Statement st(db, "INSERT OR REPLACE INTO continuous_window VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)");
  st.bind(1, i64(id))
      .bind_u64(2, w.start_ns)
      .bind_u64(3, w.end_ns - w.start_ns)
      .bind(4, std::int64_t{w.raw_windows})
      .bind(5, std::int64_t{w.step_aligned})
      .bind_u64(6, w.steps)
      .bind_u64(7, w.step_ns)
      .bind_u64(8, w.items)
      .bind_u64(9, w.scope_calls)
      .bind_u64(10, w.cpu_samples)
      .bind_u64(11, w.cpu_sample_ns)
      .bind_u64(12, w.rss_bytes)
      .bind_u64(13, w.rss_peak_bytes)
      .bind_u64(14, w.heap_live_bytes)
      .bind_u64(15, w.heap_alloc_bytes)
      .bind_u64(16, w.heap_free_bytes);
  bind_measured(st, 17, w.gpu_memory_bytes);
  bind_measured(st, 18, w.energy_joules);
  bind_measured(st, 19, w.cpu_percent);
  st.run();
  Statement scope(db, "INSERT INTO window_scope VALUES (?, ?, ?, ?, ?, ?, ?)");
  for (std::size_t r = 0; r < w.scopes.size(); ++r) {
    const WindowScope& s = w.scopes[r];
    scope.bind(1, i64(id))
        .bind(2, i64(r))
        .bind(3, std::string_view(s.name))
        .bind_u64(4, s.calls)
        .bind_u64(5, s.total_ns)
        .bind_u64(6, s.self_ns)
        .bind_u64(7, s.items)
        .run();
  }
  Statement function(db, "INSERT INTO window_function VALUES (?, ?, ?, ?, ?)");
  for (std::size_t r = 0; r < w.functions.size(); ++r) {
    const WindowFunction& f = w.functions[r];
    function.bind(1, i64(id)).bind(2, i64(r)).bind(3, std::string_view(f.name)).bind_u64(4, f.samples).bind_u64(5, f.weight_ns).run();
  }
}

void remove_window(sqlite::Database& db, std::uint64_t id) {
  for (const char* sql : {"DELETE FROM continuous_window WHERE id = ?", "DELETE FROM window_scope WHERE window_id = ?",
                          "DELETE FROM window_function WHERE window_id = ?"})
    Statement(db, sql).bind(1, i64(id)).run();
}

void write_findings(sqlite::Database& db, const ContinuousProfile& c) {
  db.exec("DELETE FROM anomaly; DELETE FROM trend;");
  Statement anomaly(db, "INSERT INTO anomaly VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)");
  for (std::size_t i = 0; i < c.anomalies.size(); ++i) {
    const Anomaly& a = c.anomalies[i];
    anomaly.bind(1, i64(i))
        .bind(2, std::string_view(to_string(a.kind)))
        .bind(3, std::string_view(a.metric))
        .bind(4, std::string_view(a.unit))
        .bind(5, i64(a.window))
        .bind_u64(6, a.window_start_ns)
        .bind(7, a.before)
        .bind(8, a.after)
        .bind(9, a.magnitude)
        .bind(10, a.score)
        .bind(11, std::int64_t{a.worse})
        .bind(12, std::string_view(a.description))
        .run();
  }
  Statement trend(db, "INSERT INTO trend VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)");
  for (std::size_t i = 0; i < c.trends.size(); ++i) {
    const Trend& t = c.trends[i];
    trend.bind(1, i64(i))
        .bind(2, std::string_view(t.metric))
        .bind(3, std::string_view(t.unit))
        .bind(4, t.slope_per_hour)
        .bind(5, t.relative_slope_per_hour)
        .bind(6, t.low)
        .bind(7, t.high)
        .bind(8, std::int64_t{t.significant})
        .bind(9, i64(t.windows))
        .run();
  }
}

double measured(const sqlite::Row& r, int i) { return r.is_null(i) ? ProfileWindow::kNotMeasured : r.f64(i); }

}  // namespace

void write_continuous_tables(sqlite::Database& db, const Profile& p) {
  db.exec(kContinuousSchema);
  const ContinuousProfile& c = p.continuous;
  if (!c.enabled) return;
  write_info(db, c);
  for (std::size_t i = 0; i < c.windows.size(); ++i) write_window(db, i, c.windows[i]);
  write_findings(db, c);
}

void read_continuous_tables(sqlite::Database& db, Profile& p) {
  if (!sqlite::has_table(db, "continuous_info")) return;  // written before format version 11
  ContinuousProfile c;
  {
    Statement st(db, "SELECT key, value FROM continuous_info", "continuous_info");
    int seen = 0;
    while (st.step()) {
      const std::string key = st.text(0);
      const sqlite::Row r(st, "continuous_info", 0, key);
      ++seen;
      if (key == "interval_ns") c.interval_ns = r.u64(1);
      else if (key == "step_scope") c.step_scope = r.text(1);
      else if (key == "finished") c.finished = r.flag(1);
      else --seen;  // a key of a later version
    }
    if (seen == 0) return;  // not a continuous run
    if (seen != 3)
      throw Error(fmt::format("'{}' is not a valid nnprof profile: its continuous_info table lacks some of its 3 "
                              "keys; the file is damaged or was edited",
                              db.path()));
    c.enabled = true;
  }
  std::vector<std::int64_t> ids;
  {
    Statement st(db,
                 "SELECT id, ts, dur, raw_windows, step_aligned, steps, step_dur, items, scope_calls, cpu_samples, "
                 "cpu_sample_dur, rss, rss_peak, heap_live, heap_alloc, heap_free, gpu_memory, energy_joules, "
                 "cpu_percent FROM continuous_window ORDER BY ts, id",
                 "continuous_window");
    while (st.step()) {
      const sqlite::Row r(st, "continuous_window", c.windows.size());
      ProfileWindow w;
      ids.push_back(r.i64(0));
      w.start_ns = r.u64(1);
      w.end_ns = r.end(1, 2);
      if (!c.windows.empty() && w.start_ns < c.windows.back().end_ns)
        r.fail("overlaps the window before it (windows follow one another)");
      w.raw_windows = r.u32(3);
      if (w.raw_windows == 0) r.fail("stands for 0 raw windows");
      w.step_aligned = r.flag(4);
      w.steps = r.u64(5);
      w.step_ns = r.u64(6);
      w.items = r.u64(7);
      w.scope_calls = r.u64(8);
      w.cpu_samples = r.u64(9);
      w.cpu_sample_ns = r.u64(10);
      w.rss_bytes = r.u64(11);
      w.rss_peak_bytes = r.u64(12);
      w.heap_live_bytes = r.u64(13);
      w.heap_alloc_bytes = r.u64(14);
      w.heap_free_bytes = r.u64(15);
      w.gpu_memory_bytes = measured(r, 16);
      w.energy_joules = measured(r, 17);
      w.cpu_percent = measured(r, 18);
      c.windows.push_back(std::move(w));
    }
  }
  // Lists by window id, then placed in the windows' time order.
  const auto window_of = [&](const sqlite::Row& r) -> ProfileWindow& {
    const std::int64_t id = r.i64(0);
    for (std::size_t i = 0; i < ids.size(); ++i)
      if (ids[i] == id) return c.windows[i];
    r.fail("refers to a missing continuous_window (window_id)");
  };
  {
    Statement st(db, "SELECT window_id, rank, name, calls, dur, self_dur, items FROM window_scope ORDER BY window_id, rank",
                 "window_scope");
    std::size_t index = 0;
    while (st.step()) {
      const sqlite::Row r(st, "window_scope", index++);
      ProfileWindow& w = window_of(r);
      if (r.u64(1) != w.scopes.size()) r.fail("breaks the ranks of its window's scopes (0, 1, 2, ...)");
      w.scopes.push_back(WindowScope{r.text(2), r.u64(3), r.u64(4), r.u64(5), r.u64(6)});
    }
  }
  {
    Statement st(db, "SELECT window_id, rank, name, samples, weight FROM window_function ORDER BY window_id, rank",
                 "window_function");
    std::size_t index = 0;
    while (st.step()) {
      const sqlite::Row r(st, "window_function", index++);
      ProfileWindow& w = window_of(r);
      if (r.u64(1) != w.functions.size()) r.fail("breaks the ranks of its window's functions (0, 1, 2, ...)");
      w.functions.push_back(WindowFunction{r.text(2), r.u64(3), r.u64(4)});
    }
  }
  {
    Statement st(db,
                 "SELECT kind, metric, unit, window, ts, before, after, magnitude, score, worse, description FROM "
                 "anomaly ORDER BY id",
                 "anomaly");
    while (st.step()) {
      const sqlite::Row r(st, "anomaly", c.anomalies.size());
      Anomaly a;
      const std::string kind = r.text(0);
      bool known = false;
      for (AnomalyKind k : kKinds)
        if (kind == to_string(k)) {
          a.kind = k;
          known = true;
        }
      if (!known) r.fail(fmt::format("has an unknown kind '{}' (level-shift, outlier, growth)", kind));
      a.metric = r.text(1);
      a.unit = r.text(2);
      a.window = r.ranged<std::uint32_t>(3);
      a.window_start_ns = r.u64(4);
      a.before = r.f64(5);
      a.after = r.f64(6);
      a.magnitude = r.f64(7);
      a.score = r.f64(8);
      a.worse = r.flag(9);
      a.description = r.text(10);
      c.anomalies.push_back(std::move(a));
    }
  }
  {
    Statement st(db,
                 "SELECT metric, unit, slope_per_hour, relative_slope_per_hour, low, high, significant, windows FROM "
                 "trend ORDER BY id",
                 "trend");
    while (st.step()) {
      const sqlite::Row r(st, "trend", c.trends.size());
      Trend t;
      t.metric = r.text(0);
      t.unit = r.text(1);
      t.slope_per_hour = r.f64(2);
      t.relative_slope_per_hour = r.f64(3);
      t.low = r.f64(4);
      t.high = r.f64(5);
      t.significant = r.flag(6);
      t.windows = r.u64(7);
      c.trends.push_back(std::move(t));
    }
  }
  p.continuous = std::move(c);
}

ContinuousFileWriter::ContinuousFileWriter(const std::string& path)
    : db_(std::make_unique<sqlite::Database>(path, sqlite::Database::Mode::ReadWriteExisting)) {
  // The write-ahead log: a reader (nnprof report on the file of a run still going, or left by
  // a kill -9) sees the last committed update and never needs to roll anything back, which a
  // read-only connection could not do with a rollback journal.
  // A reader opening the file (nnprof report on a running job) holds locks for moments; wait
  // for them rather than fail the window.
  sqlite3_busy_timeout(db_->handle(), 2000);
  db_->exec("PRAGMA journal_mode=WAL; PRAGMA synchronous=NORMAL;");
}

ContinuousFileWriter::~ContinuousFileWriter() {
  try {
    close();
  } catch (...) {
  }
}

void ContinuousFileWriter::update(const std::vector<std::uint64_t>& removed, const std::vector<Row>& written,
                                  const ContinuousProfile& continuous) {
  if (!db_) return;
  db_->exec("BEGIN IMMEDIATE");
  try {
    for (const std::uint64_t id : removed) remove_window(*db_, id);
    for (const Row& row : written) {
      remove_window(*db_, row.id);
      write_window(*db_, row.id, *row.window);
    }
    write_info(*db_, continuous);
    write_findings(*db_, continuous);
    db_->exec("COMMIT");
  } catch (...) {
    db_->exec("ROLLBACK");
    throw;
  }
  // The log's pages into the file itself, so that a copy of the .nnprof alone has them.
  db_->exec("PRAGMA wal_checkpoint(TRUNCATE);");
}

void ContinuousFileWriter::close() {
  if (!db_) return;
  // Everything into the file, then the connection closed: the last connection to close removes
  // the log. The journal mode is left as it is: switching it needs every reader gone, and a
  // file Profile::save writes over this one is not in WAL mode, so a log a reader still holds
  // is never applied to it.
  db_->exec("PRAGMA wal_checkpoint(TRUNCATE);");
  db_.reset();
}

}  // namespace nnprof::io
