// RAII scope guards and the instrumentation macros.
#pragma once

#include <concepts>
#include <cstdint>
#include <string_view>

#include "nnprof/config.hpp"
#include "nnprof/profiler.hpp"
#include "nnprof/source_location.hpp"

namespace nnprof {

/// Times the enclosing block: opens a scope on construction, closes it on destruction,
/// including when an exception leaves the block.
class ProfileGuard {
 public:
  /// Fast form, used by the macros: `site` must outlive the profiler (a static).
  ProfileGuard(Profiler& profiler, const SourceLocation& site) noexcept { open(profiler.core(), &site); }
  /// Any name known only at run time; it is interned once per thread and name.
  NNPROF_API ProfileGuard(Profiler& profiler, std::string_view name) noexcept;
  /// Fast form that also declares the work the scope does (see Profiler::add_flops).
  ProfileGuard(Profiler& profiler, const SourceLocation& site, double flops, std::uint64_t bytes) noexcept {
    open(profiler.core(), &site);
    add_flops(flops, bytes);
  }
  /// Declares more work done in this scope, e.g. once the shapes are known.
  void add_flops(double flops, std::uint64_t bytes = 0) noexcept {
    if (frame_ == nullptr || frame_->start != start_) return;  // closed early by an explicit stop
    detail::add_work(frame_->node.load(std::memory_order_relaxed), flops, bytes);
  }
  /// Attaches `key` = `value` to this scope's span: an input's shape, a batch size, a file.
  /// The Chrome trace shows it in the slice's "args"; the .nnprof file keeps it (table `args`).
  /// Not for the innermost loop: it takes a lock and copies (about a microsecond). Nothing in a
  /// session that keeps no spans (ProfilerOptions::record_spans = false).
  void arg(std::string_view key, std::string_view value) noexcept { attach(key, detail::arg_value(value)); }
  template <typename T>
    requires std::integral<T> || std::floating_point<T>
  void arg(std::string_view key, T value) noexcept {
    attach(key, detail::arg_value(value));
  }
  ~ProfileGuard() {
    if (frame_ != nullptr) detail::scope_exit(state_, frame_, start_);
  }
  ProfileGuard(const ProfileGuard&) = delete;
  ProfileGuard& operator=(const ProfileGuard&) = delete;

 private:
  void open(detail::SessionCore& core, const SourceLocation* site) noexcept {
    if (!core.enabled.load(std::memory_order_relaxed)) return;
    state_ = detail::thread_state(core);
    if (state_ == nullptr) [[unlikely]] return;
    frame_ = detail::scope_enter(state_, site);
    if (frame_ != nullptr) start_ = frame_->start;
  }

  void attach(std::string_view key, const detail::ArgValue& value) noexcept {
    if (frame_ == nullptr || frame_->start != start_) return;  // closed early by an explicit stop
    detail::add_span_arg(state_, frame_, key, value);
  }

  detail::ThreadState* state_ = nullptr;
  detail::Frame* frame_ = nullptr;
  std::uint64_t start_ = 0;
};

}  // namespace nnprof

#define NNPROF_CONCAT_INNER(a, b) a##b
#define NNPROF_CONCAT(a, b) NNPROF_CONCAT_INNER(a, b)

#if NNPROF_ENABLED
#define NNPROF_SCOPE_IN_ID(profiler, name, id)                                                 \
  static constexpr ::nnprof::SourceLocation NNPROF_CONCAT(nnprof_site_, id){name, __func__,    \
                                                                            __FILE__, __LINE__}; \
  ::nnprof::ProfileGuard NNPROF_CONCAT(nnprof_guard_, id)(profiler, NNPROF_CONCAT(nnprof_site_, id))
/// Times the rest of the enclosing block in `profiler`; `name` must be a string literal.
#define NNPROF_SCOPE_IN(profiler, name) NNPROF_SCOPE_IN_ID(profiler, name, __COUNTER__)
/// Times the rest of the enclosing block in the global profiler.
#define NNPROF_SCOPE(name) NNPROF_SCOPE_IN(::nnprof::global_profiler(), name)
/// Like NNPROF_SCOPE_IN, declaring `flops` FLOPs and `bytes` bytes moved for this call.
#define NNPROF_SCOPE_FLOPS_IN(profiler, name, flops, bytes)                                     \
  NNPROF_SCOPE_FLOPS_IN_ID(profiler, name, flops, bytes, __COUNTER__)
#define NNPROF_SCOPE_FLOPS_IN_ID(profiler, name, flops, bytes, id)                              \
  static constexpr ::nnprof::SourceLocation NNPROF_CONCAT(nnprof_site_, id){name, __func__,    \
                                                                            __FILE__, __LINE__}; \
  ::nnprof::ProfileGuard NNPROF_CONCAT(nnprof_guard_, id)(profiler, NNPROF_CONCAT(nnprof_site_, id), \
                                                          static_cast<double>(flops),            \
                                                          static_cast<std::uint64_t>(bytes))
/// Times the rest of the block in the global profiler and declares the work it does: `flops`
/// floating-point operations and `bytes` moved (e.g. from nnprof::flops::matmul(m, n, k)).
#define NNPROF_SCOPE_FLOPS(name, flops, bytes) NNPROF_SCOPE_FLOPS_IN(::nnprof::global_profiler(), name, flops, bytes)
/// Like NNPROF_SCOPE_FLOPS_IN with the work given as one nnprof::OpCost (include
/// nnprof/flops.hpp), e.g. NNPROF_SCOPE_COST_IN(p, "matmul", nnprof::flops::linear(1, in, out)).
/// Compiled out, `cost` is not evaluated at all.
#define NNPROF_SCOPE_COST_IN(profiler, name, cost) NNPROF_SCOPE_COST_IN_ID(profiler, name, cost, __COUNTER__)
#define NNPROF_SCOPE_COST_IN_ID(profiler, name, cost, id)                          \
  const ::nnprof::OpCost NNPROF_CONCAT(nnprof_cost_, id) = (cost);                 \
  NNPROF_SCOPE_FLOPS_IN_ID(profiler, name, NNPROF_CONCAT(nnprof_cost_, id).flops, \
                           NNPROF_CONCAT(nnprof_cost_, id).bytes, id)
/// NNPROF_SCOPE_COST_IN in the global profiler.
#define NNPROF_SCOPE_COST(name, cost) NNPROF_SCOPE_COST_IN(::nnprof::global_profiler(), name, cost)
/// Times the rest of the enclosing function, named after it.
#define NNPROF_FUNCTION() NNPROF_SCOPE(__func__)
/// Like NNPROF_SCOPE, for a name computed at run time (slower: the name is looked up).
#define NNPROF_SCOPE_DYNAMIC(name) \
  ::nnprof::ProfileGuard NNPROF_CONCAT(nnprof_guard_, __COUNTER__)(::nnprof::global_profiler(), name)
#else
#define NNPROF_SCOPE_IN(profiler, name)
#define NNPROF_SCOPE(name)
#define NNPROF_FUNCTION()
#define NNPROF_SCOPE_DYNAMIC(name)
#define NNPROF_SCOPE_FLOPS_IN(profiler, name, flops, bytes)
#define NNPROF_SCOPE_FLOPS(name, flops, bytes)
#define NNPROF_SCOPE_COST_IN(profiler, name, cost)
#define NNPROF_SCOPE_COST(name, cost)
#endif
