// The public Profiler: a thin facade over a recording session and the profile builder.
#include "nnprof/profiler.hpp"

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <iostream>
#include <mutex>
#include <stdexcept>

#include <fmt/format.h>

#include "api/live_attach.hpp"
#include "collect/host_info.hpp"
#include "collect/snapshot_facts.hpp"
#include "model/annotation_key.hpp"
#include "model/profile_builder.hpp"
#include "nnprof/error.hpp"
#include "nnprof/rank_recording.hpp"
#include "nnprof/report.hpp"
#include "nnprof/scope.hpp"
#include "record/internal_allocations.hpp"
#include "record/session.hpp"
#include "record/thread_ops.hpp"

namespace nnprof {

namespace {
std::atomic<std::uint64_t> g_next_profiler_id{1};

// A profile of `raw` and of this process: the model reads only the snapshot, so the host
// facts and the symbols of its stacks are added here, while the threads and modules are there.
Profile build_profile_of_process(detail::RawSnapshot raw) {
  collect::add_process_facts(raw);
  return model::build_profile(raw);
}
}  // namespace

Profiler::Profiler() : Profiler(ProfilerOptions{}) {}

Profiler::Profiler(const ProfilerOptions& options) : options_(options) {
  detail::InternalAllocations internal;
  core_.id = g_next_profiler_id.fetch_add(1, std::memory_order_relaxed);
  session_ = std::make_unique<detail::Session>(core_, options_);
  core_.session = session_.get();
  if (options_.measure_overhead) session_->measure_overhead();
  if (!options_.serve.empty()) detail::attach_live_server(*this, options_.serve, "ProfilerOptions::serve");
}

Profiler::~Profiler() {
  detail::InternalAllocations internal;
  detail::detach_live_server(*this);  // its threads read this profiler: they end first
  core_.enabled.store(false, std::memory_order_relaxed);
  core_.session = nullptr;
  session_.reset();
}

void Profiler::start(std::string_view name) noexcept {
  if (!core_.enabled.load(std::memory_order_relaxed)) return;
  detail::ThreadState* ts = detail::thread_state(core_);
  if (ts == nullptr) return;
  try {
    detail::start_site(ts, &session_->intern_cached(ts, name)->site);
  } catch (...) {
    // Out of memory interning a new name: the scope is not recorded.
  }
}

void Profiler::stop(std::string_view name) noexcept {
  if (!core_.enabled.load(std::memory_order_relaxed)) return;
  detail::ThreadState* ts = detail::thread_state(core_);
  if (ts == nullptr) return;
  try {
    detail::stop_site(ts, &session_->intern_cached(ts, name)->site);
  } catch (...) {
  }
}

// None of these takes a full snapshot: at thousands of names, building a whole profile per
// question cost milliseconds. They read only the call-tree nodes of `name`.
std::optional<ScopeStats> Profiler::stats(std::string_view name) const {
  detail::InternalAllocations internal;
  // Only the statistics of `name` are read: no host facts or symbols needed.
  const Profile p = model::build_profile(session_->scope_snapshot(name));
  if (const ScopeStats* s = p.find_scope(name)) return *s;
  return std::nullopt;
}

std::chrono::nanoseconds Profiler::total_time(std::string_view name) const {
  detail::InternalAllocations internal;
  const detail::Session::ScopeTotals t = session_->scope_totals(name);
  const ClockCalibration cal = model::session_calibration(t.start, t.now, t.nominal_ns_per_tick);
  return std::chrono::nanoseconds(cal.to_ns(t.inclusive_ticks));
}

std::chrono::nanoseconds Profiler::avg_time(std::string_view name) const {
  const auto s = stats(name);
  return std::chrono::nanoseconds(s ? static_cast<std::int64_t>(s->time.mean_ns + 0.5) : 0);
}

std::uint64_t Profiler::call_count(std::string_view name) const {
  detail::InternalAllocations internal;
  return session_->scope_totals(name).calls;
}

void Profiler::add_items(std::string_view name, std::uint64_t count) noexcept {
  if (!core_.enabled.load(std::memory_order_relaxed)) return;
  detail::ThreadState* ts = detail::thread_state(core_);
  if (ts == nullptr) return;
  try {
    session_->intern_cached(ts, name)->items.fetch_add(count, std::memory_order_relaxed);
  } catch (...) {
  }
}

void Profiler::record_alloc(std::string_view name, std::uint64_t bytes) noexcept {
  if (!core_.enabled.load(std::memory_order_relaxed)) return;
  detail::ThreadState* ts = detail::thread_state(core_);
  if (ts == nullptr) return;
  try {
    session_->record_memory(ts, session_->intern_cached(ts, name), static_cast<std::int64_t>(bytes));
  } catch (...) {
  }
}

void Profiler::record_free(std::string_view name, std::uint64_t bytes) noexcept {
  if (!core_.enabled.load(std::memory_order_relaxed)) return;
  detail::ThreadState* ts = detail::thread_state(core_);
  if (ts == nullptr) return;
  try {
    session_->record_memory(ts, session_->intern_cached(ts, name), -static_cast<std::int64_t>(bytes));
  } catch (...) {
  }
}

std::uint64_t Profiler::current_memory() const noexcept {
  const std::int64_t v = session_->memory_current();
  return v > 0 ? static_cast<std::uint64_t>(v) : 0;
}

std::uint64_t Profiler::peak_memory() const noexcept { return session_->memory_peak(); }

namespace {
// The roofs of this machine from the `nnprof machine` cache, for profiles with declared work.
// Never measured here: a snapshot must not spend seconds saturating every core.
void attach_machine_peaks(Profile& profile) {
  const bool has_work = std::any_of(profile.call_tree.begin(), profile.call_tree.end(),
                                    [](const CallTreeNode& n) { return n.flops > 0.0 || n.bytes > 0; });
  if (!has_work) return;
  try {
    if (auto peaks = cached_machine_peaks()) profile.machine = *peaks;
  } catch (const Error& e) {
    profile.diagnostics.push_back(Diagnostic{DiagnosticKind::Roofline, Severity::Warning, kNone, kNone, 0,
                                             std::string(e.what()) + "; run `nnprof machine --force` to measure "
                                             "this machine again so that reports can place scopes on its roofline"});
  }
}


// The rank this process is in a distributed job, read from its launcher's environment at each
// snapshot (a launcher sets it before the program starts; reading it late costs nothing on the
// hot path), with the clock alignment measured by the MPI interposer or the agent. Variables
// that could not be read become a diagnostic, so that a merge that finds no rank can say why.
void attach_rank(Profile& profile, const detail::Session& session) {
  const RankEnvironment env = read_rank_environment();
  for (const std::string& problem : env.problems)
    profile.diagnostics.push_back(
        Diagnostic{DiagnosticKind::Distributed, Severity::Warning, kNone, kNone, 0,
                   "the launcher's rank variables: " + problem});
  if (!env.rank) return;
  RankInfo info = *env.rank;
  info.hostname = profile.meta.hostname;
  info.pid = profile.meta.pid;
  info.clock = session.clock_alignment();
  if (!info.clock.aligned && info.rank != 0)
    profile.diagnostics.push_back(Diagnostic{
        DiagnosticKind::Distributed, Severity::Info, kNone, kNone, 0,
        fmt::format("rank {}'s clock was not aligned to rank 0's (no exchange: the program did not call MPI_Init "
                    "under nnprof's MPI interposer, and no rendezvous address was given), so a merge places its "
                    "times by the host clocks alone",
                    info.rank)});
  profile.ranks.push_back(std::move(info));
}
}  // namespace

Profile Profiler::snapshot() const {
  detail::InternalAllocations internal;
  Profile profile = build_profile_of_process(session_->snapshot(true));
  attach_machine_peaks(profile);
  attach_rank(profile, *session_);
  return profile;
}

Profile Profiler::statistics_snapshot() const {
  detail::InternalAllocations internal;
  // No spans or memory events, but the collectors' data: what a window or a live view needs.
  Profile profile = build_profile_of_process(session_->snapshot(false, true));
  attach_machine_peaks(profile);
  attach_rank(profile, *session_);
  return profile;
}

void Profiler::set_clock_alignment(const ClockAlignment& clock) {
  detail::InternalAllocations internal;
  session_->set_clock_alignment(clock);
}

std::uint64_t Profiler::start_monotonic_ns() const noexcept { return session_->start_monotonic_ns(); }

void Profiler::annotate(std::string_view key, std::string_view value) {
  if (!is_valid_annotation_key(key))
    throw std::invalid_argument(
        key.empty() ? std::string("nnprof: an annotation key must not be empty")
                    : "nnprof: annotation key '" + std::string(key) +
                          "' is invalid: use printable ASCII characters only (' ' to '~', no control characters)");
  detail::InternalAllocations internal;
  session_->annotate(key, value);
}

void Profiler::add_flops(double flops, std::uint64_t bytes) noexcept {
  if (!core_.enabled.load(std::memory_order_relaxed)) return;
  if (detail::ThreadState* ts = detail::thread_state(core_)) detail::add_work(ts, flops, bytes);
}

void Profiler::attach_arg(std::string_view key, const detail::ArgValue& value) noexcept {
  if (!core_.enabled.load(std::memory_order_relaxed)) return;
  if (detail::ThreadState* ts = detail::thread_state(core_)) detail::add_span_arg(ts, ts->top, key, value);
}

void Profiler::start_with_flops(std::string_view name, double flops, std::uint64_t bytes) noexcept {
  start(name);
  add_flops(flops, bytes);
}

std::vector<Bottleneck> Profiler::analyze_bottlenecks(const BottleneckThresholds& thresholds) const {
  return nnprof::analyze_bottlenecks(snapshot(), thresholds);
}

std::vector<ScopeTiming> Profiler::top_by_time(std::size_t n) const {
  detail::InternalAllocations internal;
  const Profile p = build_profile_of_process(session_->snapshot(false));
  std::vector<ScopeTiming> top;
  for (const ScopeStats& s : p.scopes) {  // already longest first
    if (top.size() == n) break;
    top.push_back(ScopeTiming{p.str(s.name), s.time.count, std::chrono::nanoseconds(s.total_ns), s.flops, s.bytes,
                              s.gflops_per_second(), s.gbytes_per_second(), s.arithmetic_intensity()});
  }
  return top;
}

void Profiler::save(const std::string& path) const {
  detail::InternalAllocations internal;
  snapshot().save(path);
}

Report Profiler::summary() const {
  detail::InternalAllocations internal;
  return Report(snapshot());
}

void Profiler::print_summary() const { print_summary(std::cout); }

void Profiler::print_summary(std::ostream& out) const {
  detail::InternalAllocations internal;
  summary().write_text(out);
}

ProfileGuard::ProfileGuard(Profiler& profiler, std::string_view name) noexcept {
  detail::SessionCore& core = profiler.core();
  if (!core.enabled.load(std::memory_order_relaxed) || core.session == nullptr) return;
  detail::ThreadState* ts = detail::thread_state(core);
  if (ts == nullptr) return;
  try {
    open(core, &core.session->intern_cached(ts, name)->site);
  } catch (...) {
  }
}

// ---- the global profiler ------------------------------------------------------------

namespace detail {

std::atomic<Profiler*> g_global_profiler{nullptr};

namespace {
ProfilerOptions options_from_environment() {
  ProfilerOptions o;
  if (const char* cap = std::getenv("NNPROF_MEMORY_CAP_MB")) {
    char* end = nullptr;
    const unsigned long long mb = std::strtoull(cap, &end, 10);
    if (end != cap && *end == '\0' && mb > 0)
      o.memory_cap_bytes = static_cast<std::size_t>(mb) << 20;
    else
      std::cerr << "nnprof: ignoring NNPROF_MEMORY_CAP_MB='" << cap << "': expected a positive number of MiB\n";
  }
  if (const char* policy = std::getenv("NNPROF_POLICY")) {
    if (std::strcmp(policy, "flight-recorder") == 0)
      o.policy = BufferPolicy::FlightRecorder;
    else if (std::strcmp(policy, "keep-first") == 0)
      o.policy = BufferPolicy::KeepFirst;
    else
      std::cerr << "nnprof: ignoring NNPROF_POLICY='" << policy << "': expected keep-first or flight-recorder\n";
  }
  return o;
}
}  // namespace

Profiler& create_global_profiler() {
  detail::InternalAllocations internal;
  static std::mutex mu;
  std::lock_guard lock(mu);
  if (Profiler* p = g_global_profiler.load(std::memory_order_acquire)) return *p;
  // Never destroyed: threads and static destructors may record until the very end.
  auto* p = new Profiler(options_from_environment());
  g_global_profiler.store(p, std::memory_order_release);
  // NNPROF_SERVE=[ADDR:]PORT serves the global profiler live. A server that cannot start must
  // not take the program down with it: it says why and the program runs on.
  if (const char* serve = std::getenv("NNPROF_SERVE"); serve != nullptr && *serve != '\0') {
    try {
      attach_live_server(*p, serve, "NNPROF_SERVE");
    } catch (const std::exception& e) {
      std::cerr << "nnprof: not serving live: " << e.what() << '\n';
    }
  }
  return *p;
}

}  // namespace detail

void start(std::string_view name) noexcept { global_profiler().start(name); }
void stop(std::string_view name) noexcept { global_profiler().stop(name); }
void record_alloc(std::string_view name, std::uint64_t bytes) noexcept { global_profiler().record_alloc(name, bytes); }
void record_free(std::string_view name, std::uint64_t bytes) noexcept { global_profiler().record_free(name, bytes); }
void add_items(std::string_view name, std::uint64_t count) noexcept { global_profiler().add_items(name, count); }
void add_flops(double flops, std::uint64_t bytes) noexcept { global_profiler().add_flops(flops, bytes); }
std::uint64_t get_current_memory() noexcept { return collect::read_process_memory().rss; }
std::uint64_t Profiler::current_rss() const noexcept { return get_current_memory(); }
void set_thread_name(std::string_view name) { detail::set_current_thread_name(name); }

}  // namespace nnprof
