#include "io/sqlite.hpp"

#include <bit>

#include <fmt/format.h>

#include "nnprof/error.hpp"

namespace nnprof::io::sqlite {

Database::Database(const std::string& path, Mode mode) : path_(path) {
  const int flags = mode == Mode::ReadOnly ? SQLITE_OPEN_READONLY : (SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE);
  const int rc = sqlite3_open_v2(path.c_str(), &db_, flags | SQLITE_OPEN_NOMUTEX, nullptr);
  if (rc != SQLITE_OK) fail(rc, mode == Mode::ReadOnly ? "opening it" : "creating it");
  sqlite3_extended_result_codes(db_, 1);
}

Database::~Database() { sqlite3_close_v2(db_); }

void Database::exec(const std::string& sql) {
  char* err = nullptr;
  const int rc = sqlite3_exec(db_, sql.c_str(), nullptr, nullptr, &err);
  if (err != nullptr) sqlite3_free(err);
  if (rc != SQLITE_OK) fail(rc, "running a statement");
}

void Database::fail(int rc, std::string_view doing) const {
  const std::string detail = db_ != nullptr ? sqlite3_errmsg(db_) : sqlite3_errstr(rc);
  switch (rc & 0xff) {
    case SQLITE_NOTADB:
      throw Error(fmt::format("'{}' is not an nnprof profile: it is not a SQLite database ({})", path_, detail));
    case SQLITE_CORRUPT:
      throw Error(fmt::format("'{}' is corrupted or truncated ({} while {}); record the profile again", path_,
                              detail, doing));
    case SQLITE_CANTOPEN:
      throw Error(fmt::format("cannot open '{}' ({}): check the path and its permissions", path_, detail));
    case SQLITE_FULL:
      throw Error(fmt::format("cannot write '{}': the disk is full", path_));
    case SQLITE_READONLY:
    case SQLITE_PERM:
      throw Error(fmt::format("cannot write '{}' ({}): check its permissions", path_, detail));
    default:
      throw Error(fmt::format("'{}': SQLite error while {}: {}", path_, doing, detail));
  }
}

Statement::Statement(Database& db, const std::string& sql) : db_(db) {
  const int rc = sqlite3_prepare_v2(db.handle(), sql.c_str(), static_cast<int>(sql.size()), &stmt_, nullptr);
  if (rc != SQLITE_OK) db.fail(rc, "preparing a query");
}

Statement::~Statement() { sqlite3_finalize(stmt_); }

Statement& Statement::bind(int index, std::int64_t v) {
  sqlite3_bind_int64(stmt_, index, v);
  return *this;
}
Statement& Statement::bind_u64(int index, std::uint64_t v) { return bind(index, std::bit_cast<std::int64_t>(v)); }
Statement& Statement::bind(int index, double v) {
  sqlite3_bind_double(stmt_, index, v);
  return *this;
}
Statement& Statement::bind(int index, std::string_view v) {
  sqlite3_bind_text64(stmt_, index, v.data(), v.size(), SQLITE_TRANSIENT, SQLITE_UTF8);
  return *this;
}
Statement& Statement::bind_null(int index) {
  sqlite3_bind_null(stmt_, index);
  return *this;
}

void Statement::run() {
  const int rc = sqlite3_step(stmt_);
  if (rc != SQLITE_DONE && rc != SQLITE_ROW) {
    sqlite3_reset(stmt_);
    db_.fail(rc, "writing");
  }
  sqlite3_reset(stmt_);
}

bool Statement::step() {
  const int rc = sqlite3_step(stmt_);
  if (rc == SQLITE_ROW) return true;
  if (rc == SQLITE_DONE) return false;
  db_.fail(rc, "reading");
}

int Statement::columns() const noexcept { return sqlite3_column_count(stmt_); }
std::string Statement::column_name(int i) const {
  const char* n = sqlite3_column_name(stmt_, i);
  return n ? n : "";
}
bool Statement::is_null(int i) const noexcept { return sqlite3_column_type(stmt_, i) == SQLITE_NULL; }
std::int64_t Statement::i64(int i) const noexcept { return sqlite3_column_int64(stmt_, i); }
std::uint64_t Statement::u64(int i) const noexcept { return std::bit_cast<std::uint64_t>(i64(i)); }
double Statement::f64(int i) const noexcept { return sqlite3_column_double(stmt_, i); }
std::string Statement::text(int i) const {
  const auto* p = reinterpret_cast<const char*>(sqlite3_column_text(stmt_, i));
  return p ? std::string(p, static_cast<std::size_t>(sqlite3_column_bytes(stmt_, i))) : std::string();
}

}  // namespace nnprof::io::sqlite
