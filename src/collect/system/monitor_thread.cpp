#include "collect/system/monitor_thread.hpp"

#include <pthread.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <functional>
#include <limits>
#include <map>
#include <new>
#include <string>
#include <string_view>
#include <utility>

#include "collect/system/energy_model.hpp"
#include "collect/system/nvml_probe.hpp"
#include "collect/system/procfs_probe.hpp"
#include "collect/system/rapl_probe.hpp"
#include "nnprof/detail/clock_read.hpp"
#include "record/internal_allocations.hpp"

namespace nnprof::detail {

namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
// Below this, reading a few dozen procfs files every tick becomes a measurable load of its own.
constexpr std::uint32_t kMinimumIntervalMs = 10;

/// The probes a monitor samples unless a test gives its own.
std::vector<std::unique_ptr<system::Probe>> default_probes(const SystemOptions& options) {
  std::vector<std::unique_ptr<system::Probe>> probes = system::make_procfs_probes(options);
  probes.push_back(system::make_rapl_probe(options));
  if (auto nvml = system::make_nvml_probe(options)) probes.push_back(std::move(nvml));
  return probes;
}

SystemOptions clamped(SystemOptions options) {
  options.interval_ms = std::max(options.interval_ms, kMinimumIntervalMs);
  return options;
}

}  // namespace

/// The columns sampled so far: every track holds one value per sample time, NaN where the
/// track was not set at that sample. Probes write into the current column through the sink.
struct SystemMonitorThread::Tracks final : system::SampleSink {
  std::vector<std::uint64_t> sample_ns;
  std::map<std::string, SystemTrack, std::less<>> by_name;  // sorted by name, as the profile wants them
  std::vector<std::string> notes;

  /// Opens the column of a sample taken at `now_ns`, every track NaN until set.
  void begin(std::uint64_t now_ns) {
    sample_ns.push_back(now_ns);
    for (auto& [name, track] : by_name) track.values.push_back(kNaN);
  }

  void set(std::string_view name, std::string_view unit, double value) override {
    if (sample_ns.empty()) return;  // outside a sample: nothing to set it on
    auto it = by_name.find(name);
    if (it == by_name.end()) {
      // A track that appears now (a device plugged in, a rate's first interval): NaN before.
      SystemTrack track{std::string(name), std::string(unit), std::vector<double>(sample_ns.size(), kNaN)};
      it = by_name.emplace(track.name, std::move(track)).first;
    }
    it->second.values.back() = value;
  }

  void note(std::string_view message) override {
    if (std::find(notes.begin(), notes.end(), message) == notes.end()) notes.emplace_back(message);
  }

  /// Drops the first `samples` columns (older samples a window holds already). Moves the rest
  /// down in place: never allocates.
  void drop_front(std::size_t samples) noexcept {
    samples = std::min(samples, sample_ns.size());
    if (samples == 0) return;
    sample_ns.erase(sample_ns.begin(), sample_ns.begin() + static_cast<std::ptrdiff_t>(samples));
    for (auto& [name, track] : by_name) {
      const std::size_t n = std::min(samples, track.values.size());
      track.values.erase(track.values.begin(), track.values.begin() + static_cast<std::ptrdiff_t>(n));
    }
  }

  /// Drops the columns after the first `samples` (a sample that failed part way, out of
  /// memory), so that every track holds one value per sample again. Shrinking never allocates.
  void truncate(std::size_t samples) noexcept {
    if (sample_ns.size() > samples) sample_ns.resize(samples);
    for (auto& [name, track] : by_name)
      if (track.values.size() > samples) track.values.resize(samples);
  }
};

SystemMonitorThread::SystemMonitorThread(const SystemOptions& options)
    : SystemMonitorThread(options, default_probes(options)) {}

SystemMonitorThread::SystemMonitorThread(const SystemOptions& options, std::vector<std::unique_ptr<system::Probe>> probes)
    : options_(clamped(options)),
      limits_(system::read_system_limits(options_)),
      probes_(std::move(probes)),
      tracks_(std::make_unique<Tracks>()),
      owner_pid_(getpid()) {}

