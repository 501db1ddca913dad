// What profile_store.cpp offers beyond Profile::save and Profile::load: a save whose spans are
// streamed by the caller rather than held in memory (nnprof merge of many ranks).
#pragma once

#include <functional>
#include <string>

#include "io/sqlite.hpp"
#include "nnprof/profile.hpp"

namespace nnprof::io {

/// Writes a .nnprof file at `path` as Profile::save does (atomically, one transaction), except
/// that `stream` first writes the rows of slice_data and args itself into the fresh database
/// (schema in docs/FORMAT.md; slice ids and arg set ids from 0) and then returns the rest of
/// the profile, which must hold no spans nor span arguments and is written after them. The
/// returned profile's completeness, flows and diagnostics must agree with the streamed rows.
void save_streamed(const std::string& path, const std::function<const Profile&(sqlite::Database&)>& stream);

}  // namespace nnprof::io
