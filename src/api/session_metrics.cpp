// Profiler::profile: wall, CPU, user and system time, CPU utilisation, RSS and FLOP/s of a region.
#include "nnprof/session_metrics.hpp"

#include <sys/resource.h>

#include <algorithm>
#include <chrono>
#include <exception>
#include <cmath>
#include <limits>
#include <optional>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "analysis/system_tracks.hpp"
#include "collect/host_info.hpp"
#include "report/format.hpp"
#include "nnprof/profiler.hpp"
#include "nnprof/error.hpp"
#include "nnprof/scope.hpp"
#include "nnprof/system.hpp"
#include "record/internal_allocations.hpp"
#include "record/session.hpp"

namespace nnprof {

namespace detail {

struct CpuTimes {
  std::uint64_t user_ns = 0, system_ns = 0;
};

CpuTimes process_cpu_times() noexcept {
  rusage ru{};
  if (getrusage(RUSAGE_SELF, &ru) != 0) return {};
  const auto ns = [](const timeval& tv) {
    return static_cast<std::uint64_t>(tv.tv_sec) * 1'000'000'000 + static_cast<std::uint64_t>(tv.tv_usec) * 1'000;
  };
  return {ns(ru.ru_utime), ns(ru.ru_stime)};
}

struct RegionState {
  Profiler* profiler = nullptr;
  std::string name;
  std::chrono::steady_clock::time_point wall_start;
  CpuTimes cpu_start;
  collect::ProcessMemory memory_start;
  double scope_flops_start = 0.0;  // FLOPs declared in scopes of this name before the region
  double flops = 0.0;              // declared on the region itself
  int uncaught = 0;                // exceptions in flight when the region began
  bool done = false;
  RegionMetrics result;
  std::optional<ProfileGuard> scope;
  // The profiler's system monitor, when one is attached: the machine over the region.
  std::shared_ptr<SystemSource> system;
  std::uint64_t monotonic_start = 0;

  [[nodiscard]] double scope_flops() const {
    const auto s = profiler->stats(name);
    return s ? s->flops : 0.0;
  }

  [[nodiscard]] RegionMetrics measure(bool completed, double scope_flops_now) const {
    const auto wall = std::chrono::steady_clock::now() - wall_start;
    const CpuTimes cpu = process_cpu_times();
    const collect::ProcessMemory mem = collect::read_process_memory();
    RegionMetrics m;
    m.name = name;
    m.completed = completed;
    RegionTiming& t = m.timing;
    t.wall_ns = static_cast<std::uint64_t>(std::max<std::int64_t>(
        0, std::chrono::duration_cast<std::chrono::nanoseconds>(wall).count()));
    t.user_ns = cpu.user_ns > cpu_start.user_ns ? cpu.user_ns - cpu_start.user_ns : 0;
    t.system_ns = cpu.system_ns > cpu_start.system_ns ? cpu.system_ns - cpu_start.system_ns : 0;
    t.cpu_ns = t.user_ns + t.system_ns;
    t.cpu_utilization = t.wall_ns > 0 ? static_cast<double>(t.cpu_ns) / static_cast<double>(t.wall_ns) : 0.0;
    t.cpu_utilization_of_machine = t.cpu_utilization / static_cast<double>(collect::usable_cpus());
    RegionMemory& r = m.memory;
    r.rss_initial_bytes = memory_start.rss;
    r.rss_final_bytes = mem.rss;
    // VmHWM is the process's lifetime peak: if it rose, the new peak was reached in the region.
    r.rss_peak_exact = mem.hwm > memory_start.hwm;
    r.rss_peak_bytes = r.rss_peak_exact ? mem.hwm : std::max(memory_start.rss, mem.rss);
    RegionCompute& c = m.compute;
    c.flops = flops + std::max(0.0, scope_flops_now - scope_flops_start);
    c.flops_per_second = t.wall_ns > 0 ? c.flops * 1e9 / static_cast<double>(t.wall_ns) : 0.0;
    if (system) m.system = measure_system();
    return m;
  }

