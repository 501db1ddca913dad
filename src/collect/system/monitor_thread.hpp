// The system monitor's thread: every interval it asks each probe for one tick's readings and
// appends them as a column of the counter tracks. It is the session's SystemSource, so every
// snapshot of the profiler it is attached to carries what it sampled; nnprof::SystemMonitor
// (src/api/system.cpp) owns it.
#pragma once

#include <sys/types.h>

#include <condition_variable>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "collect/system/probe.hpp"
#include "nnprof/system.hpp"
#include "record/heap_source.hpp"

namespace nnprof::detail {

class SystemMonitorThread final : public SystemSource {
 public:
  /// Builds the probes `options` asks for; start() begins sampling.
  explicit SystemMonitorThread(const SystemOptions& options);
  /// For tests: samples exactly `probes`.
  SystemMonitorThread(const SystemOptions& options, std::vector<std::unique_ptr<system::Probe>> probes);
  ~SystemMonitorThread() override;
  SystemMonitorThread(const SystemMonitorThread&) = delete;
  SystemMonitorThread& operator=(const SystemMonitorThread&) = delete;

  /// Takes the first sample on the calling thread (so that a result always has one), then
  /// starts the thread.
  void start();
  /// Takes a last sample and joins the thread; idempotent, never throws.
  void stop() noexcept;
  /// Copies the tracks (times in CLOCK_MONOTONIC ns), energy and notes sampled so far.
  void snapshot_system(RawSystem& out) override;
  /// The samples whose interval overlaps [begin_ns, end_ns], with the one before them.
  void snapshot_between(std::uint64_t begin_ns, std::uint64_t end_ns, RawSystem& out) override;
  /// A sample now, unless the last one is younger than the minimum interval (10 ms).
  void sample_at_boundary() noexcept override;
  /// Drops the columns before `ns` but the last of them (SystemSource::discard_before).
  void discard_before(std::uint64_t ns) noexcept override;
  /// Takes one sample now, on the calling thread (tests drive the monitor with it).
  void sample_now();

 private:
  // Implemented in monitor_thread.cpp.
  struct Tracks;
  void run();
  /// One column: every probe read at one CLOCK_MONOTONIC time. Called with mu_ held.
  void sample_locked();
  /// Copies samples [from, to) with the energy and notes into `out`. Called with mu_ held.
  void copy_locked(std::size_t from, std::size_t to, RawSystem& out) const;

  SystemOptions options_;
  SystemLimits limits_;  // read once, at construction
  std::vector<std::unique_ptr<system::Probe>> probes_;
  mutable std::mutex mu_;  // the tracks, the probes' state while sampling or reading energy
  std::unique_ptr<Tracks> tracks_;
  // Modelled energy (by domain name) of the samples discard_before dropped: a full snapshot
  // adds it back, so that the run's modelled joules stay whole (measured ones are counters).
  std::map<std::string, EnergyDomain, std::less<>> discarded_modelled_;
  std::condition_variable cv_;
  // The process that started the thread. A child forked from it has no such thread, and the
  // lock may have been held by it at the fork: the child neither joins, samples nor waits.
  pid_t owner_pid_ = 0;
  bool started_ = false;
  bool stopping_ = false;
  bool stopped_ = false;
  std::thread thread_;
};

}  // namespace nnprof::detail
