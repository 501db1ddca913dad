// Profile::load on hand-edited files: every column is read with its type checked (a NULL or a
// text in a NOT NULL column is refused, naming table, row and column, instead of read as 0),
// the meta table must be complete, and each kind of damage gets a message that says what it
// is: a negative duration, a file too short or not SQLite, a missing table or column.
#include <gtest/gtest.h>

#include <sqlite3.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <utility>
#include <vector>

#include "nnprof/nnprof.hpp"
#include "edit_store.hpp"
#include "test_directory.hpp"
#include "sample_profiles.hpp"

namespace fs = std::filesystem;

namespace {

class ProfileLoadChecks : public nnprof::testing::TestDirectory {
 protected:
  ProfileLoadChecks() : TestDirectory("load_checks") {}

  static void run_sql(const std::string& file, const std::string& sql) { nnprof::testing::run_sql(file, sql); }

  // The same table without its NOT NULL constraints (as another program could have written it).
  static std::string without_constraints(const std::string& table) {
    return "PRAGMA legacy_alter_table = ON; DROP VIEW IF EXISTS slice; CREATE TABLE loose AS SELECT * FROM " + table +
           "; DROP TABLE " + table + "; ALTER TABLE loose RENAME TO " + table + ";";
  }

  static std::string load_error(const std::string& file) {
    try {
      (void)nnprof::Profile::load(file);
    } catch (const nnprof::Error& e) {
      return e.what();
    }
    return "no error";
  }

  // Saves `profile`, applies `sql` to it and expects the load to fail with each of `expected`.
  void expect_refused(const nnprof::Profile& profile, const std::string& sql, const std::vector<std::string>& expected) {
    SCOPED_TRACE(sql);
    const std::string file = path("edited.nnprof");
    fs::remove(file);
    profile.save(file);
    run_sql(file, sql);
    const std::string e = load_error(file);
    EXPECT_NE(e.find(file), std::string::npos) << e;
    for (const std::string& part : expected) EXPECT_NE(e.find(part), std::string::npos) << e;
  }

};

TEST_F(ProfileLoadChecks, NullOrTextInANotNullColumnIsRefusedNamingTableRowAndColumn) {
  const nnprof::Profile rich = nnprof::testing::rich_profile();
  // A scope statistic whose name is NULL used to take the name of string 0.
  expect_refused(rich, without_constraints("scope_stats") + "UPDATE scope_stats SET name_id = NULL WHERE rank = 1",
                 {"scope_stats row 1: column name_id is NULL", "damaged"});
  expect_refused(rich, "UPDATE slice_data SET node_id = 'abc' WHERE id = 2",
                 {"slice_data row 2: column node_id holds the text 'abc'", "damaged"});
  expect_refused(rich, "UPDATE thread SET tid = 1.5 WHERE utid = 0", {"thread row 0: column tid holds the fraction 1.5"});
  expect_refused(rich, without_constraints("strings") + "UPDATE strings SET str = NULL WHERE id = 1",
                 {"strings row 1: column str is NULL"});
  expect_refused(rich, "UPDATE strings SET str = x'00ff' WHERE id = 1", {"strings row 1: column str holds a blob"});
  expect_refused(rich, without_constraints("diagnostic") + "UPDATE diagnostic SET count = NULL WHERE id = 0",
                 {"diagnostic row 0: column count is NULL"});
  expect_refused(rich, "UPDATE scope_tree SET depth = 4294967296 WHERE id = 1",
                 {"scope_tree row 1 has depth = 4294967296, out of range"});
  const nnprof::Profile heap = nnprof::testing::heap_profile();
  expect_refused(heap, without_constraints("leak_site") + "UPDATE leak_site SET bytes = NULL WHERE id = 0",
                 {"leak_site row 0: column bytes is NULL"});
  expect_refused(heap, "UPDATE frame SET line = 'ten' WHERE id = 1", {"frame row 1: column line holds the text 'ten'"});
}

TEST_F(ProfileLoadChecks, EmptyOrIncompleteMetaIsRefused) {
  const nnprof::Profile rich = nnprof::testing::rich_profile();
  expect_refused(rich, "DELETE FROM meta", {"meta table is empty", "damaged"});
  expect_refused(rich, "DELETE FROM meta WHERE key = 'pid'", {"meta table has no 'pid' key"});
  expect_refused(rich, "DELETE FROM meta WHERE key = 'heap_tracked'", {"meta table has no 'heap_tracked' key"});
  expect_refused(rich, "UPDATE meta SET value = NULL WHERE key = 'hostname'", {"meta key 'hostname': column value is NULL"});
  expect_refused(rich, "UPDATE meta SET value = 'soon' WHERE key = 'duration_ns'",
                 {"meta key 'duration_ns': column value holds the text 'soon'"});
  // A key of a later format version is not required of an earlier one.
  const std::string file = path("v3.nnprof");
  rich.save(file);
  run_sql(file, "DELETE FROM meta WHERE key GLOB 'machine_*'; DROP TABLE annotation; PRAGMA user_version = 3");
  EXPECT_NO_THROW((void)nnprof::Profile::load(file));
}

TEST_F(ProfileLoadChecks, NegativeDurationIsNamedAsSuch) {
  expect_refused(nnprof::testing::rich_profile(), "UPDATE slice_data SET dur = -5 WHERE id = 3",
                 {"slice_data row 3 ends before it begins: it has a negative duration (dur = -5)"});
}

TEST_F(ProfileLoadChecks, SliceOnAMissingThreadOrOnTheRootIsNamedAsSuch) {
  const nnprof::Profile rich = nnprof::testing::rich_profile();
  expect_refused(rich, "UPDATE slice_data SET utid = 77 WHERE id = 1", {"slice 1 refers to the missing thread 77"});
  expect_refused(rich, "UPDATE slice_data SET node_id = 0 WHERE id = 2", {"slice 2 is the call tree's root"});
}

TEST_F(ProfileLoadChecks, ShortFileOrOtherFileIsNotCalledASqliteDatabase) {
  const std::string one = path("one.nnprof");
  std::ofstream(one) << 'x';
  std::string e = load_error(one);
  EXPECT_NE(e.find("1 byte long, too short for a SQLite database"), std::string::npos) << e;
  EXPECT_EQ(e.find("is a SQLite database"), std::string::npos) << e;

  const std::string text = path("text.nnprof");
  std::ofstream(text) << std::string(4096, 'a');
  e = load_error(text);
  EXPECT_NE(e.find("not an nnprof profile: it is not a SQLite database"), std::string::npos) << e;

  // A real SQLite database of another program.
  const std::string other = path("other.db");
  run_sql(other, "CREATE TABLE t(x); INSERT INTO t VALUES (1)");
  e = load_error(other);
  EXPECT_NE(e.find("is a SQLite database but not an nnprof profile"), std::string::npos) << e;
}

TEST_F(ProfileLoadChecks, MissingTableOrColumnIsNamed) {
  const nnprof::Profile rich = nnprof::testing::rich_profile();
  for (const char* table : {"thread", "strings", "scope_stats", "counter", "diagnostic", "frame", "leak_site"})
    expect_refused(rich, std::string("DROP TABLE ") + table,
                   {std::string("it has no ") + table + " table", "damaged or not an nnprof profile"});
  expect_refused(rich, "ALTER TABLE diagnostic DROP COLUMN message",
                 {"its diagnostic table cannot be read (no such column: message)"});
  expect_refused(rich, "ALTER TABLE scope_stats DROP COLUMN bytes",
                 {"scope_stats row 0 has 27 columns where 28 are needed"});
}

}  // namespace
