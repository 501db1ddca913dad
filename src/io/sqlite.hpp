// A thin RAII layer over the SQLite C API (Debian libsqlite3): a database handle and
// prepared statements, with every error turned into nnprof::Error naming the file.
#pragma once

#include <sqlite3.h>

#include <cstdint>
#include <limits>
#include <string>
#include <string_view>

#include <fmt/format.h>

namespace nnprof::io::sqlite {

class Database {
 public:
  /// ReadWriteExisting: an existing file, opened to change it (never created).
  enum class Mode { ReadOnly, Create, ReadWriteExisting };
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
  /// A query of a profile being loaded: when it cannot be prepared (a missing table or column),
  /// the error names `table` and says the file is damaged or of another version.
  Statement(Database& db, const std::string& sql, std::string_view table);
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
  /// Back to before the first step, keeping the bindings (a query run again with new ones).
  void reset() noexcept;

  [[nodiscard]] int columns() const noexcept;
  [[nodiscard]] std::string column_name(int i) const;
  [[nodiscard]] bool is_null(int i) const noexcept;
  [[nodiscard]] std::int64_t i64(int i) const noexcept;
  [[nodiscard]] std::uint64_t u64(int i) const noexcept;
  [[nodiscard]] double f64(int i) const noexcept;
  [[nodiscard]] std::string text(int i) const;
  /// SQLITE_INTEGER, SQLITE_FLOAT, SQLITE_TEXT, SQLITE_BLOB or SQLITE_NULL.
  [[nodiscard]] int type(int i) const noexcept;
  [[nodiscard]] const Database& database() const noexcept { return db_; }

 private:
  Database& db_;
  sqlite3_stmt* stmt_ = nullptr;
};

/// The current row of a table being loaded, read column by column with each value's storage
/// class checked: a file is not trusted to have kept its NOT NULL and types, and a NULL or a
/// text read as 0 would silently point at another row. Every failure is an nnprof::Error
/// "'<file>' is not a valid nnprof profile: <table> row <n> ...; the file is damaged or was
/// not written by nnprof, ...". The one way the loaders read columns.
class Row {
 public:
  /// Row `index` (0-based, in the order read) of `table`; `key` names it instead where rows
  /// are named (meta).
  Row(const Statement& st, std::string_view table, std::size_t index, std::string_view key = {}) noexcept
      : st_(st), table_(table), index_(index), key_(key) {}

  /// Throws: "<table> row <index> <what>".
  [[noreturn]] void fail(std::string_view what) const;
  /// Throws: "<table> row <index>: column <name> <problem>".
  [[noreturn]] void fail_column(int i, std::string_view problem) const;

  [[nodiscard]] std::int64_t i64(int i) const;   ///< INTEGER
  [[nodiscard]] std::uint64_t u64(int i) const;  ///< INTEGER, as bind_u64 stored it
  [[nodiscard]] double f64(int i) const;         ///< REAL or INTEGER
  [[nodiscard]] std::string text(int i) const;   ///< TEXT
  [[nodiscard]] bool flag(int i) const { return i64(i) != 0; }
  [[nodiscard]] bool is_null(int i) const;
  /// INTEGER within T's range.
  template <class T>
  [[nodiscard]] T ranged(int i) const {
    const std::int64_t v = i64(i);
    if (v < static_cast<std::int64_t>(std::numeric_limits<T>::min()) ||
        v > static_cast<std::int64_t>(std::numeric_limits<T>::max()))
      fail(fmt::format("has {} = {}, out of range", column(i), v));
    return static_cast<T>(v);
  }
  [[nodiscard]] std::uint32_t u32(int i) const { return ranged<std::uint32_t>(i); }
  [[nodiscard]] std::int32_t i32(int i) const { return ranged<std::int32_t>(i); }
  [[nodiscard]] std::uint8_t u8(int i) const { return ranged<std::uint8_t>(i); }
  /// NULL: kNone (an index that is absent), else as u32.
  [[nodiscard]] std::uint32_t optional_u32(int i) const;
  /// The end of an interval stored as ts and dur (both as bind_u64 wrote them): dur must not
  /// be negative, nor the sum wrap.
  [[nodiscard]] std::uint64_t end(int ts, int dur) const;

  [[nodiscard]] std::string column(int i) const { return st_.column_name(i); }
  [[nodiscard]] std::size_t index() const noexcept { return index_; }
  [[nodiscard]] const std::string& path() const noexcept { return st_.database().path(); }

 private:
  void expect(int i, int type, const char* what) const;

  const Statement& st_;
  std::string_view table_;
  std::size_t index_;
  std::string_view key_;
};

/// Whether the database has a table (or view) of this name.
[[nodiscard]] bool has_table(Database& db, std::string_view name);

}  // namespace nnprof::io::sqlite
