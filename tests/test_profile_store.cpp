#include <gtest/gtest.h>

#include <sqlite3.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <map>
#include <stdexcept>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "nnprof/nnprof.hpp"
#include "test_directory.hpp"
#include "sample_profiles.hpp"

namespace fs = std::filesystem;

namespace {

class ProfileStore : public nnprof::testing::TestDirectory {
 protected:
  ProfileStore() : TestDirectory("store") {}

  static std::string load_error(const std::string& p) {
    try {
      (void)nnprof::Profile::load(p);
    } catch (const nnprof::Error& e) {
      return e.what();
    }
    return "no error";
  }
};

TEST_F(ProfileStore, RichProfileRoundTripsExactly) {
  const nnprof::Profile original = nnprof::testing::rich_profile();
  original.save(path("rich.nnprof"));
  const nnprof::Profile loaded = nnprof::Profile::load(path("rich.nnprof"));
  EXPECT_EQ(loaded.meta, original.meta);
  EXPECT_EQ(loaded.strings, original.strings);
  EXPECT_EQ(loaded.threads, original.threads);
  EXPECT_EQ(loaded.call_tree, original.call_tree);
  EXPECT_EQ(loaded.scopes, original.scopes);
  EXPECT_EQ(loaded.spans, original.spans);
  EXPECT_EQ(loaded.memory_counters, original.memory_counters);
  EXPECT_EQ(loaded.memory_events, original.memory_events);
  EXPECT_EQ(loaded.memory, original.memory);
  EXPECT_EQ(loaded.completeness, original.completeness);
  EXPECT_EQ(loaded.diagnostics, original.diagnostics);
  EXPECT_EQ(loaded.annotations, original.annotations);
  EXPECT_TRUE(loaded == original);
  for (const auto& entry : fs::directory_iterator(fs::path(path("rich.nnprof")).parent_path()))
    EXPECT_EQ(entry.path().filename().string().find(".tmp-"), std::string::npos) << "temporary file left: " << entry.path();
}

TEST_F(ProfileStore, HeapProfileRoundTripsExactly) {
  const nnprof::Profile original = nnprof::testing::heap_profile();
  original.save(path("heap.nnprof"));
  const nnprof::Profile loaded = nnprof::Profile::load(path("heap.nnprof"));
  EXPECT_EQ(loaded.call_tree, original.call_tree);
  EXPECT_EQ(loaded.scopes, original.scopes);
  EXPECT_EQ(loaded.heap, original.heap);
  EXPECT_EQ(loaded.heap_samples, original.heap_samples);
  EXPECT_EQ(loaded.leaks, original.leaks);
  EXPECT_EQ(loaded.frames, original.frames);
  EXPECT_EQ(loaded.stacks, original.stacks);
  EXPECT_EQ(loaded.diagnostics, original.diagnostics);
  EXPECT_TRUE(loaded == original);
}

TEST_F(ProfileStore, HeapExtremesRoundTripExactly) {
  nnprof::Profile original = nnprof::testing::heap_profile();
  // Values a double cannot hold, an unknown peak thread, an empty stack, a frame with no
  // symbol at all, a leak outside any scope without caller or stack, and memory counters
  // next to the heap tracks.
  original.heap_samples[0].heap_bytes = ~std::uint64_t{0};
  original.heap_samples[1].rss_bytes = (std::uint64_t{1} << 53) + 1;
  original.heap_samples[2].rss_peak_bytes = 0;
  original.heap.peak_thread = nnprof::kNone;
  original.heap.peak_node = 0;
  original.heap.source = "preload";
  original.heap.reachability_checked = false;
  original.call_tree[3].heap.peak_live_bytes = ~std::uint64_t{0} - 1;
  original.frames.push_back(nnprof::StackFrame{~std::uint64_t{0}, nnprof::kNone, nnprof::kNone, 0, nnprof::kNone});
  original.stacks.push_back(nnprof::CallStack{});
  original.stacks.push_back(nnprof::CallStack{{8, 8, 8}});  // recursion: the same frame thrice
  original.leaks.push_back(nnprof::LeakSite{0, nnprof::kNone, nnprof::kNone, false, 1, 1});
  original.leaks.push_back(nnprof::LeakSite{0, nnprof::kNone, 3, true, 0, 0});
  original.memory_counters.push_back(nnprof::MemoryCounter{0, 5, 5, 5, 0, 1, 0, 5});
  original.memory_events.push_back(nnprof::MemoryEvent{7, 1, 0, 5});
  original.save(path("extremes.nnprof"));
  const nnprof::Profile loaded = nnprof::Profile::load(path("extremes.nnprof"));
  EXPECT_EQ(loaded.heap, original.heap);
  EXPECT_EQ(loaded.heap_samples, original.heap_samples);
  EXPECT_EQ(loaded.frames, original.frames);
  EXPECT_EQ(loaded.stacks, original.stacks);
  EXPECT_EQ(loaded.leaks, original.leaks);
  EXPECT_EQ(loaded.memory_events, original.memory_events);
  EXPECT_TRUE(loaded == original);
}

TEST_F(ProfileStore, HeapTablesAreQueryableWithSql) {
  nnprof::testing::heap_profile().save(path("h.nnprof"));
  const auto tracks =
      nnprof::query_profile(path("h.nnprof"), "SELECT id, name, unit, kind FROM counter_track ORDER BY id");
  ASSERT_EQ(tracks.rows.size(), 3u);
  EXPECT_EQ(tracks.rows[0], (std::vector<std::string>{"0", "heap in use", "bytes", "heap"}));
  EXPECT_EQ(tracks.rows[1], (std::vector<std::string>{"1", "RSS", "bytes", "rss"}));
  EXPECT_EQ(tracks.rows[2], (std::vector<std::string>{"2", "RSS peak (VmHWM)", "bytes", "rss_peak"}));
  const auto last = nnprof::query_profile(
      path("h.nnprof"), "SELECT ts, value, utid FROM counter WHERE track_id = 0 ORDER BY ts DESC LIMIT 1");
  EXPECT_EQ(last.rows.at(0), (std::vector<std::string>{"980000000", "17829888.0", "NULL"}));
  // Stacks {0, 4, 5} and {4, 5} share the callsites of main and Optimizer::step.
  EXPECT_EQ(nnprof::query_profile(path("h.nnprof"), "SELECT count(*) FROM callsite").rows.at(0).at(0), "6");
  const auto leaks = nnprof::query_profile(
      path("h.nnprof"),
      "SELECT s.str, f.line, l.reachable, l.blocks, l.bytes FROM leak_site l JOIN frame f ON f.id = l.caller_frame_id "
      "JOIN strings s ON s.id = f.function_id ORDER BY l.id");
  ASSERT_EQ(leaks.rows.size(), 4u);
  EXPECT_EQ(leaks.rows[0], (std::vector<std::string>{"History::append(Tensor const&)", "42", "0", "10", "10485760"}));
  EXPECT_EQ(leaks.rows[3], (std::vector<std::string>{"Reader<Header>::parse(std::istream&)", "88", "0", "3", "3072"}));
  const auto top = nnprof::query_profile(
      path("h.nnprof"),
      "SELECT s.str, heap_alloc_bytes, heap_retained_bytes FROM scope_stats JOIN strings s ON s.id = name_id "
      "ORDER BY heap_alloc_bytes DESC LIMIT 1");
  EXPECT_EQ(top.rows.at(0), (std::vector<std::string>{"load_batch", "83889152", "8391680"}));
  const auto meta = nnprof::query_profile(
      path("h.nnprof"), "SELECT key, value FROM meta WHERE key IN ('heap_tracked', 'heap_peak_bytes', "
                        "'heap_peak_utid', 'rss_peak_bytes') ORDER BY key");
  EXPECT_EQ(meta.rows, (std::vector<std::vector<std::string>>{{"heap_peak_bytes", "23072768"},
                                                               {"heap_peak_utid", "0"},
                                                               {"heap_tracked", "1"},
                                                               {"rss_peak_bytes", "61865984"}}));
}

// A file as version 1 wrote it: the same tables without what version 2 added.
TEST_F(ProfileStore, Version1FilesStillLoad) {
  const nnprof::Profile original = nnprof::testing::rich_profile();
  original.save(path("v1.nnprof"));
  sqlite3* db = nullptr;
  ASSERT_EQ(sqlite3_open(path("v1.nnprof").c_str(), &db), SQLITE_OK);
  std::string sql = "DROP TABLE frame; DROP TABLE callsite; DROP TABLE stack; DROP TABLE leak_site; DROP TABLE annotation;"
                    "ALTER TABLE counter_track DROP COLUMN kind;"
                    "DELETE FROM meta WHERE key LIKE 'heap%' OR key LIKE 'rss%';"
                    "UPDATE meta SET value = 1 WHERE key = 'schema_version'; PRAGMA user_version = 1;";
  for (const char* column : {"heap_alloc_bytes", "heap_alloc_count", "heap_free_bytes", "heap_free_count",
                             "heap_retained_bytes", "heap_retained_blocks", "heap_peak_live_bytes"}) {
    sql += std::string("ALTER TABLE scope_tree DROP COLUMN ") + column + ";";
    sql += std::string("ALTER TABLE scope_stats DROP COLUMN ") + column + ";";
  }
  char* error = nullptr;
  ASSERT_EQ(sqlite3_exec(db, sql.c_str(), nullptr, nullptr, &error), SQLITE_OK) << (error ? error : "");
  sqlite3_close(db);
  const nnprof::Profile loaded = nnprof::Profile::load(path("v1.nnprof"));
  EXPECT_FALSE(loaded.heap.tracked);
  EXPECT_EQ(loaded.heap, nnprof::HeapSummary{});
  EXPECT_TRUE(loaded.heap_samples.empty() && loaded.leaks.empty() && loaded.frames.empty() && loaded.stacks.empty());
  EXPECT_TRUE(loaded.annotations.empty()) << "annotations came with version 5";
  nnprof::Profile expected = original;
  expected.annotations.clear();
  for (nnprof::MemoryCounter& c : expected.memory_counters) c.largest_alloc_bytes = 0;  // recorded since version 7
  EXPECT_TRUE(loaded == expected);
}

// A file as version 4 wrote it: no annotation table. It loads, with no annotations.
TEST_F(ProfileStore, Version4FilesLoadWithoutAnnotations) {
  const nnprof::Profile original = nnprof::testing::rich_profile();
  ASSERT_FALSE(original.annotations.empty());
  original.save(path("v4.nnprof"));
  sqlite3* db = nullptr;
  ASSERT_EQ(sqlite3_open(path("v4.nnprof").c_str(), &db), SQLITE_OK);
  const char* sql = "DROP TABLE annotation; UPDATE meta SET value = 4 WHERE key = 'schema_version'; "
                    "PRAGMA user_version = 4;";
  char* error = nullptr;
  ASSERT_EQ(sqlite3_exec(db, sql, nullptr, nullptr, &error), SQLITE_OK) << (error ? error : "");
  sqlite3_close(db);
  const nnprof::Profile loaded = nnprof::Profile::load(path("v4.nnprof"));
  EXPECT_TRUE(loaded.annotations.empty());
  nnprof::Profile expected = original;
  expected.annotations.clear();
  for (nnprof::MemoryCounter& c : expected.memory_counters) c.largest_alloc_bytes = 0;  // recorded since version 7
  EXPECT_TRUE(loaded == expected);
}

TEST_F(ProfileStore, AnnotationsRoundTripAndAreQueryable) {
  const nnprof::Profile original = nnprof::testing::rich_profile();
  original.save(path("a.nnprof"));
  const nnprof::Profile loaded = nnprof::Profile::load(path("a.nnprof"));
  EXPECT_EQ(loaded.annotations, original.annotations);
  const auto r = nnprof::query_profile(path("a.nnprof"), "SELECT key, value FROM annotation ORDER BY key");
  ASSERT_EQ(r.rows.size(), 3u);
  EXPECT_EQ(r.rows[0][0], "git_commit");
  EXPECT_EQ(r.rows[0][1], "8d2e793");
  EXPECT_EQ(r.rows[2][1], "<script>alert(2)</script> & \"quoted\" | pipe");
}

// Profiler::annotate: the last value of a key wins, from any thread; a bad key is refused.
TEST_F(ProfileStore, ProfilerAnnotationsReachTheSavedProfile) {
  nnprof::Profiler profiler;
  profiler.annotate("batch_size", "16");
  profiler.annotate("batch_size", "32");
  profiler.annotate("description", "");
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t)
    threads.emplace_back([&profiler, t] {
      for (int i = 0; i < 100; ++i) profiler.annotate("thread." + std::to_string(t), std::to_string(i));
    });
  for (auto& t : threads) t.join();
  EXPECT_THROW(profiler.annotate("", "x"), std::invalid_argument);
  EXPECT_THROW(profiler.annotate("tab\there", "x"), std::invalid_argument);
  EXPECT_THROW(profiler.annotate("caf\xc3\xa9", "x"), std::invalid_argument);
  { NNPROF_SCOPE_IN(profiler, "work"); }
  profiler.save(path("annotated.nnprof"));
  const nnprof::Profile loaded = nnprof::Profile::load(path("annotated.nnprof"));
  const std::map<std::string, std::string> expected = {{"batch_size", "32"}, {"description", ""},
                                                        {"thread.0", "99"},   {"thread.1", "99"},
                                                        {"thread.2", "99"},   {"thread.3", "99"}};
  EXPECT_EQ(loaded.annotations, expected);
  EXPECT_EQ(profiler.snapshot().annotations, expected);
  try {
    profiler.annotate("bad\nkey", "x");
    FAIL();
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("printable ASCII"), std::string::npos) << e.what();
  }
}

