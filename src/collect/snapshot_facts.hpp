// What a snapshot needs from the running process besides the session's records.
#pragma once

#include "record/raw_snapshot.hpp"

namespace nnprof::collect {

/// Fills `raw.host` (uname, /proc/cpuinfo, /proc/self/cmdline, and which sampled threads
/// outside the session have ended) and `raw.symbols` (every address of stack_addresses(raw),
/// through libdw), so that model::build_profile reads nothing but the snapshot. Call it right
/// after the snapshot is taken: threads end and libraries are unloaded later.
void add_process_facts(detail::RawSnapshot& raw);

}  // namespace nnprof::collect
