// Edits a saved .nnprof with SQLite, the way the store tests damage files on purpose.
#pragma once

#include <gtest/gtest.h>
#include <sqlite3.h>

#include <string>

namespace nnprof::testing {

/// Runs `sql` on the database `file`; fails the test (naming SQLite's message) if it fails.
inline void run_sql(const std::string& file, const std::string& sql) {
  sqlite3* db = nullptr;
  ASSERT_EQ(sqlite3_open(file.c_str(), &db), SQLITE_OK);
  char* error = nullptr;
  const int rc = sqlite3_exec(db, sql.c_str(), nullptr, nullptr, &error);
  const std::string message = error != nullptr ? error : "";
  sqlite3_free(error);
  sqlite3_close(db);
  ASSERT_EQ(rc, SQLITE_OK) << sql << ": " << message;
}

}  // namespace nnprof::testing
