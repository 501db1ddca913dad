#include "io/metric_store.hpp"

#include <fmt/format.h>

#include "io/metrics_json.hpp"
#include "nnprof/error.hpp"

namespace nnprof::io {

namespace {

using sqlite::Statement;

constexpr const char* kMetricSchema = R"sql(
CREATE TABLE metric(id INTEGER PRIMARY KEY, name_id INTEGER NOT NULL, kind TEXT NOT NULL, unit TEXT NOT NULL,
  count INTEGER NOT NULL, sum REAL NOT NULL, min REAL NOT NULL, max REAL NOT NULL, mean REAL NOT NULL,
  stddev REAL NOT NULL, p50 REAL NOT NULL, p90 REAL NOT NULL, p95 REAL NOT NULL, p99 REAL NOT NULL,
  percentile_points INTEGER NOT NULL, last REAL NOT NULL, points_dropped INTEGER NOT NULL);
CREATE TABLE metric_point(id INTEGER PRIMARY KEY, metric_id INTEGER NOT NULL, ts INTEGER NOT NULL,
  value REAL NOT NULL, utid INTEGER NOT NULL);
CREATE INDEX metric_point_by_metric ON metric_point(metric_id, ts);
)sql";

using sqlite::has_table;

}  // namespace

void write_metric_tables(sqlite::Database& db, const Profile& p) {
  db.exec(kMetricSchema);
  Statement metric(db, "INSERT INTO metric VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)");
  Statement point(db, "INSERT INTO metric_point(metric_id, ts, value, utid) VALUES (?, ?, ?, ?)");
  for (std::size_t i = 0; i < p.metrics.size(); ++i) {
    const MetricSeries& m = p.metrics[i];
    const MetricSummary& s = m.summary;
    const auto id = static_cast<std::int64_t>(i);
    metric.bind(1, id)
        .bind(2, std::int64_t{m.name})
        .bind(3, std::string_view(model::metric_kind_name(m.kind)))
        .bind(4, std::string_view(m.unit))
        .bind_u64(5, s.count)
        .bind(6, s.sum)
        .bind(7, s.min)
        .bind(8, s.max)
        .bind(9, s.mean)
        .bind(10, s.stddev)
        .bind(11, s.p50)
        .bind(12, s.p90)
        .bind(13, s.p95)
        .bind(14, s.p99)
        .bind_u64(15, s.percentile_points)
        .bind(16, s.last)
        .bind_u64(17, s.points_dropped)
        .run();
    for (const MetricPoint& pt : m.points)
      point.bind(1, id).bind_u64(2, pt.time_ns).bind(3, pt.value).bind(4, std::int64_t{pt.thread}).run();
  }
}

void read_metric_tables(sqlite::Database& db, Profile& p) {
  if (!has_table(db, "metric")) return;  // written before metrics existed
  {
    Statement st(db, "SELECT * FROM metric ORDER BY id", "metric");
    while (st.step()) {
      const sqlite::Row r(st, "metric", p.metrics.size());
      if (r.i64(0) != static_cast<std::int64_t>(p.metrics.size())) r.fail("has another id: metric ids are not dense");
      MetricSeries m;
      m.name = r.u32(1);
      if (m.name >= p.strings.size())
        throw Error(fmt::format("'{}' is damaged: metric {} names a missing string (name_id {}); record the profile "
                                "again",
                                db.path(), r.index(), m.name));
      const std::string kind = r.text(2);
      if (kind == "counter")
        m.kind = MetricKind::Counter;
      else if (kind == "gauge")
        m.kind = MetricKind::Gauge;
      else if (kind == "histogram")
        m.kind = MetricKind::Histogram;
      else
        r.fail(fmt::format("has an unknown kind '{}'", kind));
      m.unit = r.text(3);
      MetricSummary& s = m.summary;
      s.count = r.u64(4);
      s.sum = r.f64(5);
      s.min = r.f64(6);
      s.max = r.f64(7);
      s.mean = r.f64(8);
      s.stddev = r.f64(9);
      s.p50 = r.f64(10);
      s.p90 = r.f64(11);
      s.p95 = r.f64(12);
      s.p99 = r.f64(13);
      s.percentile_points = r.u64(14);
      s.last = r.f64(15);
      s.points_dropped = r.u64(16);
      p.metrics.push_back(std::move(m));
    }
  }
  if (!has_table(db, "metric_point"))
    throw Error(fmt::format("'{}' is damaged: it has a metric table but no metric_point table; record the profile again",
                            db.path()));
  Statement st(db, "SELECT metric_id, ts, value, utid FROM metric_point ORDER BY id", "metric_point");
  std::size_t index = 0;
  while (st.step()) {
    const sqlite::Row r(st, "metric_point", index++);
    const std::uint32_t metric = r.u32(0), utid = r.u32(3);
    if (metric >= p.metrics.size() || utid >= p.threads.size()) r.fail("refers to a missing metric or thread");
    auto& points = p.metrics[metric].points;
    const MetricPoint pt{r.u64(1), r.f64(2), utid};
    if (!points.empty() && pt.time_ns < points.back().time_ns) r.fail("is out of time order");
    points.push_back(pt);
  }
}

}  // namespace nnprof::io
