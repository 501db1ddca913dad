// nnprof::SystemMonitor: starts the system monitor's thread (src/collect/system) and either hands
// it to a profiler's session, so that every snapshot carries its tracks, or keeps it to itself.
#include "api/session_of.hpp"
#include "collect/system/monitor_thread.hpp"
#include "nnprof/detail/clock_read.hpp"
#include "nnprof/error.hpp"
#include "nnprof/system.hpp"

namespace nnprof {

namespace {

SystemOptions checked(const SystemOptions& options) {
  if (options.interval_ms < 10)
    throw Error("SystemOptions::interval_ms is " + std::to_string(options.interval_ms) +
                " ms; the system monitor samples at most every 10 ms (its reads of /proc cost ~10 us each)");
  if (options.cpu_tdp_watts < 0.0) throw Error("SystemOptions::cpu_tdp_watts must not be negative");
  return options;
}

}  // namespace

SystemMonitor::SystemMonitor(Profiler& profiler, const SystemOptions& options)
    : thread_(std::make_shared<detail::SystemMonitorThread>(checked(options))), start_ns_(detail::monotonic_ns()) {
  detail::Session& session = detail::session_of(profiler, "the system monitor");
  thread_->start();
  session.set_system_source(thread_);
}

SystemMonitor::SystemMonitor(const SystemOptions& options)
    : thread_(std::make_shared<detail::SystemMonitorThread>(checked(options))), start_ns_(detail::monotonic_ns()) {
  thread_->start();
}

SystemMonitor::~SystemMonitor() { stop(); }

void SystemMonitor::stop() noexcept { thread_->stop(); }

SystemProfile SystemMonitor::result() const {
  detail::RawSystem raw;
  thread_->snapshot_system(raw);
  SystemProfile s = std::move(raw.data);
  for (std::uint64_t& t : s.sample_ns) t = t > start_ns_ ? t - start_ns_ : 0;
  s.sample_scope.assign(s.sample_ns.size(), kNone);
  return s;
}

}  // namespace nnprof
