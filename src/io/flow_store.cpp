#include "io/flow_store.hpp"

#include <string>
#include <string_view>

#include <fmt/format.h>

#include "nnprof/error.hpp"

namespace nnprof::io {

namespace {

using sqlite::Statement;

constexpr const char* kFlowSchema = R"sql(
CREATE TABLE flow(id INTEGER PRIMARY KEY, flow_id INTEGER NOT NULL, kind TEXT NOT NULL,
  slice_out INTEGER, slice_in INTEGER, utid_out INTEGER NOT NULL, ts_out INTEGER NOT NULL, node_out INTEGER NOT NULL,
  utid_in INTEGER NOT NULL, ts_in INTEGER NOT NULL, node_in INTEGER NOT NULL, wait_ts INTEGER);
)sql";

const char* kind_name(FlowKind k) { return k == FlowKind::Handoff ? "handoff" : "completion"; }

using sqlite::has_table;

void bind_optional(Statement& st, int i, std::uint32_t v) {
  if (v == kNone)
    st.bind_null(i);
  else
    st.bind(i, std::int64_t{v});
}

}  // namespace

void write_flow_table(sqlite::Database& db, const Profile& p) {
  db.exec(kFlowSchema);
  Statement st(db, "INSERT INTO flow VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)");
  std::int64_t id = 0;
  for (const Flow& f : p.flows) {
    st.bind(1, id++).bind_u64(2, f.id).bind(3, std::string_view(kind_name(f.kind)));
    bind_optional(st, 4, f.out.span);
    bind_optional(st, 5, f.in.span);
    st.bind(6, std::int64_t{f.out.thread}).bind_u64(7, f.out.time_ns).bind(8, std::int64_t{f.out.node});
    st.bind(9, std::int64_t{f.in.thread}).bind_u64(10, f.in.time_ns).bind(11, std::int64_t{f.in.node});
    if (f.wait_begin_ns == Flow::kNoWaitMarked)
      st.bind_null(12);
    else
      st.bind_u64(12, f.wait_begin_ns);
    st.run();
  }
}

void read_flow_table(sqlite::Database& db, Profile& p, const SliceThreads& slices) {
  if (!has_table(db, "flow")) return;
  Statement st(db,
               "SELECT flow_id, kind, slice_out, slice_in, utid_out, ts_out, node_out, utid_in, ts_in, node_in, "
               "wait_ts FROM flow ORDER BY id",
               "flow");
  while (st.step()) {
    const sqlite::Row r(st, "flow", p.flows.size());
    Flow f;
    f.id = r.u64(0);
    const std::string kind = r.text(1);
    if (kind == "handoff")
      f.kind = FlowKind::Handoff;
    else if (kind == "completion")
      f.kind = FlowKind::Completion;
    else
      r.fail(fmt::format("has the unknown kind '{}'", kind));
    f.out = FlowEndpoint{r.u32(4), r.u64(5), r.u32(6), r.optional_u32(2)};
    f.in = FlowEndpoint{r.u32(7), r.u64(8), r.u32(9), r.optional_u32(3)};
    f.wait_begin_ns = r.is_null(10) ? Flow::kNoWaitMarked : r.u64(10);
    for (const FlowEndpoint* e : {&f.out, &f.in}) {
      if (e->thread >= p.threads.size()) r.fail("refers to a missing thread");
      if (e->node >= p.call_tree.size()) r.fail("refers to a missing call-tree node");
      if (e->span != kNone && slices.thread_of(e->span) != e->thread)
        r.fail("refers to a missing slice, or to one on another thread");
    }
    p.flows.push_back(f);
  }
}

}  // namespace nnprof::io
