// Argument sets (format versions 8 and 9): spans with identical arguments share one set of args
// rows, slice_data.arg_set_id names it (NULL: none), and loading gives every span its own
// arguments back exactly; an integer key whose values are nearly all distinct (PyTorch's
// `seq`) is left open in the sets and stored per slice (slice_data.arg_int, version 9).
// Version-7 and version-8 files still load; damaged set ids are named on load. The streaming
// reader of `nnprof merge` (io::load_without_spans + io::SpanReader) gives back exactly what a
// whole load gives, and rejects the same damage.
#include <gtest/gtest.h>
#include <sqlite3.h>

#include <cmath>
#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "io/profile_store.hpp"
#include "nnprof/nnprof.hpp"
#include "test_directory.hpp"

namespace {

using nnprof::Profile;
using nnprof::SpanArg;

class ArgSets : public nnprof::testing::TestDirectory {
 protected:
  ArgSets() : TestDirectory("arg_sets") {}

  void run_sql(const std::string& file, const std::string& sql) {
    sqlite3* db = nullptr;
    ASSERT_EQ(sqlite3_open(file.c_str(), &db), SQLITE_OK);
    char* error = nullptr;
    const int rc = sqlite3_exec(db, sql.c_str(), nullptr, nullptr, &error);
    const std::string message = error != nullptr ? error : "";
    sqlite3_free(error);
    sqlite3_close(db);
    ASSERT_EQ(rc, SQLITE_OK) << message;
  }

  std::string single_value(const std::string& file, const std::string& sql) {
    const nnprof::QueryResult r = nnprof::query_profile(file, sql);
    EXPECT_EQ(r.rows.size(), 1u) << sql;
    return r.rows.empty() ? std::string() : r.rows[0].at(0);
  }

