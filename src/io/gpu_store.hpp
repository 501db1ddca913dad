// The GPU tables of a .nnprof file (docs/FORMAT.md, "GPU tables"): Profile::gpu, named as in
// Perfetto where the concept is the same (gpu_slice, gpu_track, gpu_counter_track). Files
// written before format version 6 have no such tables and load with an empty gpu
// (summary.traced false).
#pragma once

#include "io/profile_store.hpp"
#include "io/sqlite.hpp"
#include "nnprof/gpu_profile.hpp"
#include "nnprof/profile.hpp"

namespace nnprof::io {

/// Creates the gpu_* tables, writes profile.gpu into them and its summary into the gpu_* keys
/// of meta (inside the caller's transaction, after the meta table exists).
void write_gpu_tables(sqlite::Database& db, const Profile& profile);
/// Reads profile.gpu back when the file has the GPU tables, after the strings, threads, call
/// tree; throws nnprof::Error naming the table and row when a row refers to a missing stream,
/// thread, call-tree node, slice (of the launching thread: `slices` says each slice's), API
/// call, detail row or string, has an unknown enum text or a value out of range, or breaks the
/// documented row order.
void read_gpu_tables(sqlite::Database& db, Profile& profile, const SliceThreads& slices);

/// The text an op kind is stored as (and shown as in the Chrome trace): "kernel", "memcpy",
/// "memset". Copy directions and memory kinds use to_string (nnprof/gpu_profile.hpp).
[[nodiscard]] const char* stored_name(GpuOpKind kind) noexcept;

}  // namespace nnprof::io
