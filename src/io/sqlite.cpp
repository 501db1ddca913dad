#include "io/sqlite.hpp"

#include <bit>

#include <fmt/format.h>

#include "nnprof/error.hpp"

namespace nnprof::io::sqlite {

Database::Database(const std::string& path, Mode mode) : path_(path) {
  const int flags = mode == Mode::ReadOnly            ? SQLITE_OPEN_READONLY
                    : mode == Mode::ReadWriteExisting ? SQLITE_OPEN_READWRITE
                                                      : (SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE);
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

Statement::Statement(Database& db, const std::string& sql, std::string_view table) : db_(db) {
  const int rc = sqlite3_prepare_v2(db.handle(), sql.c_str(), static_cast<int>(sql.size()), &stmt_, nullptr);
  if (rc == SQLITE_OK) return;
  if ((rc & 0xff) != SQLITE_ERROR) db.fail(rc, "preparing a query");
  const std::string detail = sqlite3_errmsg(db.handle());
  sqlite3_finalize(stmt_);
  stmt_ = nullptr;
  throw Error(fmt::format("'{}' is damaged or not an nnprof profile: its {} table cannot be read ({}); a profile "
                          "of this format version has it with every column, so the file was edited, damaged or "
                          "written by another program; record the profile again",
                          db.path(), table, detail));
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

void Statement::reset() noexcept { sqlite3_reset(stmt_); }

int Statement::columns() const noexcept { return sqlite3_column_count(stmt_); }
std::string Statement::column_name(int i) const {
  const char* n = sqlite3_column_name(stmt_, i);
  return n ? n : "";
}
bool Statement::is_null(int i) const noexcept { return sqlite3_column_type(stmt_, i) == SQLITE_NULL; }
std::int64_t Statement::i64(int i) const noexcept { return sqlite3_column_int64(stmt_, i); }
std::uint64_t Statement::u64(int i) const noexcept { return std::bit_cast<std::uint64_t>(i64(i)); }
double Statement::f64(int i) const noexcept { return sqlite3_column_double(stmt_, i); }
int Statement::type(int i) const noexcept { return sqlite3_column_type(stmt_, i); }
std::string Statement::text(int i) const {
  const auto* p = reinterpret_cast<const char*>(sqlite3_column_text(stmt_, i));
  return p ? std::string(p, static_cast<std::size_t>(sqlite3_column_bytes(stmt_, i))) : std::string();
}

// ---- Row -------------------------------------------------------------------------------

namespace {

// A value from the file, shown in a message: short, and with nothing a terminal would obey.
std::string excerpt(std::string text) {
  constexpr std::size_t kMax = 40;
  if (text.size() > kMax) text = text.substr(0, kMax) + "...";
  for (char& c : text)
    if (static_cast<unsigned char>(c) < 0x20 || static_cast<unsigned char>(c) >= 0x7f) c = '?';
  return text;
}

}  // namespace

void Row::fail(std::string_view what) const {
  const std::string where =
      key_.empty() ? fmt::format("{} row {}", table_, index_) : fmt::format("{} key '{}'", table_, key_);
  throw Error(fmt::format("'{}' is not a valid nnprof profile: {} {}; the file is damaged or was not written by "
                          "nnprof, record the profile again",
                          path(), where, what));
}

void Row::fail_column(int i, std::string_view problem) const {
  const std::string where =
      key_.empty() ? fmt::format("{} row {}", table_, index_) : fmt::format("{} key '{}'", table_, key_);
  throw Error(fmt::format("'{}' is not a valid nnprof profile: {}: column {} {}; the file is damaged or was not "
                          "written by nnprof, record the profile again",
                          path(), where, st_.column_name(i), problem));
}

void Row::expect(int i, int type, const char* what) const {
  if (i >= st_.columns())
    fail(fmt::format("has {} columns where {} are needed (a table of another format version?)", st_.columns(), i + 1));
  const int actual = st_.type(i);
  if (actual == type || (type == SQLITE_FLOAT && actual == SQLITE_INTEGER)) return;
  switch (actual) {
    case SQLITE_NULL: fail_column(i, fmt::format("is NULL where {} belongs", what));
    case SQLITE_TEXT: fail_column(i, fmt::format("holds the text '{}' where {} belongs", excerpt(st_.text(i)), what));
    case SQLITE_BLOB: fail_column(i, fmt::format("holds a blob where {} belongs", what));
    case SQLITE_FLOAT: fail_column(i, fmt::format("holds the fraction {} where {} belongs", st_.f64(i), what));
    default: fail_column(i, fmt::format("holds a value of unknown type where {} belongs", what));
  }
}

std::int64_t Row::i64(int i) const {
  expect(i, SQLITE_INTEGER, "an integer");
  return st_.i64(i);
}

std::uint64_t Row::u64(int i) const {
  expect(i, SQLITE_INTEGER, "an integer");
  return st_.u64(i);
}

double Row::f64(int i) const {
  expect(i, SQLITE_FLOAT, "a number");
  return st_.f64(i);
}

std::string Row::text(int i) const {
  expect(i, SQLITE_TEXT, "a text");
  return st_.text(i);
}

bool Row::is_null(int i) const {
  if (i >= st_.columns())
    fail(fmt::format("has {} columns where {} are needed (a table of another format version?)", st_.columns(), i + 1));
  return st_.type(i) == SQLITE_NULL;
}

std::uint32_t Row::optional_u32(int i) const {
  return is_null(i) ? std::numeric_limits<std::uint32_t>::max() : u32(i);
}

std::uint64_t Row::end(int ts, int dur) const {
  const std::uint64_t start = u64(ts);
  const std::int64_t length = i64(dur);
  if (length < 0) fail(fmt::format("ends before it begins: it has a negative duration (dur = {})", length));
  const std::uint64_t stop = start + static_cast<std::uint64_t>(length);
  if (stop < start) fail("ends after the end of time (ts + dur overflows)");
  return stop;
}

bool has_table(Database& db, std::string_view name) {
  Statement st(db, "SELECT count(*) FROM sqlite_master WHERE type IN ('table', 'view') AND name = ?");
  st.bind(1, name);
  return st.step() && st.i64(0) > 0;
}

}  // namespace nnprof::io::sqlite