  // The message of the error that loading `file` throws ("" if it loads).
  static std::string load_error(const std::string& file) {
    try {
      (void)Profile::load(file);
    } catch (const nnprof::Error& e) {
      return e.what();
    }
    return "";
  }
};

// 100 matmuls with the same three arguments, 40 relus with the same one, a step around each
// iteration with none.
Profile operator_calls() {
  nnprof::Profiler p;
  for (int i = 0; i < 20; ++i) {
    nnprof::ProfileGuard step(p, "step");
    for (int j = 0; j < 5; ++j) {
      {
        nnprof::ProfileGuard g(p, "matmul");
        g.arg("input_shapes", "[[64, 512], [512, 512]]");
        g.arg("flops", 33554432.0);
        g.arg("bytes", std::int64_t{1179648});
      }
      if (j % 5 < 2) {
        nnprof::ProfileGuard g(p, "relu");
        g.arg("input_shapes", "[[64, 512]]");
      }
    }
  }
  return p.snapshot();
}

TEST_F(ArgSets, IdenticalSetsAreStoredOnceAndEverySliceGetsItsOwnBack) {
  const Profile p = operator_calls();
  ASSERT_EQ(p.span_args.size(), 100u * 3 + 40u);
  p.save(path("run.nnprof"));
  const std::string f = path("run.nnprof");
  EXPECT_EQ(single_value(f, "select count(*) from args"), "4") << "matmul's three rows and relu's one";
  EXPECT_EQ(single_value(f, "select count(distinct arg_set_id) from slice"), "2");
  EXPECT_EQ(single_value(f, "select count(*) from slice where arg_set_id is not null"), "140");
  EXPECT_EQ(single_value(f, "select count(*) from slice where name = 'step' and arg_set_id is null"), "20");
  // The query of docs/FORMAT.md: one row per argument of every slice, as before sets were shared.
  const nnprof::QueryResult joined = nnprof::query_profile(
      f, "select s.name, a.key, a.display_value from slice s join args a using (arg_set_id) order by s.id, a.id");
  ASSERT_EQ(joined.rows.size(), p.span_args.size());
  EXPECT_EQ(joined.rows[0], (std::vector<std::string>{"matmul", "input_shapes", "[[64, 512], [512, 512]]"}));
  EXPECT_EQ(joined.rows[2], (std::vector<std::string>{"matmul", "bytes", "1179648"}));

  const Profile back = Profile::load(f);
  EXPECT_EQ(back.span_args, p.span_args);
  EXPECT_TRUE(back == p);
}

// Sets that are alike but not the same each get rows of their own, and each span gets its
// own set back.
TEST_F(ArgSets, SetsThatDifferInAnyWayAreKeptApart) {
  nnprof::Profiler profiler;
  const auto call = [&](const char* name, auto attach) {
    nnprof::ProfileGuard g(profiler, name);
    attach(g);
  };
  const double one = 1.0;
  call("a", [](auto& g) { g.arg("k", std::int64_t{1}); });
  call("a", [](auto& g) { g.arg("k", std::int64_t{1}); });  // the same as the first: shared
  call("b", [](auto& g) {  // the first set is a prefix of this one
    g.arg("k", std::int64_t{1});
    g.arg("j", std::int64_t{2});
  });
  call("b", [](auto& g) {  // the same arguments in another order
    g.arg("j", std::int64_t{2});
    g.arg("k", std::int64_t{1});
  });
  call("c", [&](auto& g) { g.arg("k", one); });       // the same key and number, another type
  call("c", [](auto& g) { g.arg("k", "1"); });        // and a third type
  call("c", [&](auto& g) { g.arg("k", std::nextafter(one, 2.0)); });  // a real one ulp away
  call("c", [](auto& g) { g.arg("other", std::int64_t{1}); });        // another key, the same value
  call("d", [](auto& g) { g.arg("k", std::int64_t{1}); });            // another name, the first set: shared
  call("d", [](auto& g) { g.arg("k", std::string("1\0x", 3)); });     // a string that differs past a NUL
  call("d", [](auto& g) { g.arg("k", std::string("1\0y", 3)); });
  const Profile p = profiler.snapshot();
  ASSERT_EQ(p.spans.size(), 11u);
  p.save(path("run.nnprof"));
  const std::string f = path("run.nnprof");
  EXPECT_EQ(single_value(f, "select count(distinct arg_set_id) from slice"), "9");
  EXPECT_EQ(single_value(f, "select count(*) from args"), "11");
  EXPECT_EQ(single_value(f, "select count(*) from slice where name = 'a' group by arg_set_id"), "2");
  EXPECT_EQ(single_value(f,
                         "select count(*) from slice s join slice t on s.arg_set_id = t.arg_set_id "
                         "where s.name = 'a' and t.name = 'd'"),
            "2");
  const Profile back = Profile::load(f);
  EXPECT_EQ(back.span_args, p.span_args);
  EXPECT_TRUE(back == p);
}

// SQLite stores a NaN as NULL: such an argument loads as NaN again (the file stays
// loadable), and two spans with it still share their set.
TEST_F(ArgSets, ANanArgumentIsSharedAndLoadsAsNan) {
  nnprof::Profiler profiler;
  for (int i = 0; i < 2; ++i) {
    nnprof::ProfileGuard g(profiler, "loss");
    g.arg("value", std::numeric_limits<double>::quiet_NaN());
  }
  const Profile p = profiler.snapshot();
  p.save(path("run.nnprof"));
  EXPECT_EQ(single_value(path("run.nnprof"), "select count(*) from args where real_value is null"), "1");
  const Profile back = Profile::load(path("run.nnprof"));
  ASSERT_EQ(back.span_args.size(), 2u);
  for (const SpanArg& a : back.span_args) {
    EXPECT_EQ(a.type, SpanArg::Type::Real);
    EXPECT_TRUE(std::isnan(a.real_value));
  }
}

TEST_F(ArgSets, AProfileWithoutArgumentsHasNoSets) {
  nnprof::Profiler profiler;
  { nnprof::ProfileGuard g(profiler, "plain"); }
  const Profile p = profiler.snapshot();
  p.save(path("run.nnprof"));
  EXPECT_EQ(single_value(path("run.nnprof"), "select count(*) from args"), "0");
  EXPECT_EQ(single_value(path("run.nnprof"), "select count(*) from slice where arg_set_id is null"), "1");
  EXPECT_TRUE(Profile::load(path("run.nnprof")) == p);
}

// Spans whose arguments are not in span order cannot be grouped into sets: saving says so
// rather than writing a file that gives other arguments back.
TEST_F(ArgSets, ArgumentsOutOfSpanOrderAreNotSaved) {
  Profile p = operator_calls();
  std::swap(p.span_args.front(), p.span_args.back());
  try {
    p.save(path("run.nnprof"));
    FAIL() << "saved";
  } catch (const nnprof::Error& e) {
    EXPECT_NE(std::string(e.what()).find("out of span order"), std::string::npos) << e.what();
  }
}

// The same file as version 7 wrote it: one args row per argument, in slice order, with the
// slice's id as arg_set_id, and no slice_data.arg_set_id.
constexpr const char* kToVersion7 = R"sql(
CREATE TABLE args_v7(id INTEGER PRIMARY KEY, arg_set_id INTEGER NOT NULL, key TEXT NOT NULL, value_type TEXT NOT NULL,
  int_value INTEGER, string_value TEXT, real_value REAL, display_value TEXT NOT NULL);
INSERT INTO args_v7
  SELECT row_number() OVER (ORDER BY d.id, a.id) - 1, d.id, a.key, a.value_type, a.int_value, a.string_value,
         a.real_value, a.display_value
  FROM slice_data d JOIN args a ON a.arg_set_id = d.arg_set_id ORDER BY d.id, a.id;
DROP VIEW slice;
DROP TABLE args;
ALTER TABLE args_v7 RENAME TO args;
ALTER TABLE slice_data DROP COLUMN arg_set_id;
ALTER TABLE slice_data DROP COLUMN arg_int;
CREATE VIEW slice AS
  SELECT d.id AS id, d.ts AS ts, d.dur AS dur, d.utid AS utid, s.str AS name, t.depth AS depth,
         d.node_id AS node_id, t.name_id AS name_id, d.id AS arg_set_id
  FROM slice_data d JOIN scope_tree t ON t.id = d.node_id JOIN strings s ON s.id = t.name_id;
UPDATE meta SET value = 7 WHERE key = 'schema_version';
PRAGMA user_version = 7;
)sql";