SystemMonitorThread::~SystemMonitorThread() { stop(); }

void SystemMonitorThread::start() {
  InternalAllocations internal;  // the monitor's columns are nnprof's, not the program's
  {
    std::lock_guard lock(mu_);
    if (started_ || stopping_) return;
    started_ = true;
    sample_locked();
  }
  thread_ = std::thread([this] { run(); });
}

void SystemMonitorThread::stop() noexcept {
  InternalAllocations internal;
  if (getpid() != owner_pid_) {
    // A forked child: the thread exists only in the parent. Joining it would wait forever,
    // detaching it is a call on a thread this process does not have (clang's TSan stops on
    // it), and destroying a joinable std::thread would terminate; so the handle is forgotten
    // by reusing its storage, which the language allows without running its destructor.
    ::new (&thread_) std::thread();
    return;
  }
  {
    std::lock_guard lock(mu_);
    if (stopping_) return;
    stopping_ = true;
  }
  cv_.notify_all();
  if (thread_.joinable()) thread_.join();
  std::lock_guard lock(mu_);
  // The state at the end, so that the last interval is part of the result.
  if (started_) sample_locked();
  stopped_ = true;
}

void SystemMonitorThread::sample_now() {
  InternalAllocations internal;
  std::lock_guard lock(mu_);
  sample_locked();
}

void SystemMonitorThread::sample_locked() {
  // All probes read at one time, so that their rates cover the same interval.
  const std::uint64_t now_ns = monotonic_ns();
  const std::size_t samples_before = tracks_->sample_ns.size();
  try {
    tracks_->begin(now_ns);
    for (const auto& probe : probes_) probe->sample(now_ns, *tracks_);
  } catch (...) {
    // Out of memory: this sample is lost, the ones before are kept whole.
    tracks_->truncate(samples_before);
  }
}

void SystemMonitorThread::run() {
  // Named so that a CPU profile or `top -H` shows what it is; its allocations are nnprof's.
  pthread_setname_np(pthread_self(), "nnprof-system");
  InternalAllocations internal;
  const auto interval = std::chrono::milliseconds(options_.interval_ms);
  std::unique_lock lock(mu_);
  // Deadlines on a fixed grid, so that the time spent reading does not stretch the interval.
  auto next = std::chrono::steady_clock::now() + interval;
  while (!stopping_) {
    if (cv_.wait_until(lock, next, [this] { return stopping_; })) break;
    sample_locked();
    next += interval;
    // Behind by a whole interval (the machine was suspended, the thread starved): start the
    // grid again rather than sample in a burst.
    if (const auto now = std::chrono::steady_clock::now(); next <= now) next = now + interval;
  }
}

void SystemMonitorThread::snapshot_system(RawSystem& out) {
  InternalAllocations internal;
  std::unique_lock lock(mu_, std::defer_lock);
  if (getpid() == owner_pid_) {
    lock.lock();
  } else if (!lock.try_lock()) {
    // A forked child whose parent's monitor thread held the lock at the fork: it is never
    // released here, so the child's snapshot goes without the system part.
    return;
  }
  copy_locked(0, tracks_->sample_ns.size(), out);
  // The modelled energy of dropped samples, also where the samples kept price no interval (a
  // last sample taken right after the one before has no utilisation yet).
  for (const auto& entry : discarded_modelled_) {
    const EnergyDomain& gone = entry.second;  // (no structured binding: clang 14 cannot capture one)
    const auto same = std::find_if(out.data.energy.begin(), out.data.energy.end(), [&](const EnergyDomain& d) {
      return d.method == EnergyMethod::Modelled && d.name == gone.name;
    });
    if (same != out.data.energy.end()) {
      same->joules += gone.joules;
    } else {
      EnergyDomain carried = gone;
      if (out.data.track(carried.track) == nullptr) carried.track.clear();  // its power track is not in the samples kept
      out.data.energy.push_back(std::move(carried));
    }
  }
}

