// What a session hands to the model: per-thread call trees and records, still in ticks.
// The record layer fills it; src/model turns it into a Profile.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "nnprof/clock.hpp"
#include "nnprof/detail/thread_state.hpp"

namespace nnprof::detail {

struct RawNode {
  const SourceLocation* site = nullptr;
  std::uint32_t parent = 0;
  std::uint32_t depth = 0;
  std::uint64_t count = 0, total = 0, self = 0, min = 0, max = 0, shift = 0;
  std::int64_t sum_dev = 0;
  double sum_dev_sq = 0.0;
  std::uint64_t alloc_bytes = 0, alloc_count = 0, free_bytes = 0, free_count = 0;
  /// Non-empty histogram buckets as (row * kHistogramSubBuckets + sub, count), ascending.
  std::vector<std::pair<std::uint32_t, std::uint64_t>> buckets;
};

enum class ThreadEventKind : std::uint8_t { StopWithoutStart, ImplicitlyClosed, NegativeMemory };

struct RawThreadEvent {
  ThreadEventKind kind;
  const SourceLocation* site;  ///< the scope (or counter) concerned
  std::uint64_t count;
};

struct RawThread {
  std::uint32_t index = 0;
  std::int64_t os_tid = 0;
  std::string name;
  bool exited = false;
  std::vector<RawNode> nodes;          ///< [0] is the root
  std::vector<Record> records;         ///< in the order written
  std::vector<std::uint32_t> open_nodes;  ///< scopes still open, outermost first
  std::uint64_t dropped_spans = 0, dropped_events = 0, too_deep = 0, tree_full = 0;
  std::vector<RawThreadEvent> events;
};

struct RawCounter {
  std::string name;
  std::int64_t current = 0;
  std::uint64_t peak = 0, alloc_bytes = 0, freed_bytes = 0, alloc_count = 0, free_count = 0;
  std::uint64_t items = 0;
};

struct RawSnapshot {
  ClockPair start;
  ClockPair now;
  std::int64_t unix_start_ns = 0;
  double nominal_ns_per_tick = 1.0;
  std::uint64_t memory_cap_bytes = 0;
  bool flight_recorder = false;
  bool keep_spans = true;
  double overhead_ticks_per_scope = 0.0;
  const SourceLocation* internal_site = nullptr;  ///< calibration scope, excluded from reports
  std::vector<RawThread> threads;
  std::vector<RawCounter> counters;  ///< indexed by the name id in memory records
  std::uint64_t spans_overwritten = 0;
  std::uint64_t hot_path_chunks = 0;  ///< buffers a recording thread had to allocate itself
  std::uint64_t events_overwritten = 0;
  std::int64_t memory_current = 0;
  std::uint64_t memory_peak = 0;
  std::uint64_t memory_peak_ticks = 0;
};

}  // namespace nnprof::detail
