// The critical path: the chain of work, across threads, that determined when a run ended.
#pragma once

#include <cstdint>
#include <iosfwd>
#include <string_view>
#include <vector>

#include "nnprof/config.hpp"
#include "nnprof/profile.hpp"

namespace nnprof {

/// What a thread on the critical path was doing during one step.
enum class CriticalStepKind : std::uint8_t {
  Scope,     ///< running inside a scope (the innermost one open)
  Unscoped,  ///< running outside any recorded scope
  Handoff,   ///< between a flow's two ends: the work was queued, or its waiter was waking up
};

/// One step of the path: a stretch of time on one thread in one innermost scope.
struct CriticalPathStep {
  CriticalStepKind kind = CriticalStepKind::Scope;
  std::uint32_t thread = 0;    ///< Handoff: the thread that received the work or the wake-up
  StringId name = kNone;       ///< Scope: the scope's name; kNone otherwise
  std::uint32_t node = 0;      ///< Scope: its call-tree node; 0 otherwise
  std::uint32_t span = kNone;  ///< Scope: its span (Profile::spans)
  std::uint32_t flow = kNone;  ///< Handoff: the flow (Profile::flows)
  std::uint64_t start_ns = 0;  ///< since the session's start
  std::uint64_t end_ns = 0;
  double share = 0.0;          ///< of the path's length, 0..1

  [[nodiscard]] std::uint64_t duration_ns() const noexcept { return end_ns - start_ns; }
  bool operator==(const CriticalPathStep&) const = default;
};

/// The path's time per scope name (and once each for unscoped time and hand-overs).
struct CriticalPathScope {
  CriticalStepKind kind = CriticalStepKind::Scope;
  StringId name = kNone;        ///< Scope only
  std::uint64_t duration_ns = 0;
  double share = 0.0;           ///< of the path's length, 0..1
  std::uint64_t steps = 0;
  std::uint32_t threads = 0;    ///< distinct threads those steps ran on

  bool operator==(const CriticalPathScope&) const = default;
};

/// The chain of steps that ended last, walked back from the end: on a thread, its innermost
/// scopes in time order; where a thread's progress waited on another thread (a flow whose
/// beginning came after the thread was ready), the path continues on that other thread, so
/// the time spent waiting is attributed to the work that ended the wait. The steps cover
/// [start_ns, end_ns] without gaps or overlap.
struct CriticalPath {
  StringId root = kNone;        ///< the root scope asked for; kNone: the whole run
  std::uint64_t start_ns = 0;   ///< where the path starts (first span of its first thread, or the root's start)
  std::uint64_t end_ns = 0;     ///< the last end: of any span, or of the root scope
  std::uint32_t flows_followed = 0;  ///< dependencies between threads on the path
  std::uint32_t threads = 0;    ///< distinct threads on the path
  std::vector<CriticalPathStep> steps;     ///< in time order
  std::vector<CriticalPathScope> by_scope; ///< longest first

  [[nodiscard]] std::uint64_t duration_ns() const noexcept { return end_ns - start_ns; }
  [[nodiscard]] bool empty() const noexcept { return steps.empty(); }
  bool operator==(const CriticalPath&) const = default;
};

/// The critical path of the whole run, or of the scope named `root` (from the first start to
/// the last end of its spans). Needs the profile's spans; empty when none were kept. Throws
/// nnprof::Error when `root` names no scope with spans.
NNPROF_API CriticalPath critical_path(const Profile& profile, std::string_view root = {});

/// Writes `path` as the text report's "Critical path" section: a summary line, the time on the
/// path per scope, and its longest steps in time order.
NNPROF_API void write_critical_path(const Profile& profile, const CriticalPath& path, std::ostream& out);

/// "scope", "unscoped" or "handoff".
NNPROF_API const char* to_string(CriticalStepKind kind) noexcept;

}  // namespace nnprof
