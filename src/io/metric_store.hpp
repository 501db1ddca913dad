// The metric tables of a .nnprof file (docs/FORMAT.md, "metric, metric_point"). Files written
// before metrics existed have no such tables and load with no metrics.
#pragma once

#include "io/sqlite.hpp"
#include "nnprof/profile.hpp"

namespace nnprof::io {

/// Creates the metric tables and writes profile.metrics into them (inside the caller's transaction).
void write_metric_tables(sqlite::Database& db, const Profile& profile);
/// Reads profile.metrics back when the file has the metric tables, after the strings and
/// threads; throws nnprof::Error when a row refers to a missing string or thread.
void read_metric_tables(sqlite::Database& db, Profile& profile);

}  // namespace nnprof::io
