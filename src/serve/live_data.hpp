// The live data as JSON: one frame per tick for the page (the same frame for every page), and
// the /api/v1 documents. Built from a statistics snapshot with the report's own analyses
// (report::analyse: hot paths, call tree, bottlenecks, heap, system), never recomputed here.
#pragma once

#include <cstddef>
#include <cstdint>

#include <nlohmann/json.hpp>

#include "serve/prometheus.hpp"
#include "nnprof/profile.hpp"

namespace nnprof::serve {

struct LiveFrameOptions {
  std::uint64_t window_ns = 10'000'000'000;  ///< the flame graph and hot functions cover the last this much
  std::size_t hot_rows = 25;
  std::size_t tree_rows = 150;
  std::size_t chart_points = 240;            ///< points per chart at most (evenly thinned)
  std::size_t flame_nodes = 1500;            ///< flame graph nodes at most (the smallest are merged away)
};

/// Everything the page shows: the CPU views (flame graph, hot functions, CPU findings) over the
/// last `window_ns`, everything else over the whole run. Keys: "meta", "summary", "hot", "tree", "memory", "system",
/// "metrics", "flame", "functions", "bottlenecks", "anomalies", "trends", "server".
[[nodiscard]] nlohmann::json live_frame(const Profile& profile, const LiveFrameOptions& options,
                                        const ServerStats& server);

/// Every scope's statistics (/api/v1/scopes).
[[nodiscard]] nlohmann::json scopes_json(const Profile& profile);
/// The program's metrics with their summaries (/api/v1/metrics).
[[nodiscard]] nlohmann::json metrics_json(const Profile& profile);
/// Anomalies and trends of a continuous run (/api/v1/anomalies).
[[nodiscard]] nlohmann::json anomalies_json(const Profile& profile);

/// The CPU samples of `profile` taken at or after `from_ns` (session time), with what they
/// refer to (strings, frames, stacks, threads, call tree, the sampling summary): the input of
/// the flame graph and of the pprof endpoint for a window. Cheap: no spans, no heap.
[[nodiscard]] Profile cpu_window(const Profile& profile, std::uint64_t from_ns, std::uint64_t to_ns = UINT64_MAX);

}  // namespace nnprof::serve
