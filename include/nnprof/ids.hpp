// Index types shared by every part of a Profile.
#pragma once

#include <cstdint>
#include <limits>

namespace nnprof {

/// Index into Profile::strings.
using StringId = std::uint32_t;
/// "No such index": no name, no span, no thread.
inline constexpr std::uint32_t kNone = std::numeric_limits<std::uint32_t>::max();

}  // namespace nnprof
