// The rank tables of a .nnprof file (docs/FORMAT.md, "rank" and "thread_rank", format 11): which
// rank of a distributed job each process of the profile was, how its clock maps onto rank 0's,
// and which rank each thread ran in. Files written before format 11 load with no ranks.
#pragma once

#include "io/sqlite.hpp"
#include "nnprof/profile.hpp"

namespace nnprof::io {

/// Creates the rank tables and writes profile.ranks and ThreadInfo::rank (inside the caller's
/// transaction). Throws nnprof::Error when a thread names a rank the profile does not have.
void write_rank_tables(sqlite::Database& db, const Profile& profile);
/// Reads them back after the threads; throws nnprof::Error when a row refers to a missing
/// thread or rank, or holds a value out of range.
void read_rank_tables(sqlite::Database& db, Profile& profile);

}  // namespace nnprof::io