  [[nodiscard]] RegionSystem measure_system() const {
    system->sample_at_boundary();  // the end of the region, so that its last part is covered
    const std::uint64_t now = monotonic_ns();
    RawSystem raw;
    system->snapshot_between(monotonic_start, now, raw);
    analysis::WindowSystem window = analysis::system_between(raw.data, monotonic_start, now);
    RegionSystem r = window.figures;
    constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
    r.carbon_grams = r.carbon_low_grams = r.carbon_high_grams = kNaN;
    try {
      SystemProfile energy;
      energy.energy = std::move(window.domains);
      const CarbonEstimate carbon = carbon_estimate(energy);  // NNPROF_CARBON_REGION, else the world average
      r.carbon_grams = carbon.grams_co2;
      r.carbon_low_grams = carbon.grams_low;
      r.carbon_high_grams = carbon.grams_high;
      r.carbon_region = carbon.intensity.region;
    } catch (const nnprof::Error&) {
      // NNPROF_CARBON_REGION names no region of the table: no carbon, the rest stands.
    }
    return r;
  }

  void finish(bool completed) {
    if (done) return;
    scope.reset();  // close the scope first, so that its FLOPs are in the statistics
    result = measure(completed, scope_flops());
    done = true;
    if (Session* session = profiler->core().session) session->regions().add(result);
  }
};

}  // namespace detail

ProfiledRegion::ProfiledRegion(Profiler& profiler, std::string_view name)
    : state_(std::make_unique<detail::RegionState>()) {
  detail::InternalAllocations internal;
  detail::RegionState& s = *state_;
  s.profiler = &profiler;
  s.name.assign(name);
  s.uncaught = std::uncaught_exceptions();
  s.scope_flops_start = s.scope_flops();
  s.memory_start = collect::read_process_memory();
  if (detail::Session* session = profiler.core().session) s.system = session->system_source();
  if (s.system) s.system->sample_at_boundary();  // the start of the region
  s.monotonic_start = detail::monotonic_ns();
  s.cpu_start = detail::process_cpu_times();
  s.wall_start = std::chrono::steady_clock::now();
  s.scope.emplace(profiler, std::string_view(s.name));
}

ProfiledRegion::ProfiledRegion(ProfiledRegion&&) noexcept = default;

ProfiledRegion::~ProfiledRegion() {
  if (!state_ || state_->done) return;
  detail::InternalAllocations internal;
  try {
    // Ended by an exception when more are in flight now than when the region began.
    state_->finish(std::uncaught_exceptions() <= state_->uncaught);
  } catch (...) {
    // Out of memory while storing the results: the region is not reported.
  }
}

void ProfiledRegion::add_flops(double flops) noexcept {
  if (state_ && !state_->done && flops > 0.0) state_->flops += flops;
}

RegionMetrics ProfiledRegion::current() const {
  detail::InternalAllocations internal;
  if (state_->done) return state_->result;
  return state_->measure(true, state_->scope_flops());
}

RegionMetrics ProfiledRegion::stop() {
  detail::InternalAllocations internal;
  state_->finish(true);
  return state_->result;
}

std::string RegionMetrics::summary() const {
  const RegionTiming& t = timing;
  std::string s = fmt::format("{}: wall {}, CPU {} (user {}, system {}), CPU utilisation {:.0f}% ({:.2f} cores, {} of "
                              "{} CPUs)",
                              name, report::format_duration(t.wall_ns), report::format_duration(t.cpu_ns),
                              report::format_duration(t.user_ns), report::format_duration(t.system_ns),
                              t.cpu_utilization * 100.0, t.cpu_utilization, report::format_percent(t.cpu_utilization_of_machine),
                              collect::usable_cpus());
  s += fmt::format(", RSS {} -> peak {}{} -> {}", report::format_bytes(memory.rss_initial_bytes),
                   memory.rss_peak_exact ? "" : ">= ", report::format_bytes(memory.rss_peak_bytes),
                   report::format_bytes(memory.rss_final_bytes));
  if (compute.flops > 0.0)
    s += fmt::format(", {:.3g} GFLOP/s ({:.3g} GFLOP)", compute.flops_per_second / 1e9, compute.flops / 1e9);
  if (system) {
    const RegionSystem& y = *system;
    const auto percent = [](double v) { return std::isnan(v) ? std::string("n/a") : fmt::format("{:.0f}%", v); };
    s += fmt::format(", system: process CPU {} of a core, host CPU {}, memory {}", percent(y.process_cpu_percent),
                     percent(y.host_cpu_percent), percent(y.memory_percent));
    if (!std::isnan(y.energy_joules))
      s += fmt::format(", energy {:.3g} J{}", y.energy_joules, y.energy_measured ? "" : " (partly modelled)");
    if (!std::isnan(y.carbon_grams)) s += fmt::format(", {:.3g} g CO2e ({})", y.carbon_grams, y.carbon_region);
  }
  if (!completed) s += " (ended by an exception)";
  return s;
}

std::string RegionMetrics::to_json() const {
  nlohmann::json j = {
      {"name", name},
      {"completed", completed},
      {"timing",
       {{"wall_ns", timing.wall_ns},
        {"cpu_ns", timing.cpu_ns},
        {"user_ns", timing.user_ns},
        {"system_ns", timing.system_ns},
        {"cpu_utilization", timing.cpu_utilization},
        {"cpu_utilization_of_machine", timing.cpu_utilization_of_machine}}},
      {"memory",
       {{"rss_initial_bytes", memory.rss_initial_bytes},
        {"rss_peak_bytes", memory.rss_peak_bytes},
        {"rss_final_bytes", memory.rss_final_bytes},
        {"rss_peak_exact", memory.rss_peak_exact}}},
      {"compute", {{"flops", compute.flops}, {"flops_per_second", compute.flops_per_second}}},
  };
  if (system) {
    // NaN (not read) as null: JSON has no NaN.
    const auto number = [](double v) { return std::isnan(v) ? nlohmann::json(nullptr) : nlohmann::json(v); };
    const RegionSystem& y = *system;
    j["system"] = {{"process_cpu_percent", number(y.process_cpu_percent)},
                   {"host_cpu_percent", number(y.host_cpu_percent)},
                   {"memory_percent", number(y.memory_percent)},
                   {"disk_read_bytes", number(y.disk_read_bytes)},
                   {"disk_write_bytes", number(y.disk_write_bytes)},
                   {"network_bytes", number(y.network_bytes)},
                   {"gpu_utilization_percent", number(y.gpu_utilization_percent)},
                   {"energy_joules", number(y.energy_joules)},
                   {"energy_measured", y.energy_measured},
                   {"carbon_grams", number(y.carbon_grams)},
                   {"carbon_low_grams", number(y.carbon_low_grams)},
                   {"carbon_high_grams", number(y.carbon_high_grams)},
                   {"carbon_region", y.carbon_region},
                   {"samples", y.samples}};
  }
  return j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

ProfiledRegion Profiler::profile(std::string_view name) { return ProfiledRegion(*this, name); }

std::optional<RegionMetrics> Profiler::get_metrics(std::string_view name) const {
  detail::InternalAllocations internal;
  if (name.empty()) return std::nullopt;
  return session_->regions().last(name);
}

std::optional<RegionMetrics> Profiler::get_metrics() const {
  detail::InternalAllocations internal;
  return session_->regions().last();
}

std::vector<RegionShare> Profiler::get_timing_breakdown() const {
  detail::InternalAllocations internal;
  std::vector<RegionShare> rows;
  std::uint64_t total = 0;
  for (const RegionMetrics& m : session_->regions().all()) {
    auto it = std::find_if(rows.begin(), rows.end(), [&](const RegionShare& r) { return r.name == m.name; });
    if (it == rows.end()) it = rows.insert(rows.end(), RegionShare{m.name, 0, 0, 0.0});
    ++it->count;
    it->wall_ns += m.timing.wall_ns;
    total += m.timing.wall_ns;
  }
  for (RegionShare& r : rows)
    r.share = total > 0 ? static_cast<double>(r.wall_ns) / static_cast<double>(total) : 0.0;
  return rows;
}

bool Profiler::has_results() const noexcept {
  try {
    return !session_->regions().empty();
  } catch (...) {
    return false;
  }
}

}  // namespace nnprof
