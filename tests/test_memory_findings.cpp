// Memory findings (top allocators, hotspots, leaks, the leak verdict and the heap facts) on
// profiles built by hand, so that every number is known exactly.
#include "analysis/memory_findings.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include "render/sentence_markup.hpp"
#include "nnprof/profile.hpp"
#include "sample_profiles.hpp"

namespace nnprof {
namespace {

using analysis::BottleneckKind;
using analysis::BottleneckSeverity;
using testing::kMiB;
using testing::kMs;

constexpr std::uint64_t kKiB = 1024;

// A heap-tracked profile: one top-level scope per entry of `heaps`, named a, b, c ..., each
// called `calls` times; `peak` is the heap peak. Scopes and nodes carry the same heap figures.
Profile heap_scopes(const std::vector<HeapAttribution>& heaps, std::uint64_t peak, std::uint64_t calls = 10) {
  Profile p;
  p.heap.tracked = true;
  p.heap.reachability_checked = true;
  p.heap.peak_bytes = peak;
  p.call_tree.push_back(CallTreeNode{});
  for (std::size_t i = 0; i < heaps.size(); ++i) {
    const auto id = static_cast<std::uint32_t>(i + 1);
    p.strings.push_back(std::string(1, static_cast<char>('a' + i)));
    ScopeStats s = testing::scope_stats(static_cast<StringId>(i), calls * kMs,
                                        DurationStats{calls, calls * kMs, kMs, kMs, 1e6, 0.0, kMs, kMs, kMs});
    s.heap = heaps[i];
    p.scopes.push_back(s);
    CallTreeNode n = testing::tree_node(id, 0, 1, {}, s);
    n.heap = heaps[i];
    p.call_tree.push_back(n);
    p.call_tree[0].children.push_back(id);
    p.heap.alloc_bytes += heaps[i].alloc_bytes;
    p.heap.alloc_count += heaps[i].alloc_count;
  }
  return p;
}

std::string text(const Profile& p, const analysis::Sentence& s) { return render::text_of(p, s); }

// ---- top allocators -------------------------------------------------------------------

TEST(TopAllocators, RankedByHeapBytesWithCountAveragePerCallAndRetained) {
  Profile p = heap_scopes({{3 * kMiB, 30, 3 * kMiB, 30, 0, 0, kMiB},
                           {5 * kMiB, 5, 4 * kMiB, 4, kMiB, 1, 2 * kMiB},
                           {0, 0, 0, 0, 0, 0, 0},
                           {2 * kMiB, 1, 0, 0, 2 * kMiB, 1, 2 * kMiB}},
                          4 * kMiB);
  p.scopes[3].time.count = 0;  // never closed: no average per call
  const auto top = analysis::top_allocators(p, 10);
  ASSERT_EQ(top.size(), 3u) << "a scope that allocated nothing is left out";
  EXPECT_EQ(p.str(top[0].scope->name), "b");
  EXPECT_EQ(top[0].alloc_bytes, 5 * kMiB);
  EXPECT_EQ(top[0].alloc_count, 5u);
  EXPECT_EQ(top[0].bytes_per_call, 512 * kKiB);
  EXPECT_EQ(top[0].retained_bytes, kMiB);
  EXPECT_EQ(top[0].retained_blocks, 1u);
  EXPECT_EQ(top[0].peak_live_bytes, 2 * kMiB);
  EXPECT_DOUBLE_EQ(top[0].share, 0.5);
  EXPECT_EQ(p.str(top[1].scope->name), "a");
  EXPECT_EQ(top[1].bytes_per_call, 3 * kMiB / 10);
  EXPECT_EQ(p.str(top[2].scope->name), "d");
  EXPECT_EQ(top[2].bytes_per_call, std::nullopt);
  EXPECT_EQ(analysis::top_allocators(p, 1).size(), 1u);
}

// ---- hotspots -------------------------------------------------------------------------

TEST(MemoryBottlenecks, HotspotsPastThirtyPercentOfThePeakMostSevereFirst) {
  // Peak 100 MiB: a holds 31 MiB (past 30%), b exactly 30 MiB (not past), c 60 MiB (twice the threshold).
  const Profile p = heap_scopes({{31 * kMiB, 10, 31 * kMiB, 10, 0, 0, 31 * kMiB},
                                 {30 * kMiB, 1, 0, 0, 30 * kMiB, 1, 30 * kMiB},
                                 {600 * kMiB, 10, 600 * kMiB, 10, 0, 0, 60 * kMiB}},
                                100 * kMiB);
  const auto found = analysis::memory_bottlenecks(p);
  ASSERT_EQ(found.size(), 2u);
  EXPECT_EQ(found[0].kind, BottleneckKind::MemoryHotspot);
  EXPECT_EQ(found[0].severity, BottleneckSeverity::High);
  EXPECT_EQ(p.str(found[0].scope), "c");
  EXPECT_DOUBLE_EQ(found[0].value, 0.6);
  EXPECT_DOUBLE_EQ(found[0].threshold, 0.3);
  EXPECT_EQ(text(p, found[0].description),
            "c held up to 60.0 MiB live at once, 60.0% of the 100 MiB heap peak (threshold 30.0%).");
  EXPECT_EQ(text(p, found[0].suggestion),
            "It allocates 60.0 MiB per call (600 MiB over 10 calls), far more than it holds at once: allocate "
            "the buffers once, outside the loop, and reuse them across iterations, or take them from a pool.");
  EXPECT_EQ(found[1].severity, BottleneckSeverity::Medium);
  EXPECT_EQ(p.str(found[1].scope), "a");
  EXPECT_EQ(text(p, found[1].description),
            "a held up to 31.0 MiB live at once, 31.0% of the 100 MiB heap peak (threshold 30.0%).");
  EXPECT_EQ(text(p, found[1].suggestion),
            "It holds its blocks for long: free them as soon as they are no longer needed, or work on smaller "
            "pieces to lower the peak.");
}

TEST(MemoryBottlenecks, HotspotSuggestionsFollowTheAllocationPattern) {
  // a: 200 small blocks per call (a container growing by realloc); b: keeps what it allocates.
  const Profile p = heap_scopes({{2000 * 64, 2000, 2000 * 64, 2000, 0, 0, 64 * kKiB},
                                 {40 * kMiB, 4, 0, 0, 40 * kMiB, 4, 40 * kMiB}},
                                100 * kKiB + 40 * kMiB);
  const auto found = analysis::memory_bottlenecks(p);
  ASSERT_EQ(found.size(), 1u) << "a holds 64 KiB of a 40 MiB peak: no hotspot";
  EXPECT_EQ(text(p, found[0].suggestion),
            "It keeps what it allocates (40.0 MiB still live at the end): free blocks as soon as they are no "
            "longer needed, or work on smaller pieces to lower the peak.");
  const Profile q = heap_scopes({{2000 * 64, 2000, 2000 * 64, 2000, 0, 0, 64 * kKiB}}, 100 * kKiB);
  const auto realloc = analysis::memory_bottlenecks(q);
  ASSERT_EQ(realloc.size(), 1u);
  EXPECT_EQ(text(q, realloc[0].suggestion),
            "It makes 200 allocations per call, of 64 B on average: if a container grows by reallocation, "
            "reserve its final size up front; otherwise take the blocks from a pool.");
  EXPECT_EQ(realloc[0].suggestion.parts()[5].kind, analysis::Part::Kind::Code) << "`reserve` is code";
}

TEST(MemoryBottlenecks, ThresholdsAreOptions) {
  const Profile p = heap_scopes({{31 * kMiB, 10, 31 * kMiB, 10, 0, 0, 31 * kMiB},
                                 {600 * kMiB, 10, 600 * kMiB, 10, 0, 0, 60 * kMiB}},
                                100 * kMiB);
  analysis::MemoryFindingOptions options;
  options.hotspot_share = 0.5;
  const auto found = analysis::memory_bottlenecks(p, options);
  ASSERT_EQ(found.size(), 1u);
  EXPECT_EQ(p.str(found[0].scope), "b");
  EXPECT_EQ(found[0].severity, BottleneckSeverity::Medium) << "60% is not twice 50%";
  EXPECT_DOUBLE_EQ(found[0].threshold, 0.5);
}

TEST(MemoryBottlenecks, NoneWithoutHeapTracking) {
  Profile p = heap_scopes({{31 * kMiB, 10, 0, 0, 31 * kMiB, 10, 31 * kMiB}}, 32 * kMiB);
  p.heap.leaked_bytes = 31 * kMiB;
  EXPECT_EQ(analysis::memory_bottlenecks(p).size(), 2u);
  p.heap.tracked = false;
  EXPECT_TRUE(analysis::memory_bottlenecks(p).empty());
}

// ---- leaks ----------------------------------------------------------------------------

// Scope a (called from nowhere) leaks through fn at leak.cpp:7; b keeps a reachable block.
Profile leaking(std::uint64_t leaked_bytes) {
  Profile p = heap_scopes({{100 * kMiB - 4 * kKiB, 100, 90 * kMiB, 90, leaked_bytes, 3, kMiB},
                           {4 * kKiB, 1, 0, 0, 4 * kKiB, 1, 4 * kKiB}},
                          1000 * kMiB);
  p.heap.leaked_bytes = leaked_bytes;
  p.heap.leaked_blocks = 3;
  p.strings.insert(p.strings.end(), {"fn(int)", "leak.cpp", "app"});
  p.frames = {StackFrame{0x1234, 2, 3, 7, 4}};
  p.leaks = {LeakSite{1, 0, kNone, false, 3, leaked_bytes}, LeakSite{2, kNone, kNone, true, 1, 4 * kKiB}};
  return p;
}

TEST(MemoryBottlenecks, LeakPastFivePercentOfAllocatedNamesTheSite) {
  EXPECT_TRUE(analysis::memory_bottlenecks(leaking(5 * kMiB)).empty()) << "exactly 5% is not past 5%";
  const Profile p = leaking(6 * kMiB);
  const auto found = analysis::memory_bottlenecks(p);
  ASSERT_EQ(found.size(), 1u);
  EXPECT_EQ(found[0].kind, BottleneckKind::MemoryLeak);
  EXPECT_EQ(found[0].severity, BottleneckSeverity::Medium);
  EXPECT_EQ(p.str(found[0].scope), "a");
  EXPECT_DOUBLE_EQ(found[0].value, 0.06);
  EXPECT_EQ(text(p, found[0].description),
            "6.00 MiB in 3 blocks (6.0% of the 100 MiB allocated; threshold 5.0%) were never freed, and nothing "
            "points to them any more.");
  EXPECT_EQ(text(p, found[0].suggestion),
            "Free the blocks allocated at fn(int) (leak.cpp:7) in a (6.00 MiB in 3 blocks), or give them an "
            "owner that frees them (a std::unique_ptr, a container, an RAII wrapper).");
  EXPECT_EQ(analysis::memory_bottlenecks(leaking(10 * kMiB))[0].severity, BottleneckSeverity::High);
}

TEST(MemoryBottlenecks, WithoutReachabilityLiveBlocksInsideScopesCount) {
  Profile p = leaking(6 * kMiB);
  p.heap.reachability_checked = false;
  p.heap.leaked_bytes = 0;
  p.call_tree[0].heap.retained_bytes = 50 * kMiB;  // outside scopes: set up by design, not counted
  const analysis::Unfreed unfreed = analysis::unfreed_heap(p);
  EXPECT_EQ(unfreed.bytes, 6 * kMiB + 4 * kKiB);
  EXPECT_EQ(unfreed.blocks, 4u);
  EXPECT_FALSE(unfreed.confirmed);
  const auto found = analysis::memory_bottlenecks(p);
  ASSERT_EQ(found.size(), 1u);
  EXPECT_EQ(text(p, found[0].description),
            "6.00 MiB in 4 blocks allocated inside scopes (6.0% of the 100 MiB allocated; threshold 5.0%) were "
            "still allocated at the end; reachability was not checked, so some may still be in use.");
  // The largest site inside a scope, reachable or not (reachability is unknown).
  EXPECT_EQ(text(p, found[0].suggestion),
            "Free the blocks allocated at fn(int) (leak.cpp:7) in a (6.00 MiB in 3 blocks), or give them an "
            "owner that frees them (a std::unique_ptr, a container, an RAII wrapper).");
  p.leaks.clear();  // no sites: the scope that retains most
  EXPECT_EQ(text(p, analysis::memory_bottlenecks(p)[0].suggestion),
            "Free the blocks allocated in a (6.00 MiB still live), or give them an owner that frees them (a "
            "std::unique_ptr, a container, an RAII wrapper).");
}

// ---- growth and the verdict -----------------------------------------------------------

// Samples every 100 ms from 0 to 1 s of `bytes(i)` heap and twice that RSS.
template <typename Bytes>
std::vector<HeapSample> timeline(Bytes bytes, std::uint64_t count = 11) {
  std::vector<HeapSample> samples;
  for (std::uint64_t i = 0; i < count; ++i) {
    samples.push_back(HeapSample{i * 100 * kMs, bytes(i), 2 * bytes(i), 2 * bytes(i)});
  }
  return samples;
}

TEST(MemoryGrowth, FitsALineOverTheSecondHalf) {
  // 1 MiB, then 2.5 MiB per second: the second half (500 ms to 1 s) rises by 1.25 MiB from 2.25 MiB.
  const auto samples = timeline([](std::uint64_t i) { return kMiB + i * 256 * kKiB; });
  const analysis::MemoryGrowth g = analysis::memory_growth(samples, &HeapSample::heap_bytes);
  EXPECT_TRUE(g.assessed);
  EXPECT_TRUE(g.steady);
  EXPECT_EQ(g.samples, 6u);
  EXPECT_EQ(g.from_ns, 500 * kMs);
  EXPECT_EQ(g.to_ns, 1000 * kMs);
  EXPECT_NEAR(g.bytes_per_second, 2.5 * kMiB, 1e-6);
  EXPECT_NEAR(g.total_bytes, 1.25 * kMiB, 1e-6);
  EXPECT_NEAR(g.start_bytes, 2.25 * kMiB, 1e-6);
  EXPECT_NEAR(g.fit, 1.0, 1e-12);
}

TEST(MemoryGrowth, SawtoothFlatAndSmallGrowthAreNotSteady) {
  const auto sawtooth = timeline([](std::uint64_t i) { return (i % 2 == 0 ? 10 : 30) * kMiB; });
  const analysis::MemoryGrowth saw = analysis::memory_growth(sawtooth, &HeapSample::heap_bytes);
  EXPECT_TRUE(saw.assessed);
  EXPECT_FALSE(saw.steady) << "a sawtooth: the line explains little, R² " << saw.fit;
  EXPECT_LT(saw.fit, 0.5);
  const auto flat = timeline([](std::uint64_t) { return 10 * kMiB; });
  EXPECT_FALSE(analysis::memory_growth(flat, &HeapSample::heap_bytes).steady);
  // 100 KiB per second on 10 MiB: below 1 MiB and 5% of the level.
  const auto slow = timeline([](std::uint64_t i) { return 10 * kMiB + i * 10 * kKiB; });
  const analysis::MemoryGrowth g = analysis::memory_growth(slow, &HeapSample::heap_bytes);
  EXPECT_NEAR(g.fit, 1.0, 1e-9);
  EXPECT_FALSE(g.steady);
  analysis::MemoryFindingOptions options;
  options.growth_min_bytes = 0;
  options.growth_share = 0.0;
  EXPECT_TRUE(analysis::memory_growth(slow, &HeapSample::heap_bytes, options).steady) << "thresholds are options";
}

TEST(MemoryGrowth, TooFewSamplesAreNotJudged) {
  const auto samples = timeline([](std::uint64_t i) { return i * kMiB; }, 5);  // 3 in the second half
  const analysis::MemoryGrowth g = analysis::memory_growth(samples, &HeapSample::heap_bytes);
  EXPECT_FALSE(g.assessed);
  EXPECT_FALSE(g.steady);
  EXPECT_EQ(g.samples, 3u);
  EXPECT_FALSE(analysis::memory_growth({}, &HeapSample::heap_bytes).assessed);
}

TEST(LeakVerdict, ThreeLeakedBlocksOfOneKiB) {
  Profile p = heap_scopes({{3 * kKiB, 3, 0, 0, 3 * kKiB, 3, 3 * kKiB}}, 3 * kKiB);
  p.heap.leaked_bytes = 3 * kKiB;
  p.heap.leaked_blocks = 3;
  p.heap.current_blocks = 3;
  p.heap_samples = timeline([](std::uint64_t) { return 3 * kKiB; });
  p.heap.rss_initial_bytes = 10 * kMiB;
  p.heap.rss_peak_bytes = 12 * kMiB;
  p.heap.rss_final_bytes = 11 * kMiB;
  const analysis::LeakVerdict v = analysis::leak_verdict(p);
  EXPECT_TRUE(v.memory_leak_detected);
  EXPECT_EQ(v.unfreed.bytes, 3072u);
  EXPECT_EQ(v.unfreed.blocks, 3u);
  EXPECT_TRUE(v.unfreed.confirmed);
  EXPECT_FALSE(v.heap.steady);
  EXPECT_EQ(v.rss_initial_bytes, 10 * kMiB);
  EXPECT_EQ(v.rss_peak_bytes, 12 * kMiB);
  EXPECT_EQ(v.rss_final_bytes, 11 * kMiB);
  EXPECT_EQ(text(p, v.explanation), "Memory leak detected: 3 blocks (3.00 KiB) were unreachable at the end.");
}

TEST(LeakVerdict, SteadyGrowthOfHeapAndRss) {
  Profile p = heap_scopes({{kMiB, 1, 0, 0, 0, 0, kMiB}}, kMiB);
  p.heap_samples = timeline([](std::uint64_t i) { return kMiB + i * 256 * kKiB; });
  const analysis::LeakVerdict v = analysis::leak_verdict(p);
  EXPECT_TRUE(v.memory_leak_detected);
  EXPECT_EQ(v.unfreed.bytes, 0u);
  EXPECT_TRUE(v.heap.steady);
  EXPECT_TRUE(v.rss.steady);
  EXPECT_EQ(text(p, v.explanation),
            "Memory leak detected: heap in use grew steadily over the second half of the run (500 ms to 1.00 s): "
            "by 1.25 MiB, 2.50 MiB/s; RSS grew steadily too: by 2.50 MiB, 5.00 MiB/s.");
}

TEST(LeakVerdict, NoLeak) {
  Profile p = heap_scopes({{kMiB, 1, 0, 0, kMiB, 1, kMiB}}, kMiB);
  p.heap.current_blocks = 1;
  p.heap.reachable_blocks = 1;
  p.heap_samples = timeline([](std::uint64_t) { return kMiB; });
  analysis::LeakVerdict v = analysis::leak_verdict(p);
  EXPECT_FALSE(v.memory_leak_detected);
  EXPECT_EQ(text(p, v.explanation),
            "No memory leak detected: every block still allocated at the end is reachable, and neither heap in "
            "use nor RSS grew steadily over the second half of the run.");
  p.heap.current_blocks = 0;
  p.heap_samples.resize(2);
  EXPECT_EQ(text(p, analysis::leak_verdict(p).explanation),
            "No memory leak detected: every block was freed, and the timeline has too few samples (1 in its "
            "second half) to judge growth.");
}

TEST(LeakVerdict, HeapProfileLeaksAndGrows) {
  const Profile p = testing::heap_profile();
  const analysis::LeakVerdict v = analysis::leak_verdict(p);
  EXPECT_TRUE(v.memory_leak_detected);
  EXPECT_EQ(v.unfreed.bytes, 10 * kMiB + 3072);
  EXPECT_EQ(v.heap.samples, 25u);
  EXPECT_NEAR(v.heap.bytes_per_second, 125.0 / 13.0 * kMiB, 1e-3);  // 9.615 MiB/s
  EXPECT_NEAR(v.heap.fit, 0.7512019, 1e-6);
  EXPECT_EQ(text(p, v.explanation),
            "Memory leak detected: 13 blocks (10.0 MiB) were unreachable at the end; heap in use grew steadily "
            "over the second half of the run (500 ms to 980 ms): by 4.62 MiB, 9.62 MiB/s; RSS grew steadily "
            "too: by 4.62 MiB, 9.62 MiB/s.");
}

// ---- facts and labels -----------------------------------------------------------------

TEST(HeapFacts, HeapProfile) {
  const Profile p = testing::heap_profile();
  const auto facts = analysis::heap_facts(p);
  std::vector<std::string> lines;
  for (const analysis::Fact& fact : facts) lines.push_back(std::string(fact.label) + ": " + text(p, fact.value));
  EXPECT_EQ(lines, (std::vector<std::string>{
                       "Tracked by: nnprof::MemoryTracking (in-process)",
                       "Allocated: 163 MiB in 185 allocations; 145 MiB freed in 169 frees",
                       "Peak: 22.0 MiB at 949 ms after the session start, on main (TID 2001), in train_step > "
                       "forward > matmul",
                       "At the end: 18.0 MiB in 16 blocks: 10.0 MiB in 13 blocks leaked (unreachable), 8.00 MiB "
                       "in 3 blocks still reachable",
                       "RSS: initial 48.0 MiB, peak 59.0 MiB (VmHWM), final 57.0 MiB",
                       "Timeline: 50 samples, every 20.0 ms",
                       "Call stacks: sampled, one per 512 KiB allocated on average",
                       "Not tracked: 1 free of a block allocated before tracking started, 0 allocations the "
                       "live-block table could not hold",
                   }));
}

TEST(HeapFacts, NothingLeakedOrNothingLeft) {
  Profile p = testing::heap_profile();
  p.heap.current_bytes = 736;
  p.heap.current_blocks = 2;
  p.heap.leaked_bytes = 0;
  p.heap.leaked_blocks = 0;
  p.heap.reachable_bytes = 736;
  p.heap.reachable_blocks = 2;
  EXPECT_EQ(text(p, analysis::heap_facts(p)[3].value), "736 B in 2 blocks: none leaked (unreachable), 736 B in 2 "
                                                       "blocks still reachable");
  p.heap.current_bytes = 0;
  p.heap.current_blocks = 0;
  EXPECT_EQ(text(p, analysis::heap_facts(p)[3].value), "nothing: every block was freed");
}

TEST(HeapFacts, PreloadPeakOutsideScopesUnknownThreadAndResolution) {
  Profile p = testing::heap_profile();
  p.heap.source = "preload";
  p.heap.peak_node = 0;
  p.heap.peak_thread = kNone;
  p.heap.peak_resolution_bytes = 4096;
  p.heap.reachability_checked = false;
  p.heap.stack_sample_bytes = 0;
  p.heap.sample_interval_ns = 0;
  const auto facts = analysis::heap_facts(p);
  EXPECT_EQ(text(p, facts[0].value), "nnprof record --memory (preload agent)");
  EXPECT_EQ(text(p, facts[2].value), "22.0 MiB at 949 ms after the session start, outside any scope (exact to "
                                     "within 4.00 KiB)");
  EXPECT_EQ(text(p, facts[3].value), "18.0 MiB in 16 blocks (reachability not checked)");
  EXPECT_EQ(text(p, facts[5].value), "50 samples");
  EXPECT_EQ(text(p, facts[6].value), "not kept (the calling site of each allocation only)");
}

TEST(HeapLabels, FramesScopePathsAndThreads) {
  const Profile p = testing::heap_profile();
  EXPECT_EQ(analysis::frame_label(p, 0), "History::append(Tensor const&) (src/optim/history.cpp:42)");
  EXPECT_EQ(analysis::frame_label(p, 7), "0x7f3a1c2b4d10 (libc.so.6)");
  EXPECT_EQ(analysis::frame_label(p, kNone), "unknown");
  EXPECT_EQ(analysis::frame_label(p, 99), "unknown");
  EXPECT_EQ(analysis::scope_path_label(p, 3), "train_step > forward > matmul");
  EXPECT_EQ(analysis::scope_path_label(p, 0), "[outside any scope]");
  EXPECT_EQ(analysis::thread_label(p, 1), "loader (TID 2002)");
  EXPECT_EQ(analysis::thread_label(p, 5), "thread 5");
  analysis::Sentence s;
  analysis::append_node_path(s, p, 3);
  ASSERT_EQ(s.parts().size(), 5u);
  EXPECT_EQ(s.parts()[0].kind, analysis::Part::Kind::Scope) << "names are scopes, marked up as such";
}

TEST(HeapBottlenecks, HeapProfileHasTwoHotspotsAndALeak) {
  const Profile p = testing::heap_profile();
  const auto found = analysis::memory_bottlenecks(p);
  ASSERT_EQ(found.size(), 3u);
  EXPECT_EQ(found[0].kind, BottleneckKind::MemoryHotspot);
  EXPECT_EQ(found[0].severity, BottleneckSeverity::High);
  EXPECT_EQ(text(p, found[0].description),
            "load_batch held up to 16.0 MiB live at once, 72.7% of the 22.0 MiB heap peak (threshold 30.0%).");
  EXPECT_EQ(text(p, found[1].description),
            "optimizer_step held up to 10.0 MiB live at once, 45.4% of the 22.0 MiB heap peak (threshold 30.0%).");
  EXPECT_EQ(found[2].kind, BottleneckKind::MemoryLeak);
  EXPECT_EQ(text(p, found[2].suggestion),
            "Free the blocks allocated at History::append(Tensor const&) (src/optim/history.cpp:42) in train_step "
            "> optimizer_step (10.0 MiB in 10 blocks), or give them an owner that frees them (a std::unique_ptr, "
            "a container, an RAII wrapper).");
}

}  // namespace
}  // namespace nnprof
