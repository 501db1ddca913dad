// The Prometheus text exposition format (version 0.0.4) of a profile: what /metrics serves.
//
// Conventions (prometheus.io/docs/practices/naming): base units (seconds, bytes, ratios,
// joules), counters end in `_total`, every family has one HELP and one TYPE line before its
// samples, label values are escaped (\\, \", \n). Families:
//   process_*   the standard process metrics (CPU seconds, resident and virtual memory, start
//               time, open and maximum file descriptors) of the serving process; live only
//   nnprof_*    scopes, steps, memory counters, heap, CPU sampling, GPU, system tracks,
//               energy, the program's own metrics, anomalies and trends
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "nnprof/profile.hpp"

namespace nnprof::serve {

/// A label value as the exposition format writes it: backslash, double quote and line feed
/// escaped; invalid UTF-8 replaced.
[[nodiscard]] std::string escape_label_value(std::string_view value);
/// HELP text: backslash and line feed escaped.
[[nodiscard]] std::string escape_help(std::string_view text);
/// `text` as a metric name fragment: [a-zA-Z0-9_], anything else '_', no leading digit.
[[nodiscard]] std::string metric_name_part(std::string_view text);
/// A sample value: shortest round-trip decimal, "NaN", "+Inf", "-Inf".
[[nodiscard]] std::string sample_value(double value);

/// Writes families: each family's HELP and TYPE once, then its samples.
class Exposition {
 public:
  using Labels = std::vector<std::pair<std::string_view, std::string_view>>;
  /// Starts family `name` of `type` ("counter", "gauge", "summary", "untyped"). A family
  /// started twice is an error in the caller (checked in debug builds).
  void family(std::string_view name, std::string_view type, std::string_view help);
  /// One sample of the current family; `suffix` is appended to its name ("_sum", "_count").
  void sample(const Labels& labels, double value, std::string_view suffix = {});
  [[nodiscard]] const std::string& text() const noexcept { return out_; }
  [[nodiscard]] std::string take() noexcept { return std::move(out_); }

 private:
  std::string out_;
  std::string family_;
  std::vector<std::string> started_;
};

/// The standard process metrics, read from /proc/self.
struct ProcessStats {
  double cpu_seconds = 0.0;
  double resident_bytes = 0.0;
  double virtual_bytes = 0.0;
  double start_time_seconds = 0.0;  ///< since the Unix epoch
  double open_fds = 0.0;
  double max_fds = 0.0;
  double threads = 0.0;
};
/// Reads /proc/self/stat, /proc/stat (boot time), /proc/self/fd and RLIMIT_NOFILE; fields that
/// cannot be read stay absent.
[[nodiscard]] std::optional<ProcessStats> read_process_stats();

/// What the server adds about itself.
struct ServerStats {
  std::size_t live_clients = 0;
  std::uint64_t frames_sent = 0;
  std::uint64_t snapshots_taken = 0;
  double snapshot_seconds_total = 0.0;  ///< time spent taking snapshots (the cost of serving)
};

/// Scopes exported at most (most inclusive time first); the rest are counted in
/// nnprof_scopes_not_exported.
inline constexpr std::size_t kMaxExportedScopes = 1000;

/// The whole /metrics page of `profile`, with the process metrics when given (a live server;
/// a saved profile's process is gone) and the server's own figures.
[[nodiscard]] std::string prometheus_text(const Profile& profile, const std::optional<ProcessStats>& process,
                                          const ServerStats& server);

}  // namespace nnprof::serve
