// A thin RAII layer over the SQLite C API (Debian libsqlite3): a database handle and
// prepared statements, with every error turned into nnprof::Error naming the file.
#pragma once

#include <sqlite3.h>

#include <cstdint>
#include <string>
#include <string_view>

namespace nnprof::io::sqlite {

class Database {
 public:
  enum class Mode { ReadOnly, Create };
  Database(const std::string& path, Mode mode);
  ~Database();
  Database(const Database&) = delete;
  Database& operator=(const Database&) = delete;

  /// Runs one or more statements that return no rows.
  void exec(const std::string& sql);
  [[nodiscard]] sqlite3* handle() const noexcept { return db_; }
  [[nodiscard]] const std::string& path() const noexcept { return path_; }
  /// Throws nnprof::Error for result code `rc`, naming the file and what to do.
  [[noreturn]] void fail(int rc, std::string_view doing) const;

 private:
  sqlite3* db_ = nullptr;
  std::string path_;
};

class Statement {
 public:
  Statement(Database& db, const std::string& sql);
  ~Statement();
  Statement(const Statement&) = delete;
  Statement& operator=(const Statement&) = delete;

  Statement& bind(int index, std::int64_t v);
  Statement& bind_u64(int index, std::uint64_t v);  ///< stored bit-exact as a signed integer
  Statement& bind(int index, double v);
  Statement& bind(int index, std::string_view v);
  Statement& bind_null(int index);
  /// Executes to completion (INSERT and friends), then resets for the next bindings.
  void run();
  /// Steps a query: true while a row is available.
  bool step();

  [[nodiscard]] int columns() const noexcept;
  [[nodiscard]] std::string column_name(int i) const;
  [[nodiscard]] bool is_null(int i) const noexcept;
  [[nodiscard]] std::int64_t i64(int i) const noexcept;
  [[nodiscard]] std::uint64_t u64(int i) const noexcept;
  [[nodiscard]] double f64(int i) const noexcept;
  [[nodiscard]] std::string text(int i) const;

 private:
  Database& db_;
  sqlite3_stmt* stmt_ = nullptr;
};

}  // namespace nnprof::io::sqlite
