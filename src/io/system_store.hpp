// The system tables of a .nnprof file (docs/FORMAT.md, "System tables", format 10):
// Profile::system as counter tracks on a shared sample timeline, energy per domain with its
// method and band, and the monitor's notes. Files written before format 10 have no such tables
// and load with system.monitored false.
#pragma once

#include "io/sqlite.hpp"
#include "nnprof/profile.hpp"

namespace nnprof::io {

/// Creates the system_* and energy_domain tables and writes profile.system into them (inside
/// the caller's transaction, after the strings exist).
void write_system_tables(sqlite::Database& db, const Profile& profile);
/// Reads profile.system back when the file has the system tables, after the strings and
/// threads; throws nnprof::Error naming the table and row of anything damaged.
void read_system_tables(sqlite::Database& db, Profile& profile);

}  // namespace nnprof::io
