// Turns what the system monitor sampled (RawSystem) into Profile::system: sample times on the
// session clock, and each sample tagged with the innermost scope open on the scope thread.
#pragma once

#include <cstdint>

#include "nnprof/profile.hpp"
#include "record/raw_system.hpp"

namespace nnprof::model {

/// Fills `profile.system` (profile.threads and spans must be final, spans sorted by thread,
/// then start). `monotonic_origin_ns` is CLOCK_MONOTONIC at the session's start. Samples taken
/// before the session started (a monitor attached to a later session) are kept at time 0.
void build_system(Profile& profile, const detail::RawSystem& raw, std::uint64_t monotonic_origin_ns);

}  // namespace nnprof::model
