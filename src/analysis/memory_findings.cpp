#include "analysis/memory_findings.hpp"

#include <algorithm>
#include <cmath>
#include <optional>
#include <string_view>
#include <utility>

#include <fmt/format.h>

#include "analysis/rankings.hpp"

namespace nnprof::analysis {
namespace {

// A scope that makes this many allocations per call, of blocks smaller than kSmallBlock on
// average, most likely grows a container element by element (each growth a realloc).
constexpr std::uint64_t kManyAllocationsPerCall = 16;
constexpr std::uint64_t kSmallBlock = 4096;

const char* were(std::uint64_t n) { return n == 1 ? "was" : "were"; }

// "in a > b", or "outside any scope".
Sentence& append_where(Sentence& s, const Profile& profile, std::uint32_t node) {
  if (node == 0 || node >= profile.call_tree.size()) return s.words("outside any scope");
  return append_node_path(s.words("in "), profile, node);
}

// ---- hotspots -------------------------------------------------------------------------

Sentence hotspot_suggestion(const ScopeStats& scope) {
  const HeapAttribution& h = scope.heap;
  const std::uint64_t calls = scope.time.count;
  Sentence s;
  if (calls > 0 && h.alloc_count >= kManyAllocationsPerCall * calls && h.alloc_bytes / h.alloc_count < kSmallBlock) {
    return s.words("It makes ").count(h.alloc_count / calls, "allocation", "allocations")
        .words(" per call, of ").bytes(h.alloc_bytes / h.alloc_count)
        .words(" on average: if a container grows by reallocation, ").code("reserve")
        .words(" its final size up front; otherwise take the blocks from a pool.");
  }
  if (calls > 1 && h.alloc_bytes >= 2 * h.peak_live_bytes) {
    return s.words("It allocates ").bytes(h.alloc_bytes / calls).words(" per call (").bytes(h.alloc_bytes)
        .words(" over ").count(calls, "call", "calls")
        .words("), far more than it holds at once: allocate the buffers once, outside the loop, and "
               "reuse them across iterations, or take them from a pool.");
  }
  if (h.retained_bytes > 0) {
    return s.words("It keeps what it allocates (").bytes(h.retained_bytes)
        .words(" still live at the end): free blocks as soon as they are no longer needed, or work on "
               "smaller pieces to lower the peak.");
  }
  return s.words("It holds its blocks for long: free them as soon as they are no longer needed, or work on "
                 "smaller pieces to lower the peak.");
}

void add_hotspots(const Profile& profile, const MemoryFindingOptions& options, std::vector<Bottleneck>& out) {
  const std::uint64_t peak = profile.heap.peak_bytes;
  if (peak == 0) return;
  std::vector<const ScopeStats*> hot;
  for (const ScopeStats& scope : profile.scopes) {
    if (share_of(scope.heap.peak_live_bytes, peak) > options.hotspot_share) hot.push_back(&scope);
  }
  std::sort(hot.begin(), hot.end(), [&](const ScopeStats* a, const ScopeStats* b) {
    if (a->heap.peak_live_bytes != b->heap.peak_live_bytes) return a->heap.peak_live_bytes > b->heap.peak_live_bytes;
    return profile.str(a->name) < profile.str(b->name);
  });
  for (const ScopeStats* scope : hot) {
    const double share = share_of(scope->heap.peak_live_bytes, peak);
    Bottleneck b;
    b.kind = BottleneckKind::MemoryHotspot;
    b.severity = severity_for(share, options.hotspot_share);
    b.scope = scope->name;
    b.value = share;
    b.threshold = options.hotspot_share;
    b.description.scope(scope->name).words(" held up to ").bytes(scope->heap.peak_live_bytes).key()
        .words(" live at once, ").share(share).words(" of the ").bytes(peak).words(" heap peak (threshold ")
        .share(options.hotspot_share).words(").");
    b.suggestion = hotspot_suggestion(*scope);
    out.push_back(std::move(b));
  }
}

// ---- leaks ----------------------------------------------------------------------------

// The largest leak site among the unfreed ones: unreachable when that was checked, else
// allocated inside a scope. The model keeps sites largest first.
const LeakSite* largest_unfreed_site(const Profile& profile, bool confirmed) {
  for (const LeakSite& site : profile.leaks) {
    if (site.bytes == 0) continue;
    if (confirmed ? !site.reachable : site.node != 0) return &site;
  }
  return nullptr;
}

// The call-tree node (not the root) that retains the most bytes, or 0.
std::uint32_t node_retaining_most(const Profile& profile) {
  std::uint32_t best = 0;
  std::uint64_t most = 0;
  for (std::uint32_t i = 1; i < profile.call_tree.size(); ++i) {
    if (profile.call_tree[i].heap.retained_bytes > most) {
      best = i;
      most = profile.call_tree[i].heap.retained_bytes;
    }
  }
  return best;
}

Sentence leak_description(const Profile& profile, const Unfreed& unfreed, double share, double threshold) {
  Sentence s;
  s.bytes(unfreed.bytes).key().words(" in ").count(unfreed.blocks, "block", "blocks");
  if (!unfreed.confirmed) s.words(" allocated inside scopes");
  s.words(" (").share(share).words(" of the ").bytes(profile.heap.alloc_bytes)
      .words(" allocated; threshold ").share(threshold).words(") ");
  if (unfreed.confirmed) {
    return s.words(were(unfreed.blocks)).words(" never freed, and nothing points to ")
        .words(unfreed.blocks == 1 ? "it" : "them").words(" any more.");
  }
  return s.words(were(unfreed.blocks)).words(
      " still allocated at the end; reachability was not checked, so some may still be in use.");
}

// Names the site to fix, and returns the scope it is in (kNone outside scopes).
StringId leak_suggestion(const Profile& profile, const Unfreed& unfreed, Sentence& s) {
  const std::string_view owner =
      ", or give them an owner that frees them (a std::unique_ptr, a container, an RAII wrapper).";
  if (const LeakSite* site = largest_unfreed_site(profile, unfreed.confirmed)) {
    s.words("Free the blocks allocated ");
    if (site->caller != kNone) s.words("at ").words(frame_label(profile, site->caller)).words(" ");
    append_where(s, profile, site->node);
    s.words(" (").bytes(site->bytes).words(" in ").count(site->blocks, "block", "blocks").words(")").words(owner);
    return site->node < profile.call_tree.size() && site->node != 0 ? profile.call_tree[site->node].name : kNone;
  }
  const std::uint32_t node = node_retaining_most(profile);
  s.words("Free the blocks allocated ");
  append_where(s, profile, node);
  if (node != 0) s.words(" (").bytes(profile.call_tree[node].heap.retained_bytes).words(" still live)");
  s.words(owner);
  return node != 0 ? profile.call_tree[node].name : kNone;
}

std::optional<Bottleneck> leak_finding(const Profile& profile, const MemoryFindingOptions& options) {
  const Unfreed unfreed = unfreed_heap(profile);
  const double share = share_of(unfreed.bytes, profile.heap.alloc_bytes);
  if (!(share > options.leak_share)) return std::nullopt;  // also false for NaN: nothing allocated
  Bottleneck b;
  b.kind = BottleneckKind::MemoryLeak;
  b.severity = severity_for(share, options.leak_share);
  b.value = share;
  b.threshold = options.leak_share;
  b.description = leak_description(profile, unfreed, share, options.leak_share);
  b.scope = leak_suggestion(profile, unfreed, b.suggestion);
  return b;
}

// ---- named counters -------------------------------------------------------------------
//
// A counter is what the program says it holds under a name (record_alloc/record_free), not
// what malloc saw: it has no scope, no call stack and no reachability, so its findings name
// the counter and suggest what can be done from its own numbers.

std::uint64_t outstanding_bytes(const MemoryCounter& c) {
  return c.alloc_bytes > c.freed_bytes ? c.alloc_bytes - c.freed_bytes : 0;
}

Sentence counter_hotspot_description(const MemoryCounter& c, std::uint64_t held, bool at_peak, std::uint64_t peak,
                                     double share, double threshold) {
  Sentence s;
  if (at_peak) {
    s.words("Memory counter ").scope(c.name).words(" held ").bytes(held).key()
        .words(" when the memory counters together reached their peak of ").bytes(peak).words(", ").share(share)
        .words(" of it (threshold ").share(threshold).words(")");
    if (c.peak_bytes > held) s.words("; its own peak was ").bytes(c.peak_bytes);
    return s.words(".");
  }
  // Without the timeline, its own peak is the most it can have held at the counters' peak.
  return s.words("Memory counter ").scope(c.name).words(" peaked at ").bytes(held).key().words(", ").share(share)
      .words(" of the ").bytes(peak).words(" peak of the memory counters together (threshold ").share(threshold)
      .words("; the memory timeline was not kept, so its own peak stands for what it held at theirs).");
}

Sentence counter_hotspot_suggestion(const MemoryCounter& c) {
  Sentence s;
  if (c.alloc_count > 1 && c.alloc_bytes >= 2 * c.peak_bytes) {
    return s.words("It allocated ").bytes(c.alloc_bytes).words(" in ")
        .count(c.alloc_count, "allocation", "allocations").words(", far more than the ").bytes(c.peak_bytes)
        .words(" it ever held at once: allocate its buffers once and reuse them across iterations, or take them "
               "from a pool, so that the peak holds only what is in use.");
  }
  return s.words("Lower what ").scope(c.name)
      .words(" holds at the peak: free its buffers as soon as they are no longer needed (and ")
      .code("record_free")
      .words(" them then), process smaller pieces (micro-batches, chunks), recompute instead of keeping where "
             "that costs little (activation checkpointing), or store it in a smaller element type (fp16, bf16) where "
             "accuracy allows.");
}

void add_counter_hotspots(const Profile& profile, const MemoryFindingOptions& options, std::vector<Bottleneck>& out) {
  const std::uint64_t peak = profile.memory.peak_bytes;
  if (peak == 0) return;
  const std::optional<std::vector<std::uint64_t>> at_peak = counter_bytes_at_peak(profile);
  std::vector<std::pair<const MemoryCounter*, std::uint64_t>> hot;  // counter, bytes judged
  for (std::size_t i = 0; i < profile.memory_counters.size(); ++i) {
    const MemoryCounter& c = profile.memory_counters[i];
    const std::uint64_t held = at_peak ? (*at_peak)[i] : c.peak_bytes;
    if (share_of(held, peak) > options.hotspot_share) hot.emplace_back(&c, held);
  }
  std::sort(hot.begin(), hot.end(), [&](const auto& a, const auto& b) {
    if (a.second != b.second) return a.second > b.second;
    return profile.str(a.first->name) < profile.str(b.first->name);
  });
  for (const auto& [counter, held] : hot) {
    const double share = share_of(held, peak);
    Bottleneck b;
    b.kind = BottleneckKind::MemoryHotspot;
    b.severity = severity_for(share, options.hotspot_share);
    b.counter = counter->name;
    b.value = share;
    b.threshold = options.hotspot_share;
    b.description = counter_hotspot_description(*counter, held, at_peak.has_value(), peak, share, options.hotspot_share);
    b.suggestion = counter_hotspot_suggestion(*counter);
    out.push_back(std::move(b));
  }
}

void add_counter_leaks(const Profile& profile, const MemoryFindingOptions& options, std::vector<Bottleneck>& out) {
  std::vector<const MemoryCounter*> kept;
  for (const MemoryCounter& c : profile.memory_counters) {
    // Also false for NaN: nothing allocated.
    if (share_of(outstanding_bytes(c), c.alloc_bytes) > options.leak_share) kept.push_back(&c);
  }
  std::sort(kept.begin(), kept.end(), [&](const MemoryCounter* a, const MemoryCounter* b) {
    if (outstanding_bytes(*a) != outstanding_bytes(*b)) return outstanding_bytes(*a) > outstanding_bytes(*b);
    return profile.str(a->name) < profile.str(b->name);
  });
  for (const MemoryCounter* c : kept) {
    const std::uint64_t outstanding = outstanding_bytes(*c);
    const double share = share_of(outstanding, c->alloc_bytes);
    // One allocation, never freed: how a buffer that lives for the whole run by design (model
    // weights, a cache set up once) looks, as much as a leak; worth knowing, not more. A leak
    // proper grows: several allocations, part of them never freed.
    const bool held_once = c->alloc_count == 1 && c->free_count == 0;
    Bottleneck b;
    b.kind = BottleneckKind::MemoryLeak;
    b.severity = held_once ? BottleneckSeverity::Low : severity_for(share, options.leak_share);
    b.counter = c->name;
    b.value = share;
    b.threshold = options.leak_share;
    b.description.words("Memory counter ").scope(c->name).words(" still held ").bytes(outstanding).key()
        .words(" at the end, ").share(share).words(" of the ").bytes(c->alloc_bytes)
        .words(" it allocated (threshold ").share(options.leak_share).words("): ")
        .count(c->alloc_count, "allocation", "allocations").words(" and ")
        .count(c->free_count, "free", "frees").words(" were recorded.");
    if (held_once) {
      b.suggestion.words("Its only allocation was never freed. If it lives for the whole run by design (model "
                         "weights, a cache set up once), call ")
          .code("record_free").words(" when it is released so that the counter ends at zero; otherwise free it "
                                     "as soon as it is no longer needed.");
    } else {
      b.suggestion.words("If the buffers of ").scope(c->name).words(" are freed, ").code("record_free")
          .words(" each of them too, so that the counter says what is held; if they are kept, it grows with every "
                 "allocation: bound it (keep a fixed window, drop what is no longer needed) or give each buffer an "
                 "owner that frees it (a std::unique_ptr, a container, an RAII wrapper).");
    }
    out.push_back(std::move(b));
  }
}

// ---- verdict --------------------------------------------------------------------------

Sentence growth_reason(std::string_view what, const MemoryGrowth& g, bool again) {
  Sentence s;
  s.words(what).words(" grew steadily");
  if (again) {
    s.words(" too");
  } else {
    s.words(" over the second half of the run (").duration(g.from_ns).words(" to ").duration(g.to_ns).words(")");
  }
  return s.words(": by ").bytes(static_cast<std::int64_t>(std::llround(g.total_bytes))).words(", ")
      .byte_rate(g.bytes_per_second);
}

Sentence leak_reasons(const LeakVerdict& v) {
  std::vector<Sentence> reasons;
  const Unfreed& u = v.unfreed;
  if (u.bytes > 0 || u.blocks > 0) {
    Sentence s;
    s.count(u.blocks, "block", "blocks").words(" (").bytes(u.bytes).key().words(")");
    if (u.confirmed) {
      s.words(" ").words(were(u.blocks)).words(" unreachable at the end");
    } else {
      s.words(" allocated inside scopes ").words(were(u.blocks))
          .words(" still live at the end (reachability was not checked)");
    }
    reasons.push_back(std::move(s));
  }
  if (v.heap.steady) reasons.push_back(growth_reason("heap in use", v.heap, false));
  if (v.rss.steady) reasons.push_back(growth_reason("RSS", v.rss, v.heap.steady));
  Sentence joined;
  for (std::size_t i = 0; i < reasons.size(); ++i) {
    if (i > 0) joined.words("; ");
    joined.append(reasons[i]);
  }
  return joined;
}

Sentence no_leak_reasons(const Profile& profile, const LeakVerdict& v) {
  Sentence s;
  if (!v.unfreed.confirmed) {
    s.words("no block allocated inside a scope was still live at the end");
  } else if (profile.heap.current_blocks == 0) {
    s.words("every block was freed");
  } else {
    s.words("every block still allocated at the end is reachable");
  }
  if (v.heap.assessed) {
    return s.words(", and neither heap in use nor RSS grew steadily over the second half of the run");
  }
  return s.words(", and the timeline has too few samples (").count(v.heap.samples)
      .words(" in its second half) to judge growth");
}

// ---- facts ----------------------------------------------------------------------------

Sentence tracked_by(const HeapSummary& h) {
  if (h.source == "preload") return Sentence().code("nnprof record --memory").words(" (preload agent)");
  if (h.source == "in-process") return Sentence().code("nnprof::MemoryTracking").words(" (in-process)");
  return Sentence().words(h.source.empty() ? "unknown" : h.source);
}

Sentence peak_fact(const Profile& profile) {
  const HeapSummary& h = profile.heap;
  Sentence s;
  s.bytes(h.peak_bytes).key().words(" at ").duration(h.peak_time_ns).words(" after the session start");
  if (h.peak_thread != kNone) s.words(", on ").words(thread_label(profile, h.peak_thread));
  s.words(", ");
  append_where(s, profile, h.peak_node);
  if (h.peak_resolution_bytes > 0) s.words(" (exact to within ").bytes(h.peak_resolution_bytes).words(")");
  return s;
}

// "8.00 MiB in 3 blocks <what>", or "none <what>".
Sentence& append_blocks(Sentence& s, std::uint64_t bytes, std::uint64_t blocks, std::string_view what) {
  if (blocks == 0 && bytes == 0) return s.words("none ").words(what);
  return s.bytes(bytes).words(" in ").count(blocks, "block", "blocks").words(" ").words(what);
}

Sentence end_fact(const HeapSummary& h) {
  Sentence s;
  if (h.current_blocks == 0 && h.current_bytes == 0) return s.words("nothing: every block was freed");
  s.bytes(h.current_bytes).words(" in ").count(h.current_blocks, "block", "blocks");
  if (!h.reachability_checked) return s.words(" (reachability not checked)");
  append_blocks(s.words(": "), h.leaked_bytes, h.leaked_blocks, "leaked (unreachable)");
  return append_blocks(s.words(", "), h.reachable_bytes, h.reachable_blocks, "still reachable");
}

Sentence timeline_fact(const Profile& profile) {
  Sentence s;
  s.count(profile.heap_samples.size(), "sample", "samples");
  if (profile.heap.sample_interval_ns > 0) s.words(", every ").duration(profile.heap.sample_interval_ns);
  return s;
}

Sentence stacks_fact(const HeapSummary& h) {
  Sentence s;
  if (h.stack_sample_bytes == 0) return s.words("not kept (the calling site of each allocation only)");
  if (h.stack_sample_bytes == 1) return s.words("kept for every allocation");
  return s.words("sampled, one per ").bytes(h.stack_sample_bytes).words(" allocated on average");
}

}  // namespace

std::vector<HeapAllocator> top_allocators(const Profile& profile, std::size_t n) {
  std::vector<HeapAllocator> rows;
  for (const ScopeStats* scope : top_by_heap_bytes(profile, n)) {
    const HeapAttribution& h = scope->heap;
    rows.push_back({scope, h.alloc_bytes, h.alloc_count, heap_bytes_per_call(*scope), h.retained_bytes,
                    h.retained_blocks, h.peak_live_bytes, share_of(h.alloc_bytes, profile.heap.alloc_bytes)});
  }
  return rows;
}

std::vector<Bottleneck> memory_bottlenecks(const Profile& profile, const MemoryFindingOptions& options) {
  std::vector<Bottleneck> result;
  if (!profile.heap.tracked) return result;
  add_hotspots(profile, options, result);
  if (std::optional<Bottleneck> leak = leak_finding(profile, options)) result.push_back(std::move(*leak));
  std::stable_sort(result.begin(), result.end(),
                   [](const Bottleneck& a, const Bottleneck& b) { return a.severity > b.severity; });
  return result;
}

Sentence no_memory_bottlenecks(const MemoryFindingOptions& options) {
  return Sentence()
      .words("No memory bottleneck: no scope held more than ").share(options.hotspot_share)
      .words(" of the heap peak, and no more than ").share(options.leak_share)
      .words(" of the bytes allocated were left unfreed.");
}

std::optional<std::vector<std::uint64_t>> counter_bytes_at_peak(const Profile& profile) {
  const std::uint64_t peak = profile.memory.peak_bytes;
  const std::size_t counters = profile.memory_counters.size();
  if (peak == 0 || profile.memory_events.empty()) return std::nullopt;
  // First pass: the event after which the sum first reached its highest value. Two passes
  // rather than a copy of every counter at each new high, which a run whose memory only grows
  // would make at every event.
  std::int64_t total = 0;
  std::int64_t highest = 0;
  std::size_t last = 0;
  for (std::size_t i = 0; i < profile.memory_events.size(); ++i) {
    const MemoryEvent& e = profile.memory_events[i];
    if (e.counter >= counters) return std::nullopt;
    total += e.delta_bytes;
    if (total > highest) {
      highest = total;
      last = i;
    }
  }
  if (highest <= 0 || static_cast<std::uint64_t>(highest) != peak) return std::nullopt;
  std::vector<std::int64_t> current(counters, 0);
  for (std::size_t i = 0; i <= last; ++i) current[profile.memory_events[i].counter] += profile.memory_events[i].delta_bytes;
  std::vector<std::uint64_t> held(counters, 0);
  // A counter below zero (freed more than it recorded as allocated) holds nothing.
  for (std::size_t i = 0; i < counters; ++i) held[i] = current[i] > 0 ? static_cast<std::uint64_t>(current[i]) : 0;
  return held;
}

std::vector<Bottleneck> counter_bottlenecks(const Profile& profile, const MemoryFindingOptions& options) {
  std::vector<Bottleneck> result;
  add_counter_hotspots(profile, options, result);
  add_counter_leaks(profile, options, result);
  return result;
}

Unfreed unfreed_heap(const Profile& profile) {
  const HeapSummary& h = profile.heap;
  if (h.reachability_checked) return {h.leaked_bytes, h.leaked_blocks, true};
  Unfreed u;
  for (std::size_t i = 1; i < profile.call_tree.size(); ++i) {
    u.bytes += profile.call_tree[i].heap.retained_bytes;
    u.blocks += profile.call_tree[i].heap.retained_blocks;
  }
  return u;
}

MemoryGrowth memory_growth(const std::vector<HeapSample>& samples, std::uint64_t HeapSample::*series,
                           const MemoryFindingOptions& options) {
  MemoryGrowth g;
  if (samples.empty()) return g;
  const std::uint64_t first = samples.front().time_ns;
  const std::uint64_t middle = first + (samples.back().time_ns - first) / 2;
  std::vector<std::pair<double, double>> points;  // (seconds since from_ns, bytes)
  for (const HeapSample& sample : samples) {
    if (sample.time_ns < middle) continue;
    if (points.empty()) g.from_ns = sample.time_ns;
    g.to_ns = sample.time_ns;
    points.emplace_back(static_cast<double>(sample.time_ns - g.from_ns) / 1e9, static_cast<double>(sample.*series));
  }
  g.samples = points.size();
  if (points.size() < std::max<std::size_t>(options.growth_min_samples, 2) || g.to_ns == g.from_ns) return g;
  const auto n = static_cast<double>(points.size());
  double mean_x = 0.0;
  double mean_y = 0.0;
  for (const auto& [x, y] : points) {
    mean_x += x / n;
    mean_y += y / n;
  }
  double sxx = 0.0;
  double sxy = 0.0;
  double syy = 0.0;
  for (const auto& [x, y] : points) {
    sxx += (x - mean_x) * (x - mean_x);
    sxy += (x - mean_x) * (y - mean_y);
    syy += (y - mean_y) * (y - mean_y);
  }
  g.assessed = true;
  g.bytes_per_second = sxy / sxx;
  g.start_bytes = mean_y - g.bytes_per_second * mean_x;
  g.total_bytes = g.bytes_per_second * static_cast<double>(g.to_ns - g.from_ns) / 1e9;
  g.fit = syy > 0.0 ? sxy * sxy / (sxx * syy) : 0.0;
  g.steady = g.total_bytes > 0.0 && g.total_bytes >= static_cast<double>(options.growth_min_bytes) &&
             g.total_bytes >= options.growth_share * std::max(g.start_bytes, 0.0) && g.fit >= options.growth_min_fit;
  return g;
}

LeakVerdict leak_verdict(const Profile& profile, const MemoryFindingOptions& options) {
  LeakVerdict v;
  const HeapSummary& h = profile.heap;
  v.unfreed = unfreed_heap(profile);
  v.heap = memory_growth(profile.heap_samples, &HeapSample::heap_bytes, options);
  v.rss = memory_growth(profile.heap_samples, &HeapSample::rss_bytes, options);
  v.rss_initial_bytes = h.rss_initial_bytes;
  v.rss_peak_bytes = h.rss_peak_bytes;
  v.rss_final_bytes = h.rss_final_bytes;
  v.memory_leak_detected = v.unfreed.bytes > 0 || v.unfreed.blocks > 0 || v.heap.steady || v.rss.steady;
  if (v.memory_leak_detected) {
    v.explanation.words("Memory leak detected: ").append(leak_reasons(v)).words(".");
  } else {
    v.explanation.words("No memory leak detected: ").append(no_leak_reasons(profile, v)).words(".");
  }
  return v;
}

std::vector<Fact> heap_facts(const Profile& profile) {
  const HeapSummary& h = profile.heap;
  std::vector<Fact> facts;
  facts.push_back({"Tracked by", tracked_by(h)});
  facts.push_back({"Allocated", Sentence()
                                    .bytes(h.alloc_bytes).words(" in ")
                                    .count(h.alloc_count, "allocation", "allocations").words("; ")
                                    .bytes(h.free_bytes).words(" freed in ").count(h.free_count, "free", "frees")});
  facts.push_back({"Peak", peak_fact(profile)});
  facts.push_back({"At the end", end_fact(h)});
  facts.push_back({"RSS", Sentence()
                              .words("initial ").bytes(h.rss_initial_bytes).words(", peak ")
                              .bytes(h.rss_peak_bytes).words(" (VmHWM), final ").bytes(h.rss_final_bytes)});
  facts.push_back({"Timeline", timeline_fact(profile)});
  facts.push_back({"Call stacks", stacks_fact(h)});
  facts.push_back({"Not tracked",
                   Sentence()
                       .count(h.untracked_frees, "free of a block allocated before tracking started",
                              "frees of blocks allocated before tracking started")
                       .words(", ")
                       .count(h.untracked_allocs, "allocation the live-block table could not hold",
                              "allocations the live-block table could not hold")});
  return facts;
}

Sentence& append_node_path(Sentence& sentence, const Profile& profile, std::uint32_t node) {
  std::vector<StringId> names;
  // Bounded by the depth of a well-formed tree; a malformed parent chain stops at the cap.
  for (std::uint32_t n = node; n != 0 && n < profile.call_tree.size() && names.size() <= profile.call_tree.size();
       n = profile.call_tree[n].parent) {
    names.push_back(profile.call_tree[n].name);
  }
  if (names.empty()) return sentence.words("outside any scope");
  for (auto it = names.rbegin(); it != names.rend(); ++it) {
    if (it != names.rbegin()) sentence.words(" > ");
    sentence.scope(*it);
  }
  return sentence;
}

std::string scope_path_label(const Profile& profile, std::uint32_t node) {
  if (node == 0 || node >= profile.call_tree.size()) return "[outside any scope]";
  return profile.node_path(node);
}

std::string frame_label(const Profile& profile, std::uint32_t frame) {
  if (frame >= profile.frames.size()) return "unknown";
  const StackFrame& f = profile.frames[frame];
  const std::string what =
      f.function != kNone ? profile.str(f.function) : fmt::format("{:#x}", f.address);
  if (f.file != kNone) {
    return f.line > 0 ? fmt::format("{} ({}:{})", what, profile.str(f.file), f.line)
                      : fmt::format("{} ({})", what, profile.str(f.file));
  }
  if (f.module != kNone) return fmt::format("{} ({})", what, profile.str(f.module));
  return what;
}

std::string thread_label(const Profile& profile, std::uint32_t thread) {
  if (thread >= profile.threads.size()) return fmt::format("thread {}", thread);
  const ThreadInfo& t = profile.threads[thread];
  return fmt::format("{} (TID {})", t.name.empty() ? "[unnamed]" : t.name, t.os_tid);
}

}  // namespace nnprof::analysis
