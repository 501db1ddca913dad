// The recording session behind a public Profiler. The public API hands it to the collectors
// it starts, which write into it and never see the Profiler.
#pragma once

#include <string>
#include <string_view>

#include "nnprof/error.hpp"
#include "nnprof/profiler.hpp"
#include "record/session.hpp"

namespace nnprof::detail {

/// The session `profiler` records into. Throws Error("<collector> needs a running profiler")
/// when it has none (the profiler is being destroyed).
inline Session& session_of(Profiler& profiler, std::string_view collector) {
  Session* session = profiler.core().session;
  if (session == nullptr) throw Error(std::string(collector) + " needs a running profiler");
  return *session;
}

}  // namespace nnprof::detail
