// What automatic heap tracking says about a profile, the same in every report: who
// allocates most, which scopes hold the peak, what was never freed, and whether memory
// grows. Pure functions of a Profile; nothing here applies when !profile.heap.tracked,
// except the findings on the named memory counters (counter_bottlenecks), which need only
// record_alloc/record_free.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "analysis/bottleneck.hpp"
#include "analysis/facts.hpp"
#include "analysis/sentence.hpp"
#include "nnprof/profile.hpp"

namespace nnprof::analysis {

struct MemoryFindingOptions {
  /// MemoryHotspot: a scope whose peak live bytes exceed this share of the heap peak; a memory
  /// counter whose bytes at the counters' peak exceed this share of that peak.
  double hotspot_share = 0.30;
  /// MemoryLeak: bytes never freed above this share of every heap byte allocated; a memory
  /// counter's bytes still outstanding at the end above this share of the bytes it allocated.
  double leak_share = 0.05;
  /// Steady growth over the second half of the timeline: the fitted line rises by at least
  /// this share of its starting level ...
  double growth_share = 0.05;
  /// ... and by at least this many bytes ...
  std::uint64_t growth_min_bytes = std::uint64_t{1} << 20;
  /// ... and explains at least this share of the samples' variance (R²), so that a sawtooth
  /// that merely ends high is not called growth.
  double growth_min_fit = 0.5;
  /// Fewer samples in the second half than this: growth is not judged.
  std::size_t growth_min_samples = 4;
};

// ---- (a) top allocators ---------------------------------------------------------------

/// One row of the "top allocators" table.
struct HeapAllocator {
  const ScopeStats* scope = nullptr;
  std::uint64_t alloc_bytes = 0;
  std::uint64_t alloc_count = 0;
  std::optional<std::uint64_t> bytes_per_call;  ///< alloc_bytes / calls; nothing without calls
  std::uint64_t retained_bytes = 0;             ///< net retained: allocated here, still live at the end
  std::uint64_t retained_blocks = 0;
  std::uint64_t peak_live_bytes = 0;
  double share = 0.0;                           ///< of every heap byte allocated; NaN when none was
};

/// The `n` scopes that allocated the most heap bytes while innermost, most first.
std::vector<HeapAllocator> top_allocators(const Profile& profile, std::size_t n);

// ---- (b) bottlenecks ------------------------------------------------------------------

/// MemoryHotspot per scope past options.hotspot_share, and one MemoryLeak past
/// options.leak_share, most severe first. Empty when the heap was not tracked.
std::vector<Bottleneck> memory_bottlenecks(const Profile& profile, const MemoryFindingOptions& options = {});

/// What reports say when memory_bottlenecks finds nothing: the thresholds that were not passed.
Sentence no_memory_bottlenecks(const MemoryFindingOptions& options = {});

/// The same two kinds from the named memory counters (record_alloc/record_free), each with
/// Bottleneck::counter set: MemoryHotspot for a counter holding more than options.hotspot_share
/// of the counters' peak at that peak (counter_bytes_at_peak), MemoryLeak for a counter whose
/// bytes allocated minus freed exceed options.leak_share of what it allocated. Hotspots first,
/// largest first, then leaks, largest first. Empty without counters.
std::vector<Bottleneck> counter_bottlenecks(const Profile& profile, const MemoryFindingOptions& options = {});

/// The bytes each memory counter (by index in Profile::memory_counters) held at the moment the
/// sum of all counters first reached Profile::memory.peak_bytes, replayed from the memory
/// timeline. Nothing when the timeline cannot say: no events (spans were not kept) or events
/// missing (the replayed peak differs from the recorded one).
std::optional<std::vector<std::uint64_t>> counter_bytes_at_peak(const Profile& profile);

/// Bytes and blocks the MemoryLeak finding and the verdict count as never freed: the
/// unreachable ones when reachability was checked; otherwise every block allocated inside a
/// scope that was still live (a block allocated outside scopes is taken as set up by design).
struct Unfreed {
  std::uint64_t bytes = 0;
  std::uint64_t blocks = 0;
  bool confirmed = false;  ///< reachability was checked: nothing points to these blocks
};
Unfreed unfreed_heap(const Profile& profile);

// ---- (c) leak verdict -----------------------------------------------------------------

/// A straight line fitted (least squares) to one series of the timeline over its second half.
struct MemoryGrowth {
  bool assessed = false;  ///< enough samples to fit a line
  bool steady = false;    ///< it rose by the options' thresholds along a good fit
  std::size_t samples = 0;
  std::uint64_t from_ns = 0;  ///< the second half: first and last sample in it
  std::uint64_t to_ns = 0;
  double start_bytes = 0.0;       ///< the line's level at from_ns
  double bytes_per_second = 0.0;  ///< its slope
  double total_bytes = 0.0;       ///< its rise from from_ns to to_ns
  double fit = 0.0;               ///< R²: 1 on a straight line, 0 when the line explains nothing
};

/// The samples at or after the middle of the timeline, `series` of each (HeapSample::heap_bytes,
/// ::rss_bytes), fitted and judged.
MemoryGrowth memory_growth(const std::vector<HeapSample>& samples, std::uint64_t HeapSample::*series,
                           const MemoryFindingOptions& options = {});

/// Whether the run leaks, and why: unfreed blocks at the end and/or steady growth of heap
/// in use or RSS over the second half of the run.
struct LeakVerdict {
  bool memory_leak_detected = false;
  Unfreed unfreed;
  MemoryGrowth heap;
  MemoryGrowth rss;
  std::uint64_t rss_initial_bytes = 0;
  std::uint64_t rss_peak_bytes = 0;
  std::uint64_t rss_final_bytes = 0;
  Sentence explanation;  ///< "Memory leak detected: ..." or "No memory leak detected: ..."
};

LeakVerdict leak_verdict(const Profile& profile, const MemoryFindingOptions& options = {});

// ---- building blocks of the reports' memory section -----------------------------------

/// The heap summary as labelled facts: who tracked, allocated and freed, the peak (when,
/// on which thread, in which scopes), what was live at the end, RSS, the timeline, stacks
/// and what escaped tracking.
std::vector<Fact> heap_facts(const Profile& profile);

/// Appends the path of `node` as scope names joined by " > ", or "outside any scope" for
/// the root.
Sentence& append_node_path(Sentence& sentence, const Profile& profile, std::uint32_t node);

/// The path of `node` as text ("train_step > forward"), or "[outside any scope]".
std::string scope_path_label(const Profile& profile, std::uint32_t node);

/// A frame as people read it: "fn (file:line)", "fn (module)", "0x7f3a1c2b4d10 (module)";
/// "unknown" for kNone.
std::string frame_label(const Profile& profile, std::uint32_t frame);

/// "main (TID 2001)"; "[unnamed] (TID 7)"; "thread 3" for a thread the profile lacks.
std::string thread_label(const Profile& profile, std::uint32_t thread);

}  // namespace nnprof::analysis