TEST_F(ArgSets, Version7FilesStillLoad) {
  const Profile p = operator_calls();
  p.save(path("v7.nnprof"));
  run_sql(path("v7.nnprof"), kToVersion7);
  EXPECT_EQ(single_value(path("v7.nnprof"), "select count(*) from args"), std::to_string(p.span_args.size()));
  const Profile back = Profile::load(path("v7.nnprof"));
  EXPECT_EQ(back.span_args, p.span_args);
  EXPECT_TRUE(back == p);
}

TEST_F(ArgSets, Version7ArgumentOfAMissingSliceIsStillRejected) {
  operator_calls().save(path("v7.nnprof"));
  run_sql(path("v7.nnprof"), std::string(kToVersion7) + "UPDATE args SET arg_set_id = 999999 WHERE id = 0;");
  EXPECT_NE(load_error(path("v7.nnprof")).find("args row 0 refers to the missing slice 999999"), std::string::npos)
      << load_error(path("v7.nnprof"));
}

TEST_F(ArgSets, ASliceOfAMissingSetIsRejected) {
  operator_calls().save(path("run.nnprof"));
  run_sql(path("run.nnprof"), "UPDATE slice_data SET arg_set_id = 7 WHERE id = (SELECT min(id) FROM slice_data "
                              "WHERE arg_set_id IS NOT NULL)");
  const std::string error = load_error(path("run.nnprof"));
  EXPECT_NE(error.find("is damaged"), std::string::npos) << error;
  EXPECT_NE(error.find("refers to the missing argument set 7 (args has 2 sets)"), std::string::npos) << error;
}

TEST_F(ArgSets, ASetNoSliceHasIsRejected) {
  operator_calls().save(path("run.nnprof"));
  run_sql(path("run.nnprof"), "UPDATE slice_data SET arg_set_id = 0 WHERE arg_set_id = 1");
  const std::string error = load_error(path("run.nnprof"));
  EXPECT_NE(error.find("argument set 1 in args belongs to no slice"), std::string::npos) << error;
}

