// The flow table of a .nnprof file (docs/FORMAT.md, "flow"): dependencies between threads,
// named as in Perfetto (slice_out, slice_in). Files written before flows existed have no
// such table and load with no flows.
#pragma once

#include "io/profile_store.hpp"
#include "io/sqlite.hpp"
#include "nnprof/profile.hpp"

namespace nnprof::io {

/// Creates the flow table and writes profile.flows into it (inside the caller's transaction).
void write_flow_table(sqlite::Database& db, const Profile& profile);
/// Reads profile.flows back when the file has the flow table, after the threads, the call
/// tree; throws nnprof::Error when a row refers to a missing thread, node or slice (or to a
/// slice of another thread: `slices` says each slice's), or has an unknown kind.
void read_flow_table(sqlite::Database& db, Profile& profile, const SliceThreads& slices);

}  // namespace nnprof::io