void SystemMonitorThread::snapshot_between(std::uint64_t begin_ns, std::uint64_t end_ns, RawSystem& out) {
  InternalAllocations internal;
  std::lock_guard lock(mu_);
  const std::vector<std::uint64_t>& t = tracks_->sample_ns;
  // Sample i's values cover (t[i-1], t[i]]: the first that overlaps [begin, end] is the first
  // after `begin`, the last the first at or after `end`; the one before the first opens it.
  const std::size_t first = static_cast<std::size_t>(std::upper_bound(t.begin(), t.end(), begin_ns) - t.begin());
  const std::size_t last = static_cast<std::size_t>(std::lower_bound(t.begin(), t.end(), end_ns) - t.begin());
  const std::size_t from = first > 0 ? first - 1 : 0;
  const std::size_t to = std::min(t.size(), last + 1);
  copy_locked(from, std::max(from, to), out);
}

void SystemMonitorThread::discard_before(std::uint64_t ns) noexcept {
  if (getpid() != owner_pid_) return;  // a forked child: the lock may be the parent's
  std::lock_guard lock(mu_);
  const std::vector<std::uint64_t>& times = tracks_->sample_ns;
  const auto first_kept = std::lower_bound(times.begin(), times.end(), ns);
  const auto older = static_cast<std::size_t>(first_kept - times.begin());
  if (older <= 1) return;  // nothing but the last sample before `ns`, which stays
  InternalAllocations internal;
  try {
    // The modelled energy of the intervals that go: up to the sample that stays, where the
    // intervals kept begin.
    RawSystem gone;
    copy_locked(0, older, gone);
    for (const EnergyDomain& d : gone.data.energy) {
      if (d.method != EnergyMethod::Modelled) continue;
      const auto [it, first] = discarded_modelled_.try_emplace(d.name, d);
      if (!first) it->second.joules += d.joules;
    }
  } catch (...) {
    return;  // out of memory: keep every sample rather than lose their energy
  }
  tracks_->drop_front(older - 1);
}

void SystemMonitorThread::sample_at_boundary() noexcept {
  if (getpid() != owner_pid_) return;  // a forked child: the samples are the parent's
  InternalAllocations internal;
  std::lock_guard lock(mu_);
  if (!started_ || stopped_) return;
  const std::uint64_t now = monotonic_ns();
  const std::vector<std::uint64_t>& t = tracks_->sample_ns;
  if (!t.empty() && now - t.back() < std::uint64_t{kMinimumIntervalMs} * 1'000'000) return;
  sample_locked();
}

void SystemMonitorThread::copy_locked(std::size_t from, std::size_t to, RawSystem& out) const {
  SystemProfile& data = out.data;
  data.monitored = true;
  data.interval_ms = options_.interval_ms;
  data.limits = limits_;
  data.sample_ns.assign(tracks_->sample_ns.begin() + static_cast<std::ptrdiff_t>(from),
                        tracks_->sample_ns.begin() + static_cast<std::ptrdiff_t>(to));
  data.sample_scope.clear();
  data.scope_thread = kNone;
  data.tracks.clear();
  data.tracks.reserve(tracks_->by_name.size());
  for (const auto& [name, track] : tracks_->by_name)
    data.tracks.push_back(SystemTrack{track.name, track.unit,
                                      std::vector<double>(track.values.begin() + static_cast<std::ptrdiff_t>(from),
                                                          track.values.begin() + static_cast<std::ptrdiff_t>(to))});
  data.energy.clear();
  for (const auto& probe : probes_) probe->energy(data.energy);
  // Measured domains first, then modelled ones, each in the probes' order.
  std::stable_partition(data.energy.begin(), data.energy.end(),
                        [](const EnergyDomain& d) { return d.method != EnergyMethod::Modelled; });
  data.notes = tracks_->notes;
  // What no counter measured (a CPU without readable RAPL, memory), modelled and labelled so.
  system::add_modelled_energy(data, options_);
  out.scope_thread_name = options_.scope_thread;
}

}  // namespace nnprof::detail
