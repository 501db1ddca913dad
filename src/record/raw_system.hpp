// What the system monitor (src/collect/system) hands to the model: the tracks and energy of
// nnprof/system_profile.hpp with CLOCK_MONOTONIC sample times. src/model aligns the times to the
// session and finds the scope open at each sample.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "nnprof/system_profile.hpp"

namespace nnprof::detail {

struct RawSystem {
  /// sample_ns holds CLOCK_MONOTONIC ns here; sample_scope and scope_thread are left empty.
  SystemProfile data;
  /// The thread whose innermost open scope each sample carries (its name as the session knows
  /// it, ThreadInfo::name); empty: the first thread that recorded (the main thread, usually).
  std::string scope_thread_name;
};

}  // namespace nnprof::detail
