// The continuous tables of a .nnprof file (docs/FORMAT.md, "Continuous tables", format 11):
// Profile::continuous as windows with their top scopes and functions, and the anomalies and
// trends found over them; and the writer that appends finished windows to a file while the run
// goes, each in its own transaction, so that a crash loses at most the window in progress.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "io/sqlite.hpp"
#include "nnprof/profile.hpp"

namespace nnprof::io {

/// Creates the continuous tables and writes profile.continuous into them (inside the caller's
/// transaction). Window ids are the windows' indices.
void write_continuous_tables(sqlite::Database& db, const Profile& profile);
/// Reads profile.continuous back when the file has the continuous tables; throws
/// nnprof::Error naming the table and row of anything damaged.
void read_continuous_tables(sqlite::Database& db, Profile& profile);

/// Appends windows to a .nnprof file that Profile::save wrote at the run's start. The file is
/// switched to SQLite's write-ahead log; each update is one transaction followed by a
/// checkpoint, so the file alone holds every committed window, and a kill -9 in the middle of
/// an update leaves the previous state (Profile::load reads it).
class ContinuousFileWriter {
 public:
  /// Opens `path` (a profile this nnprof wrote) for appending. Throws nnprof::Error.
  explicit ContinuousFileWriter(const std::string& path);
  ~ContinuousFileWriter();
  ContinuousFileWriter(const ContinuousFileWriter&) = delete;
  ContinuousFileWriter& operator=(const ContinuousFileWriter&) = delete;

  /// One window to write under its stable id (an id already in the file is replaced).
  struct Row {
    std::uint64_t id = 0;
    const ProfileWindow* window = nullptr;
  };
  /// In one transaction: removes the windows `removed`, writes `written`, and replaces the
  /// stored anomalies and trends with `continuous`'s (with its `finished` flag).
  void update(const std::vector<std::uint64_t>& removed, const std::vector<Row>& written,
              const ContinuousProfile& continuous);
  /// Closes the file: the log is checkpointed (and removed when no reader has the file open),
  /// so the path can be replaced.
  void close();

 private:
  std::unique_ptr<sqlite::Database> db_;
};

}  // namespace nnprof::io
