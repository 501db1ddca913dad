// Scopes opened and closed by a framework's callbacks (the LibTorch operator observer), with
// their arguments in one call each: one thread-state lookup, one name lookup and one lock per
// end, where Profiler::start + arg + arg + ... pays each per argument. Exported for
// libnnprof_torch and libnnprof_mpi, which are built beside libnnprof; not a public API.
#pragma once

#include <cstdint>
#include <span>
#include <string_view>

#include "nnprof/config.hpp"
#include "nnprof/profiler.hpp"
#include "record/thread_ops.hpp"

namespace nnprof::detail {

/// Profiler::start(name), then `args` on the new scope. Returns the scope's call site, for
/// close_framework_scope; nullptr when the profiler is disabled or the scope could not open
/// (past the stack's depth: counted, as start(name) does).
NNPROF_API const SourceLocation* open_framework_scope(Profiler& profiler, std::string_view name,
                                                      std::span<const SpanArgInput> args) noexcept;

/// `args` and add_flops(flops, bytes) (when flops > 0) on the innermost scope, then
/// Profiler::stop(name): by `site` (what open_framework_scope returned, which spares looking
/// the name up again) or, when it is nullptr, by name.
NNPROF_API void close_framework_scope(Profiler& profiler, const SourceLocation* site, std::string_view name,
                                      double flops, std::uint64_t bytes, std::span<const SpanArgInput> args) noexcept;

}  // namespace nnprof::detail
