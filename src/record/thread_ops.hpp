// Thread-level operations of the record layer used by the profiler facade.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <string_view>

#include "nnprof/detail/thread_state.hpp"

namespace nnprof::detail {

/// Counts a start(name) that the full stack refused, so that its stop is consumed.
void note_start_beyond_stack(ThreadState* ts) noexcept;
/// Opens a scope of `site` for start(name); past kMaxDepth it is counted, not recorded.
inline void start_site(ThreadState* ts, const SourceLocation* site) noexcept {
  if (scope_enter(ts, site) == nullptr && ts->top == ts->stack_last) [[unlikely]]
    note_start_beyond_stack(ts);
}
/// Closes the innermost open scope of `site` (or of its name) on the calling thread.
void stop_site(ThreadState* ts, const SourceLocation* site) noexcept;
/// One argument of a span, for add_span_args.
struct SpanArgInput {
  std::string_view key;
  ArgValue value;
};
/// Attaches `args` to the span of frame `f` (see add_span_arg) under one lock: a framework
/// attaches several per operator.
void add_span_args(ThreadState* ts, const Frame* f, std::span<const SpanArgInput> args) noexcept;
void set_current_thread_name(std::string_view name);
std::string current_thread_name();
std::int64_t current_os_tid() noexcept;

}  // namespace nnprof::detail