TEST_F(ArgSets, SetRowsOutOfTurnAreRejected) {
  operator_calls().save(path("run.nnprof"));
  run_sql(path("run.nnprof"), "UPDATE args SET arg_set_id = 1 WHERE id = 1");  // inside set 0's rows
  const std::string error = load_error(path("run.nnprof"));
  EXPECT_NE(error.find("args row 2 has arg_set_id 0 where 1 or 2 was expected"), std::string::npos) << error;
}

TEST_F(ArgSets, ANegativeOrNonIntegerSetIdIsRejected) {
  operator_calls().save(path("run.nnprof"));
  run_sql(path("run.nnprof"), "UPDATE slice_data SET arg_set_id = -1 WHERE id = (SELECT min(id) FROM slice_data "
                              "WHERE arg_set_id IS NOT NULL)");
  EXPECT_NE(load_error(path("run.nnprof")).find("has arg_set_id = -1, out of range"), std::string::npos)
      << load_error(path("run.nnprof"));
  operator_calls().save(path("text.nnprof"));
  run_sql(path("text.nnprof"), "UPDATE slice_data SET arg_set_id = 'one' WHERE arg_set_id = 0");
  const std::string text_error = load_error(path("text.nnprof"));
  EXPECT_NE(text_error.find("slice_data row"), std::string::npos) << text_error;
}


// 300 operator calls with the same shapes and FLOPs, each with its own sequence number, as a
// training step's forward operators have; a few user scopes with a small integer argument.
Profile sequenced_calls() {
  nnprof::Profiler p;
  for (int i = 0; i < 300; ++i) {
    nnprof::ProfileGuard g(p, "aten::addmm");
    g.arg("op_scope", "function");
    g.arg("input_shapes", "[[64], [8, 32], [32, 64]]");
    g.arg("seq", std::int64_t{1000 + i});
    g.arg("flops", 32768.0);
    if (i % 100 == 0) {
      nnprof::ProfileGuard step(p, "step");
      step.arg("epoch", std::int64_t{i / 100});
    }
  }
  return p.snapshot();
}

TEST_F(ArgSets, ADistinctIntegerPerCallIsStoredPerSliceAndTheRestOnce) {
  const Profile p = sequenced_calls();
  const std::string f = path("seq.nnprof");
  p.save(f);
  // One set for the 300 calls (its seq row open), three for the steps (epoch stays in the set).
  EXPECT_EQ(single_value(f, "select count(distinct arg_set_id) from slice_data"), "4");
  EXPECT_EQ(single_value(f, "select count(*) from args where value_type = 'slice_int'"), "1");
  EXPECT_EQ(single_value(f, "select key from args where value_type = 'slice_int'"), "seq");
  EXPECT_EQ(single_value(f, "select count(*) from slice_data where arg_int is not null"), "300");
  EXPECT_EQ(single_value(f, "select min(arg_int) || '-' || max(arg_int) from slice_data"), "1000-1299");
  const Profile back = Profile::load(f);
  EXPECT_EQ(back.span_args, p.span_args) << "every call gets its own seq back, in its place among its arguments";
  EXPECT_TRUE(back == p);
}

TEST_F(ArgSets, Version8FilesStillLoad) {
  const Profile p = operator_calls();
  const std::string f = path("v8.nnprof");
  p.save(f);
  run_sql(f, R"sql(
DROP VIEW slice;
ALTER TABLE slice_data DROP COLUMN arg_int;
CREATE VIEW slice AS
  SELECT d.id AS id, d.ts AS ts, d.dur AS dur, d.utid AS utid, s.str AS name, t.depth AS depth,
         d.node_id AS node_id, t.name_id AS name_id, d.arg_set_id AS arg_set_id
  FROM slice_data d JOIN scope_tree t ON t.id = d.node_id JOIN strings s ON s.id = t.name_id;
UPDATE meta SET value = 8 WHERE key = 'schema_version';
PRAGMA user_version = 8;)sql");
  EXPECT_TRUE(Profile::load(f) == p);
}