TEST_F(ProfileStore, AProfileWithABadAnnotationKeyIsNotSaved) {
  nnprof::Profile p = nnprof::testing::rich_profile();
  p.annotations["line\nbreak"] = "x";
  EXPECT_THROW(p.save(path("bad_key.nnprof")), nnprof::Error);
  EXPECT_FALSE(fs::exists(path("bad_key.nnprof")));
}

TEST_F(ProfileStore, MalformedAnnotationTablesAreRejectedOnLoad) {
  const std::vector<std::pair<std::string, std::string>> damages = {
      {"DROP TABLE annotation", "no annotation table"},
      {"DROP TABLE annotation; CREATE TABLE annotation(key TEXT, other TEXT)", "no annotation table"},
      {"DROP TABLE annotation; CREATE TABLE annotation(key, value); INSERT INTO annotation VALUES ('a', 1)",
       "not text"},
      {"DROP TABLE annotation; CREATE TABLE annotation(key, value); INSERT INTO annotation VALUES ('a', NULL)",
       "not text"},
      {"INSERT INTO annotation VALUES ('', 'x')", "annotation key is empty"},
      {"INSERT INTO annotation VALUES ('k' || char(1), 'x')", "printable ASCII"},
      {"DROP TABLE annotation; CREATE TABLE annotation(key TEXT, value TEXT);"
       "INSERT INTO annotation VALUES ('a', '1'), ('a', '2')",
       "'a' appears twice"},
  };
  for (const auto& [sql, expected] : damages) {
    nnprof::testing::rich_profile().save(path("bad.nnprof"));
    sqlite3* db = nullptr;
    ASSERT_EQ(sqlite3_open(path("bad.nnprof").c_str(), &db), SQLITE_OK);
    char* error = nullptr;
    ASSERT_EQ(sqlite3_exec(db, sql.c_str(), nullptr, nullptr, &error), SQLITE_OK) << sql << ": " << (error ? error : "");
    sqlite3_close(db);
    const std::string e = load_error(path("bad.nnprof"));
    EXPECT_NE(e.find("damaged"), std::string::npos) << sql << ": " << e;
    EXPECT_NE(e.find(expected), std::string::npos) << sql << ": " << e;
  }
}

