// What a run annotation's key may be (Profiler::annotate): checked where keys come in, from
// the program and from a stored profile, so that reports can print them as they are.
#pragma once

#include <algorithm>
#include <string_view>

namespace nnprof {

/// Non-empty, printable ASCII (' ' to '~'): no control character can reach a report header.
inline bool is_valid_annotation_key(std::string_view key) noexcept {
  return !key.empty() && std::all_of(key.begin(), key.end(), [](char c) { return c >= ' ' && c <= '~'; });
}

}  // namespace nnprof