TEST_F(ArgSets, AnOpenIntegerWithoutItsSliceValueOrAValueWithoutAnOpenIntegerIsRejected) {
  const std::string missing = path("missing.nnprof");
  sequenced_calls().save(missing);
  run_sql(missing, "UPDATE slice_data SET arg_int = NULL WHERE id = (SELECT min(id) FROM slice_data "
                   "WHERE arg_int IS NOT NULL)");
  EXPECT_NE(load_error(missing).find("has no arg_int for the open integer 'seq'"), std::string::npos)
      << load_error(missing);
  const std::string stray = path("stray.nnprof");
  sequenced_calls().save(stray);
  run_sql(stray, "UPDATE slice_data SET arg_int = 5 WHERE arg_int IS NULL AND arg_set_id IS NOT NULL");
  EXPECT_NE(load_error(stray).find("leaves no integer open"), std::string::npos) << load_error(stray);
  const std::string second = path("second.nnprof");
  sequenced_calls().save(second);
  run_sql(second, "UPDATE args SET value_type = 'slice_int' WHERE key = 'flops'");
  EXPECT_NE(load_error(second).find("a set leaves one integer open"), std::string::npos) << load_error(second);
}

// Everything but the spans, then the spans one at a time: equal to the whole load.
Profile load_streamed(const std::string& file) {
  std::uint64_t slices = 0;
  Profile p = nnprof::io::load_without_spans(file, slices);
  EXPECT_TRUE(p.spans.empty());
  EXPECT_TRUE(p.span_args.empty());
  nnprof::io::SpanReader reader(file, p);
  nnprof::Span span;
  std::vector<SpanArg> args;
  while (reader.next(span, args)) {
    p.spans.push_back(span);
    p.span_args.insert(p.span_args.end(), args.begin(), args.end());
  }
  EXPECT_EQ(p.spans.size(), slices);
  EXPECT_FALSE(reader.next(span, args)) << "the end stays the end";
  return p;
}

// The message of the error that streaming `file` throws ("" if it streams).
std::string stream_error(const std::string& file) {
  try {
    (void)load_streamed(file);
  } catch (const nnprof::Error& e) {
    return e.what();
  }
  return "";
}

TEST_F(ArgSets, StreamingTheSpansGivesWhatAWholeLoadGives) {
  for (const Profile& p : {operator_calls(), sequenced_calls()}) {
    const std::string f = path("stream.nnprof");
    p.save(f);
    const Profile whole = Profile::load(f);
    const Profile streamed = load_streamed(f);
    EXPECT_EQ(streamed.spans, whole.spans);
    EXPECT_EQ(streamed.span_args, whole.span_args);
    EXPECT_TRUE(streamed == whole);
  }
}

TEST_F(ArgSets, StreamingRejectsWhatAWholeLoadRejects) {
  const std::string missing = path("missing.nnprof");
  operator_calls().save(missing);
  run_sql(missing, "UPDATE slice_data SET arg_set_id = 7 WHERE id = (SELECT min(id) FROM slice_data "
                   "WHERE arg_set_id IS NOT NULL)");
  EXPECT_NE(stream_error(missing).find("refers to the missing argument set 7 (args has 2 sets)"), std::string::npos)
      << stream_error(missing);
  const std::string unused = path("unused.nnprof");
  operator_calls().save(unused);
  run_sql(unused, "UPDATE slice_data SET arg_set_id = 0 WHERE arg_set_id = 1");
  EXPECT_NE(stream_error(unused).find("argument set 1 in args belongs to no slice"), std::string::npos)
      << stream_error(unused);
  const std::string thread = path("thread.nnprof");
  operator_calls().save(thread);
  run_sql(thread, "UPDATE slice_data SET utid = 9 WHERE id = 3");
  EXPECT_NE(stream_error(thread).find("slice 3 refers to the missing thread 9"), std::string::npos)
      << stream_error(thread);
  EXPECT_EQ(stream_error(thread), load_error(thread));
}

}  // namespace
