#include "io/rank_store.hpp"

#include <cmath>
#include <string>
#include <string_view>

#include <fmt/format.h>

#include "nnprof/error.hpp"

namespace nnprof::io {

namespace {

using sqlite::Statement;

constexpr const char* kRankSchema = R"sql(
CREATE TABLE rank(id INTEGER PRIMARY KEY, rank INTEGER NOT NULL, world_size INTEGER NOT NULL,
  local_rank INTEGER NOT NULL, launcher TEXT NOT NULL, hostname TEXT NOT NULL, pid INTEGER NOT NULL,
  clock_aligned INTEGER NOT NULL, clock_method TEXT NOT NULL, clock_reference_ns INTEGER NOT NULL,
  clock_offset_ns REAL NOT NULL, clock_drift_ppb REAL NOT NULL, clock_residual_ns REAL NOT NULL,
  clock_exchanges INTEGER NOT NULL);
CREATE TABLE thread_rank(utid INTEGER PRIMARY KEY, rank_id INTEGER NOT NULL);
)sql";

}  // namespace

void write_rank_tables(sqlite::Database& db, const Profile& p) {
  db.exec(kRankSchema);
  {
    Statement st(db, "INSERT INTO rank VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)");
    std::int64_t id = 0;
    for (const RankInfo& r : p.ranks) {
      const ClockAlignment& c = r.clock;
      // SQLite stores NaN as NULL, which the NOT NULL columns refuse: say which number it was.
      for (const double v : {c.offset_ns, c.drift_ppb, c.residual_ns})
        if (!std::isfinite(v))
          throw Error(fmt::format("rank {}'s clock alignment holds a number that is not finite; it cannot be saved",
                                  r.rank));
      st.bind(1, id++).bind(2, std::int64_t{r.rank}).bind(3, std::int64_t{r.world_size}).bind(4, std::int64_t{r.local_rank});
      st.bind(5, std::string_view(r.launcher)).bind(6, std::string_view(r.hostname)).bind(7, r.pid);
      st.bind(8, std::int64_t{c.aligned ? 1 : 0}).bind(9, std::string_view(c.method)).bind(10, c.reference_ns);
      st.bind(11, c.offset_ns).bind(12, c.drift_ppb).bind(13, c.residual_ns).bind(14, std::int64_t{c.exchanges});
      st.run();
    }
  }
  if (p.ranks.empty()) {
    for (const ThreadInfo& t : p.threads)
      if (t.rank != 0)
        throw Error(fmt::format("thread {} names rank index {}, but the profile has no ranks; it cannot be saved", t.id,
                                t.rank));
    return;
  }
  Statement st(db, "INSERT INTO thread_rank VALUES (?, ?)");
  for (const ThreadInfo& t : p.threads) {
    if (t.rank >= p.ranks.size())
      throw Error(fmt::format("thread {} names rank index {}, but the profile has {} ranks; it cannot be saved", t.id,
                              t.rank, p.ranks.size()));
    st.bind(1, std::int64_t{t.id}).bind(2, std::int64_t{t.rank}).run();
  }
}

void read_rank_tables(sqlite::Database& db, Profile& p) {
  if (!sqlite::has_table(db, "rank")) return;  // before format 11
  {
    Statement st(db,
                 "SELECT rank, world_size, local_rank, launcher, hostname, pid, clock_aligned, clock_method, "
                 "clock_reference_ns, clock_offset_ns, clock_drift_ppb, clock_residual_ns, clock_exchanges "
                 "FROM rank ORDER BY id",
                 "rank");
    while (st.step()) {
      const sqlite::Row r(st, "rank", p.ranks.size());
      RankInfo info;
      info.rank = r.i32(0);
      info.world_size = r.i32(1);
      info.local_rank = r.i32(2);
      info.launcher = r.text(3);
      info.hostname = r.text(4);
      info.pid = r.i64(5);
      info.clock.aligned = r.flag(6);
      info.clock.method = r.text(7);
      info.clock.reference_ns = r.i64(8);
      info.clock.offset_ns = r.f64(9);
      info.clock.drift_ppb = r.f64(10);
      info.clock.residual_ns = r.f64(11);
      info.clock.exchanges = r.u32(12);
      if (info.rank < 0 || info.world_size < 1 || info.rank >= info.world_size)
        r.fail(fmt::format("has rank {} of world size {}, which is not a rank of that job", info.rank, info.world_size));
      if (info.local_rank < -1) r.fail(fmt::format("has local_rank {} (-1 means not given)", info.local_rank));
      if (info.clock.residual_ns < 0) r.fail("has a negative clock_residual_ns");
      p.ranks.push_back(std::move(info));
    }
  }
  Statement st(db, "SELECT utid, rank_id FROM thread_rank ORDER BY utid", "thread_rank");
  std::size_t row = 0;
  while (st.step()) {
    const sqlite::Row r(st, "thread_rank", row++);
    const std::uint32_t thread = r.u32(0);
    const std::uint32_t rank = r.u32(1);
    if (thread >= p.threads.size()) r.fail("refers to a missing thread");
    if (rank >= p.ranks.size()) r.fail("refers to a missing rank");
    p.threads[thread].rank = rank;
  }
}

}  // namespace nnprof::io
