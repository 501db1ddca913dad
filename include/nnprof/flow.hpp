// Flows: dependencies between threads that the critical path follows.
//
// A task submitted to a pool and awaited is two dependencies: the submitter's hand-over
// before the task can start, and the task's completion before the submitter's wait can end.
//
//   // submitting thread, inside its scope
//   const nnprof::FlowId id = nnprof::flow_begin();      // before the task is queued
//   auto done = pool.submit([id] {
//     NNPROF_SCOPE("task");
//     nnprof::FlowTask task(id);                          // flow_end now, flow_done at exit
//     work();
//   });
//   { nnprof::FlowWait wait(id); done.get(); }            // flow_wait_begin .. flow_wait_end
//
// Each call writes one 24-byte record into the calling thread's buffer, like a scope: no
// lock, no allocation, no system call. Nothing is recorded while the profiler is disabled or
// keeps no spans (ProfilerOptions::record_spans = false).
#pragma once

#include <atomic>
#include <cstdint>

#include "nnprof/config.hpp"
#include "nnprof/detail/thread_state.hpp"
#include "nnprof/profiler.hpp"

namespace nnprof {

/// Identifies one piece of work handed from one thread to another. Every flow function
/// ignores 0. Ids of your own (a task number, say) must be below 2^63: flow_begin() makes the
/// ids above. An id may be used again once its flow has ended.
using FlowId = std::uint64_t;

namespace detail {
inline ThreadState* flow_thread(Profiler& profiler) noexcept {
  SessionCore& core = profiler.core();
  if (!core.enabled.load(std::memory_order_relaxed)) return nullptr;
  ThreadState* ts = thread_state(core);
  return ts != nullptr && ts->keep_spans ? ts : nullptr;
}

inline void write_flow(ThreadState* ts, RecordKind kind, FlowId id) noexcept {
  write_record(ts, read_ticks(), id, ts->top->node.load(std::memory_order_relaxed)->index, kind);
}

inline void flow_event(Profiler& profiler, RecordKind kind, FlowId id) noexcept {
  if (id == 0) return;
  if (ThreadState* ts = flow_thread(profiler)) write_flow(ts, kind, id);
}
}  // namespace detail

/// Hands work over to another thread: call on the submitting thread, inside the scope that
/// submits, before the work can start (before it is queued). Returns a new id for flow_end
/// and the others, or 0 when nothing is recorded.
[[nodiscard]] inline FlowId flow_begin(Profiler& profiler) noexcept {
  detail::ThreadState* ts = detail::flow_thread(profiler);
  if (ts == nullptr) return 0;
  const FlowId id = ts->next_flow_id++;
  detail::write_flow(ts, detail::RecordKind::FlowBegin, id);
  return id;
}
/// flow_begin with an id of your own (below 2^63).
inline void flow_begin(Profiler& profiler, FlowId id) noexcept {
  detail::flow_event(profiler, detail::RecordKind::FlowBegin, id);
}
/// The work handed over with `id` starts here: call on the thread that picked it up, first
/// thing inside the scope that does the work.
inline void flow_end(Profiler& profiler, FlowId id) noexcept {
  detail::flow_event(profiler, detail::RecordKind::FlowEnd, id);
}
/// The work of `id` is complete: call on the thread that did it, at the end of its scope,
/// before anyone waiting for it can see it complete (before setting the promise).
inline void flow_done(Profiler& profiler, FlowId id) noexcept {
  detail::flow_event(profiler, detail::RecordKind::FlowDone, id);
}
/// The calling thread starts waiting for the work of `id` (before future.get(), join...).
inline void flow_wait_begin(Profiler& profiler, FlowId id) noexcept {
  detail::flow_event(profiler, detail::RecordKind::FlowWaitBegin, id);
}
/// The calling thread's wait for `id` is over (right after future.get() returned). Without a
/// flow_wait_begin, the wait is taken to start when the thread's last scope before it ended.
inline void flow_wait_end(Profiler& profiler, FlowId id) noexcept {
  detail::flow_event(profiler, detail::RecordKind::FlowWaitEnd, id);
}

/// The same, in the global profiler.
[[nodiscard]] inline FlowId flow_begin() noexcept { return flow_begin(global_profiler()); }
inline void flow_begin(FlowId id) noexcept { flow_begin(global_profiler(), id); }
inline void flow_end(FlowId id) noexcept { flow_end(global_profiler(), id); }
inline void flow_done(FlowId id) noexcept { flow_done(global_profiler(), id); }
inline void flow_wait_begin(FlowId id) noexcept { flow_wait_begin(global_profiler(), id); }
inline void flow_wait_end(FlowId id) noexcept { flow_wait_end(global_profiler(), id); }

/// The worker's side of a flow: the work starts at construction (flow_end) and is complete at
/// destruction (flow_done), also when an exception leaves the block. Declare it right after
/// the scope that does the work: `NNPROF_SCOPE("task"); nnprof::FlowTask task(id);`.
class FlowTask {
 public:
  explicit FlowTask(FlowId id) noexcept : FlowTask(global_profiler(), id) {}
  FlowTask(Profiler& profiler, FlowId id) noexcept : profiler_(profiler), id_(id) { flow_end(profiler_, id_); }
  ~FlowTask() { flow_done(profiler_, id_); }
  FlowTask(const FlowTask&) = delete;
  FlowTask& operator=(const FlowTask&) = delete;

 private:
  Profiler& profiler_;
  FlowId id_;
};

/// The waiting side: waits for the work of `id` from construction (flow_wait_begin) to
/// destruction (flow_wait_end): `{ nnprof::FlowWait wait(id); future.get(); }`.
class FlowWait {
 public:
  explicit FlowWait(FlowId id) noexcept : FlowWait(global_profiler(), id) {}
  FlowWait(Profiler& profiler, FlowId id) noexcept : profiler_(profiler), id_(id) { flow_wait_begin(profiler_, id_); }
  ~FlowWait() { flow_wait_end(profiler_, id_); }
  FlowWait(const FlowWait&) = delete;
  FlowWait& operator=(const FlowWait&) = delete;

 private:
  Profiler& profiler_;
  FlowId id_;
};

}  // namespace nnprof