TEST_F(ProfileStore, DanglingHeapReferencesAreRejectedOnLoad) {
  const std::vector<std::pair<std::string, std::string>> damages = {
      {"UPDATE leak_site SET caller_frame_id = 99 WHERE id = 0", "leak site 0"},
      {"UPDATE leak_site SET stack_id = 99 WHERE id = 1", "leak site 1"},
      {"UPDATE leak_site SET node_id = 99 WHERE id = 2", "leak site 2"},
      {"UPDATE callsite SET frame_id = 99 WHERE id = 1", "callsite 1"},
      {"UPDATE callsite SET parent_id = 5 WHERE id = 1", "callsite 1"},
      {"UPDATE stack SET callsite_id = 77 WHERE id = 0", "missing callsite"},
      {"UPDATE frame SET function_id = 999 WHERE id = 2", "frame 2"},
      {"UPDATE meta SET value = 9 WHERE key = 'heap_peak_utid'", "heap peak"},
      {"UPDATE meta SET value = 70 WHERE key = 'heap_peak_node_id'", "heap peak"},
      {"DELETE FROM counter WHERE id = 60", "heap timeline"},
      {"UPDATE counter SET ts = 1 WHERE id = 120", "heap timeline"},
  };
  for (const auto& [sql, expected] : damages) {
    nnprof::testing::heap_profile().save(path("bad.nnprof"));
    sqlite3* db = nullptr;
    ASSERT_EQ(sqlite3_open(path("bad.nnprof").c_str(), &db), SQLITE_OK);
    ASSERT_EQ(sqlite3_exec(db, sql.c_str(), nullptr, nullptr, nullptr), SQLITE_OK) << sql;
    sqlite3_close(db);
    const std::string e = load_error(path("bad.nnprof"));
    EXPECT_NE(e.find("damaged"), std::string::npos) << sql << ": " << e;
    EXPECT_NE(e.find(expected), std::string::npos) << sql << ": " << e;
  }
}

