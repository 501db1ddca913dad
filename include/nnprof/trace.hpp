// Trace collection in one object: the spans of every scope (and, when asked, CPU samples)
// between start() and stop(), and the critical path of what was recorded.
//
//   auto tracer = nnprof::TracerBuilder().sampling_rate(10000).buffer_size(1 << 20).build();
//   tracer.start();
//   { NNPROF_SCOPE_IN(tracer.profiler(), "forward"); model.forward(input); }
//   nnprof::Trace trace = tracer.stop();
//   trace.save("profile.json");
//   for (const nnprof::CriticalPathOperation& op : trace.analyze_critical_path())
//     std::cout << op.name << ": " << op.duration_us << "us (" << op.percentage << "% of total time)\n";
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "nnprof/config.hpp"
#include "nnprof/cpu_profiler.hpp"
#include "nnprof/critical_path.hpp"
#include "nnprof/profile.hpp"
#include "nnprof/profiler.hpp"

namespace nnprof {

/// The time the critical path spent in one scope name (CriticalPathScope, in microseconds).
struct CriticalPathOperation {
  std::string name;           ///< the scope; "[unscoped]" for time outside any scope, "[handoff]" for hand-overs between threads
  double duration_us = 0.0;   ///< time on the path in this operation
  double percentage = 0.0;    ///< of the path's length, 0..100 (the operations add up to 100)
  std::uint64_t steps = 0;    ///< stretches of the path in it
  std::uint32_t threads = 0;  ///< distinct threads those ran on

  bool operator==(const CriticalPathOperation&) const = default;
};

/// The operations of critical_path(profile, root), longest first. Empty when the profile has
/// no spans. Throws nnprof::Error when `root` names no scope with spans.
NNPROF_API std::vector<CriticalPathOperation> analyze_critical_path(const Profile& profile,
                                                                    std::string_view root = {});

/// A recorded trace: a profile with its spans.
class NNPROF_API Trace {
 public:
  explicit Trace(Profile profile) : profile_(std::move(profile)) {}
  [[nodiscard]] const Profile& profile() const noexcept { return profile_; }
  /// Profile::save: a .nnprof file, or the report the extension names (".json": the JSON
  /// report, ".trace.json": a Chrome trace, ".html", ...).
  void save(const std::string& path) const { profile_.save(path); }
  /// nnprof::analyze_critical_path of the trace.
  [[nodiscard]] std::vector<CriticalPathOperation> analyze_critical_path(std::string_view root = {}) const {
    return nnprof::analyze_critical_path(profile_, root);
  }

 private:
  Profile profile_;
};

class Tracer;

/// Settings of a Tracer.
class NNPROF_API TracerBuilder {
 public:
  /// CPU samples per second taken alongside the spans (1 to 10000); 0, the default: none.
  TracerBuilder& sampling_rate(double hz) noexcept;
  /// Memory for the spans (ProfilerOptions::memory_cap_bytes): past it, later spans are
  /// dropped and counted (statistics stay complete). 256 MiB by default.
  TracerBuilder& buffer_size(std::size_t bytes) noexcept;
  /// Throws nnprof::Error for a sampling rate outside 0..10000 or a buffer of 0 bytes.
  [[nodiscard]] Tracer build() const;

 private:
  double hz_ = 0.0;
  std::size_t buffer_bytes_ = std::size_t{256} << 20;
};

/// Records spans between start() and stop(), into a Profiler of its own: instrument the code
/// with NNPROF_SCOPE_IN(tracer.profiler(), name).
class NNPROF_API Tracer {
 public:
  Tracer(double sampling_hz, std::size_t buffer_bytes);
  ~Tracer();
  Tracer(Tracer&&) noexcept;
  Tracer& operator=(Tracer&&) noexcept;

  /// Starts a fresh recording. Throws nnprof::Error when it runs already, or when CPU sampling
  /// was asked for and another sampler runs.
  void start();
  /// Stops and returns what was recorded since start(). Throws nnprof::Error when not started.
  Trace stop();
  [[nodiscard]] bool running() const noexcept { return running_; }
  /// The profiler to record scopes into; valid from start() until the next start().
  [[nodiscard]] Profiler& profiler();

 private:
  double sampling_hz_ = 0.0;
  std::size_t buffer_bytes_ = 0;
  bool running_ = false;
  std::unique_ptr<Profiler> profiler_;
  std::unique_ptr<CpuProfiler> sampler_;
};

}  // namespace nnprof
