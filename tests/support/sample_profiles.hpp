// Profiles built by hand for tests and benchmarks: one with every kind of field, and large
// synthetic ones.
#pragma once

#include <cstdint>

#include "nnprof/profile.hpp"

namespace nnprof::testing {

/// A small profile that uses every field of the model with distinctive values, including
/// awkward strings (quotes, commas, newlines, HTML, non-ASCII).
Profile rich_profile();

/// `spans` spans over `threads` threads in a realistic nesting (step > forward > layer >
/// matmul/gelu ...), with consistent call tree and statistics; deterministic.
Profile synthetic_profile(std::uint64_t spans, std::uint32_t threads);

}  // namespace nnprof::testing