TEST_F(ProfileStore, RecordedProfileRoundTripsExactly) {
  nnprof::Profiler profiler;
  std::thread([&] {
    nnprof::set_thread_name("helper");
    NNPROF_SCOPE_IN(profiler, "on_helper");
  }).join();
  for (int i = 0; i < 50; ++i) {
    NNPROF_SCOPE_IN(profiler, "outer");
    { NNPROF_SCOPE_IN(profiler, "inner"); }
    profiler.record_alloc("buffer", 128);
  }
  profiler.add_items("outer", 50);
  profiler.stop("not_started");
  const nnprof::Profile original = profiler.snapshot();
  profiler.save(path("recorded.nnprof"));  // a second snapshot: same data, later duration
  original.save(path("snapshot.nnprof"));
  EXPECT_TRUE(nnprof::Profile::load(path("snapshot.nnprof")) == original);
  const nnprof::Profile via_profiler = nnprof::Profile::load(path("recorded.nnprof"));
  EXPECT_EQ(via_profiler.spans.size(), original.spans.size());
  EXPECT_EQ(via_profiler.find_scope("outer")->items, 50u);
}

TEST_F(ProfileStore, TablesAreQueryableWithSql) {
  nnprof::testing::rich_profile().save(path("q.nnprof"));
  const auto r = nnprof::query_profile(path("q.nnprof"), "SELECT name, count(*), sum(dur) FROM slice GROUP BY name ORDER BY name");
  ASSERT_EQ(r.columns.size(), 3u);
  EXPECT_EQ(r.columns[0], "name");
  ASSERT_EQ(r.rows.size(), 4u);
  EXPECT_EQ(r.rows[0][0], "<script>alert(1)</script>");
  EXPECT_EQ(r.rows[0][1], "1");
  EXPECT_EQ(r.rows[0][2], "20000000");
  EXPECT_EQ(r.rows[3][0], "train_step");
  EXPECT_EQ(r.rows[3][2], std::to_string(40'000'000 + 60'000'000));
  const auto t = nnprof::query_profile(path("q.nnprof"), "SELECT name FROM thread ORDER BY utid");
  ASSERT_EQ(t.rows.size(), 2u);
  EXPECT_EQ(t.rows[1][0], "loader-0");
  const auto m = nnprof::query_profile(path("q.nnprof"), "SELECT value FROM meta WHERE key = 'schema_version'");
  EXPECT_EQ(m.rows.at(0).at(0), "11");
  const auto c = nnprof::query_profile(path("q.nnprof"), "SELECT ts, value FROM counter ORDER BY id");
  ASSERT_EQ(c.rows.size(), 3u);
  EXPECT_EQ(c.rows[2][1], "3072.0") << "counter values are running totals";
  std::ostringstream out;
  nnprof::write_query_result(t, out);
  EXPECT_NE(out.str().find("loader-0"), std::string::npos);
  EXPECT_NE(out.str().find("(2 rows)"), std::string::npos);
  try {
    (void)nnprof::query_profile(path("q.nnprof"), "SELECT nope FROM nowhere");
    FAIL();
  } catch (const nnprof::Error& e) {
    EXPECT_NE(std::string(e.what()).find("invalid query"), std::string::npos) << e.what();
  }
  try {
    (void)nnprof::query_profile(path("q.nnprof"), "DELETE FROM slice_data");
    FAIL() << "queries are read-only";
  } catch (const nnprof::Error&) {
  }
}

