// Scopes opened and closed by a framework's callbacks (the LibTorch operator observer), with
// their arguments in one call each: one thread-state lookup, one name lookup and one lock per
// end, where Profiler::start + arg + arg + ... pays each per argument. Exported for
// libnnprof_torch, which is built beside libnnprof; not a public API.
#pragma once

#include <cstdint>
#include <span>
#include <string_view>

#include "nnprof/config.hpp"
#include "nnprof/profiler.hpp"
#include "record/thread_ops.hpp"

namespace nnprof::detail {

/// Profiler::start(name), then `args` on the new scope. Nothing when the profiler is disabled
/// or the scope could not open (past the stack's depth: counted, as start(name) does).
NNPROF_API void open_framework_scope(Profiler& profiler, std::string_view name,
                                     std::span<const SpanArgInput> args) noexcept;

/// `args` and add_flops(flops, bytes) (when flops > 0) on the innermost scope, then
/// Profiler::stop(name).
NNPROF_API void close_framework_scope(Profiler& profiler, std::string_view name, double flops, std::uint64_t bytes,
                                      std::span<const SpanArgInput> args) noexcept;

}  // namespace nnprof::detail
