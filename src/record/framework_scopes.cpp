#include "record/framework_scopes.hpp"

#include "record/session.hpp"

namespace nnprof::detail {

const SourceLocation* open_framework_scope(Profiler& profiler, std::string_view name,
                                           std::span<const SpanArgInput> args) noexcept {
  SessionCore& core = profiler.core();
  if (!core.enabled.load(std::memory_order_relaxed) || core.session == nullptr) return nullptr;
  ThreadState* ts = thread_state(core);
  if (ts == nullptr) return nullptr;
  try {
    const SourceLocation* site = &core.session->intern_cached(ts, name)->site;
    Frame* frame = scope_enter(ts, site);
    if (frame == nullptr) {
      if (ts->top == ts->stack_last) note_start_beyond_stack(ts);
      return nullptr;
    }
    add_span_args(ts, frame, args);
    return site;
  } catch (...) {
    return nullptr;  // out of memory interning a new name: the scope is not recorded
  }
}

void close_framework_scope(Profiler& profiler, const SourceLocation* site, std::string_view name, double flops,
                           std::uint64_t bytes, std::span<const SpanArgInput> args) noexcept {
  SessionCore& core = profiler.core();
  if (!core.enabled.load(std::memory_order_relaxed) || core.session == nullptr) return;
  ThreadState* ts = thread_state(core);
  if (ts == nullptr) return;
  if (flops > 0) add_work(ts, flops, bytes);
  add_span_args(ts, ts->top, args);
  try {
    stop_site(ts, site != nullptr ? site : &core.session->intern_cached(ts, name)->site);
  } catch (...) {
  }
}

}  // namespace nnprof::detail
