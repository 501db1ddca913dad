// The windows of a continuous run: what one window holds, measured as the difference of two
// statistics snapshots of a running profiler, and the store that keeps them within a memory
// bound by rolling older windows up into coarser ones (docs/CONTINUOUS.md).
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "nnprof/continuous.hpp"
#include "nnprof/profile.hpp"

namespace nnprof::analysis {

/// The cumulative figures of a snapshot that the next window is measured against: per scope
/// name its counts and times, the heap's totals, and how far CPU samples were folded in.
struct WindowBaseline {
  struct ScopeTotals {
    std::uint64_t calls = 0;
    std::uint64_t total_ns = 0;
    std::uint64_t self_ns = 0;
    std::uint64_t items = 0;
  };
  std::map<std::string, ScopeTotals, std::less<>> scopes;
  std::uint64_t heap_alloc_bytes = 0;
  std::uint64_t heap_free_bytes = 0;
  /// CPU samples at or before this time (ns since the session's start) are in earlier windows.
  std::uint64_t samples_through_ns = 0;
  bool any_sample = false;

  /// Bytes this baseline takes (its map nodes and names), for the memory bound.
  [[nodiscard]] std::size_t bytes() const noexcept;
};

/// The baseline of `snapshot` (a Profiler::statistics_snapshot).
[[nodiscard]] WindowBaseline window_baseline(const Profile& snapshot);

/// Readings the caller takes at the window's end that the snapshot may not hold.
struct WindowReadings {
  std::uint64_t rss_bytes = 0;  ///< resident memory now; 0: not read
};

/// The step scope of `snapshot` when none was named: the first scope, in the profile's order
/// (longest total time first), that reported work items; empty when none did.
[[nodiscard]] std::string default_step_scope(const Profile& snapshot);

/// The window [start_ns, end_ns] (ns since the session's start) between `before` and the
/// snapshot `now`, its lists cut to the policy's top K plus an "[other]" remainder.
[[nodiscard]] ProfileWindow measure_window(const Profile& now, const WindowBaseline& before, std::uint64_t start_ns,
                                           std::uint64_t end_ns, const std::string& step_scope,
                                           const WindowReadings& readings, const RollupPolicy& policy);

/// `b` folded into `a` (b follows a): sums of counts and times, levels at b's end, peaks the
/// larger; the lists merged by name and cut back to the top K with the rest in "[other]", so
/// that every total is still the exact sum of the raw windows.
void merge_window(ProfileWindow& a, const ProfileWindow& b, const RollupPolicy& policy);

/// Bytes one window takes in memory (the struct, its lists and their names).
[[nodiscard]] std::size_t window_bytes(const ProfileWindow& window) noexcept;

/// The windows of a run, oldest first, rolled up by age as new ones arrive.
class WindowStore {
 public:
  explicit WindowStore(const RollupPolicy& policy = {}) : policy_(policy) {}

  /// What add() changed, for a file that mirrors the store: each window has a stable id (that
  /// of the first raw window in it); `removed` ids were merged into others, `written` indices
  /// are windows that are new or changed.
  struct Change {
    std::vector<std::uint64_t> removed;
    std::vector<std::size_t> written;
  };
  /// Appends the newest window and rolls up what aged past the policy's tiers.
  Change add(ProfileWindow window);

  [[nodiscard]] const std::vector<ProfileWindow>& windows() const noexcept { return windows_; }
  /// The stable id of each window (parallel to windows()).
  [[nodiscard]] const std::vector<std::uint64_t>& ids() const noexcept { return ids_; }
  /// Bytes of the store: the vector's capacity and every window's lists and names.
  [[nodiscard]] std::size_t bytes() const noexcept;
  [[nodiscard]] const RollupPolicy& policy() const noexcept { return policy_; }

 private:
  // The bucket width for a window that ended `age_ns` before the newest one ended; 0: raw.
  [[nodiscard]] std::uint64_t bucket_for_age(std::uint64_t age_ns) const noexcept;

  RollupPolicy policy_;
  std::vector<ProfileWindow> windows_;
  std::vector<std::uint64_t> ids_;
  std::uint64_t next_id_ = 0;
  std::size_t list_bytes_ = 0;  // sum of window_bytes beyond sizeof(ProfileWindow), kept as windows change
};

}  // namespace nnprof::analysis