TEST_F(ProfileStore, MissingFileSaysSo) {
  const std::string e = load_error(path("absent.nnprof"));
  EXPECT_NE(e.find("no such file"), std::string::npos) << e;
  EXPECT_NE(e.find("absent.nnprof"), std::string::npos) << e;
}

TEST_F(ProfileStore, EmptyFileSaysSo) {
  std::ofstream(path("empty.nnprof")).close();
  const std::string e = load_error(path("empty.nnprof"));
  EXPECT_NE(e.find("is empty"), std::string::npos) << e;
}

TEST_F(ProfileStore, TextFileIsNotAProfile) {
  std::ofstream(path("notes.nnprof")) << "these are not the bytes you are looking for\n" << std::string(5000, 'x');
  const std::string e = load_error(path("notes.nnprof"));
  EXPECT_NE(e.find("not an nnprof profile"), std::string::npos) << e;
}

std::string read_all(const std::string& file) {
  std::ifstream in(file, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

// Saving under a report's extension writes that report, not a database under a misleading
// name (the seed's user called Profiler::save("profile.json") and got SQLite).
TEST_F(ProfileStore, AReportExtensionSavesThatReport) {
  const nnprof::Profile p = nnprof::testing::rich_profile();
  p.save(path("profile.json"));
  const std::string json = read_all(path("profile.json"));
  EXPECT_EQ(json.rfind("{", 0), 0u) << json.substr(0, 80);
  EXPECT_NE(json.find("\"schema\": \"nnprof-report\""), std::string::npos) << json.substr(0, 200);
  p.save(path("profile.HTML"));
  EXPECT_EQ(read_all(path("profile.HTML")).rfind("<!DOCTYPE html>", 0), 0u);
  p.save(path("trace.trace.json"));
  EXPECT_NE(read_all(path("trace.trace.json")).find("\"traceEvents\""), std::string::npos);
  // Only a profile loads back, and loading a report says what the file is not.
  const std::string e = load_error(path("profile.json"));
  EXPECT_NE(e.find("not an nnprof profile"), std::string::npos) << e;
  // Any other name is a profile, as before.
  p.save(path("run.nnprof"));
  p.save(path("run.db"));
  EXPECT_EQ(nnprof::Profile::load(path("run.db")), p);
}

TEST_F(ProfileStore, OtherSqliteDatabaseIsNotAProfile) {
  sqlite3* db = nullptr;
  ASSERT_EQ(sqlite3_open(path("other.db").c_str(), &db), SQLITE_OK);
  sqlite3_exec(db, "CREATE TABLE t(x); INSERT INTO t VALUES (1);", nullptr, nullptr, nullptr);
  sqlite3_close(db);
  const std::string e = load_error(path("other.db"));
  EXPECT_NE(e.find("not an nnprof profile"), std::string::npos) << e;
}

TEST_F(ProfileStore, TruncatedFileIsReportedAsDamaged) {
  nnprof::testing::synthetic_profile(20000, 2).save(path("big.nnprof"));
  const auto size = fs::file_size(path("big.nnprof"));
  fs::resize_file(path("big.nnprof"), size / 2);
  const std::string e = load_error(path("big.nnprof"));
  EXPECT_TRUE(e.find("corrupted or truncated") != std::string::npos || e.find("damaged") != std::string::npos) << e;
}

TEST_F(ProfileStore, CorruptedPagesAreReportedAsDamaged) {
  nnprof::testing::synthetic_profile(20000, 2).save(path("c.nnprof"));
  {
    // Two whole pages in the middle of the file: span rows and their page headers.
    const auto middle = fs::file_size(path("c.nnprof")) / 2 / 16384 * 16384;
    std::fstream f(path("c.nnprof"), std::ios::in | std::ios::out | std::ios::binary);
    f.seekp(static_cast<std::streamoff>(middle));
    const std::string garbage(2 * 16384, '\xA5');
    f.write(garbage.data(), static_cast<std::streamsize>(garbage.size()));
  }
  const std::string e = load_error(path("c.nnprof"));
  EXPECT_TRUE(e.find("corrupted") != std::string::npos || e.find("damaged") != std::string::npos) << e;
}

TEST_F(ProfileStore, NewerSchemaAsksForAnUpgrade) {
  nnprof::testing::rich_profile().save(path("new.nnprof"));
  sqlite3* db = nullptr;
  ASSERT_EQ(sqlite3_open(path("new.nnprof").c_str(), &db), SQLITE_OK);
  sqlite3_exec(db, "PRAGMA user_version = 99", nullptr, nullptr, nullptr);
  sqlite3_close(db);
  const std::string e = load_error(path("new.nnprof"));
  EXPECT_NE(e.find("newer nnprof"), std::string::npos) << e;
  EXPECT_NE(e.find("upgrade"), std::string::npos) << e;
}

TEST_F(ProfileStore, InconsistentReferencesAreRejectedOnLoad) {
  nnprof::testing::rich_profile().save(path("bad.nnprof"));
  sqlite3* db = nullptr;
  ASSERT_EQ(sqlite3_open(path("bad.nnprof").c_str(), &db), SQLITE_OK);
  sqlite3_exec(db, "UPDATE slice_data SET utid = 77 WHERE id = 0", nullptr, nullptr, nullptr);
  sqlite3_close(db);
  const std::string e = load_error(path("bad.nnprof"));
  EXPECT_NE(e.find("damaged"), std::string::npos) << e;
}

TEST_F(ProfileStore, UnwritablePathFailsCleanlyAndLeavesNothing) {
  const auto p = nnprof::testing::rich_profile();
  try {
    p.save(path("no/such/dir/x.nnprof"));
    FAIL();
  } catch (const nnprof::Error& e) {
    EXPECT_NE(std::string(e.what()).find("does not exist"), std::string::npos) << e.what();
  }
  // An existing file stays intact when a save over it fails half-way.
  p.save(path("keep.nnprof"));
  const auto before = fs::file_size(path("keep.nnprof"));
  nnprof::Profile broken = p;
  broken.spans[0].node = 3;  // inconsistent with its name: save refuses before touching the file
  EXPECT_THROW(broken.save(path("keep.nnprof")), nnprof::Error);
  EXPECT_EQ(fs::file_size(path("keep.nnprof")), before);
  EXPECT_TRUE(nnprof::Profile::load(path("keep.nnprof")) == p);
}

TEST_F(ProfileStore, EmptyProfileRoundTrips) {
  nnprof::Profiler profiler;
  const auto p = profiler.snapshot();
  p.save(path("empty_profile.nnprof"));
  const auto q = nnprof::Profile::load(path("empty_profile.nnprof"));
  EXPECT_TRUE(q.empty());
  EXPECT_TRUE(q == p);
}

// What the spans cost: the file less the fixed cost of its schema (every table of the format
// takes at least one 16 KiB page, rows or not, and each format adds tables), against the same
// spans as a Chrome trace.
TEST_F(ProfileStore, FileIsAThirdOfTheChromeTraceOrLess) {
  const auto p = nnprof::testing::synthetic_profile(100000, 4);
  p.save(path("s.nnprof"));
  nnprof::Report(p).export_to(path("s.trace.json"), nnprof::ReportFormat::Chrome);
  nnprof::Profiler empty;
  empty.snapshot().save(path("schema_only.nnprof"));
  const double schema = static_cast<double>(fs::file_size(path("schema_only.nnprof")));
  const double ratio = (static_cast<double>(fs::file_size(path("s.nnprof"))) - schema) /
                       static_cast<double>(fs::file_size(path("s.trace.json")));
  EXPECT_LT(ratio, 1.0 / 3.0) << "nnprof " << fs::file_size(path("s.nnprof")) << " B (of which the empty schema "
                              << schema << " B) vs chrome " << fs::file_size(path("s.trace.json")) << " B";
}

}  // namespace
