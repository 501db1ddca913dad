// The live server a Profiler starts itself (ProfilerOptions::serve, NNPROF_SERVE): kept beside
// the profiler, not in it, so that Profiler's layout (and every file that includes it) does
// not change with the server.
#pragma once

#include <string_view>

namespace nnprof {
class Profiler;

namespace detail {
/// Starts a server for `profiler` on `spec` ("[ADDR:]PORT"). Throws nnprof::Error when it
/// cannot (port taken, no token for a public address); `origin` names the setting in messages.
void attach_live_server(Profiler& profiler, std::string_view spec, std::string_view origin);
/// Stops and forgets the server of `profiler`, if it has one. Called by ~Profiler.
void detach_live_server(const Profiler& profiler) noexcept;
}  // namespace detail
}  // namespace nnprof
