// The public metrics API: handles, by-name calls, and the metrics files.
#include "nnprof/metrics.hpp"

#include <cmath>

#include <fmt/format.h>

#include "io/metrics_csv.hpp"
#include "io/metrics_json.hpp"
#include "io/metrics_png.hpp"
#include "io/output_file.hpp"
#include "nnprof/error.hpp"
#include "record/internal_allocations.hpp"
#include "record/session.hpp"

namespace nnprof {

namespace detail {

void record_metric_entry(SessionCore& core, MetricEntry* entry, double value) noexcept {
  if (entry == nullptr) return;
  ThreadState* ts = thread_state(core);
  if (ts == nullptr) [[unlikely]] return;
  if (!std::isfinite(value)) [[unlikely]] {
    entry->misuses.fetch_add(1, std::memory_order_relaxed);
    return;
  }
  record_metric(ts, entry->id, value);
}

std::uint64_t record_elapsed(SessionCore& core, MetricEntry* entry, std::uint64_t start_ticks) noexcept {
  const std::uint64_t end = read_ticks();
  const auto ns = static_cast<std::uint64_t>(
      static_cast<double>(end > start_ticks ? end - start_ticks : 0) * clock::nominal_ns_per_tick() + 0.5);
  if (core.enabled.load(std::memory_order_relaxed)) record_metric_entry(core, entry, static_cast<double>(ns));
  return ns;
}

}  // namespace detail

namespace {

const char* kind_noun(MetricKind k) { return model::metric_kind_name(k); }

detail::MetricEntry* declare(Profiler& profiler, std::string_view name, MetricKind kind, std::string_view unit) {
  detail::InternalAllocations internal;
  detail::Session* session = profiler.core().session;
  if (session == nullptr) throw Error("cannot declare a metric: the profiler has ended");
  detail::MetricEntry* e = session->metrics().get(name, kind, unit);
  if (e == nullptr)
    throw Error(fmt::format("cannot declare {} \"{}\": the profiler already holds {} metric names, the most it "
                            "can; names built at run time multiply metrics, use fewer names",
                            kind_noun(kind), name, detail::kMaxMetrics));
  if (e->kind != kind)
    throw Error(fmt::format("cannot declare {} \"{}\": that name is already a {} (a metric's kind is fixed by its "
                            "first use); give the {} another name",
                            kind_noun(kind), name, kind_noun(e->kind), kind_noun(kind)));
  return e;
}

// The entry for a by-name call on the calling thread, or nullptr (disabled, misuse, full).
detail::MetricEntry* by_name(Profiler& profiler, std::string_view name, MetricKind kind,
                             std::string_view unit = {}) noexcept {
  detail::SessionCore& core = profiler.core();
  if (!core.enabled.load(std::memory_order_relaxed) || core.session == nullptr) return nullptr;
  detail::ThreadState* ts = detail::thread_state(core);
  if (ts == nullptr) return nullptr;
  return detail::metric_for_thread(ts, core.session->metrics(), name, kind, unit);
}

}  // namespace

Counter Metrics::counter(std::string_view name, std::string_view unit) const {
  return Counter(&profiler_->core(), declare(*profiler_, name, MetricKind::Counter, unit));
}

Gauge Metrics::gauge(std::string_view name, std::string_view unit) const {
  return Gauge(&profiler_->core(), declare(*profiler_, name, MetricKind::Gauge, unit));
}

Histogram Metrics::histogram(std::string_view name, std::string_view unit) const {
  detail::MetricEntry* e = declare(*profiler_, name, MetricKind::Histogram, unit);
  // The scope that measure_time() opens, found here once so that the handle's timer costs no
  // lookup; interned names live as long as the session.
  const SourceLocation* site = nullptr;
  {
    detail::InternalAllocations internal;
    site = &profiler_->core().session->intern(name)->site;
  }
  return Histogram(&profiler_->core(), e, site);
}

void Metrics::increment(std::string_view name, double delta) const noexcept {
  if (detail::MetricEntry* e = by_name(*profiler_, name, MetricKind::Counter))
    detail::record_metric_entry(profiler_->core(), e, delta);
}

void Metrics::set(std::string_view name, double value) const noexcept {
  if (detail::MetricEntry* e = by_name(*profiler_, name, MetricKind::Gauge))
    detail::record_metric_entry(profiler_->core(), e, value);
}

void Metrics::record(std::string_view name, double value) const noexcept {
  if (detail::MetricEntry* e = by_name(*profiler_, name, MetricKind::Histogram))
    detail::record_metric_entry(profiler_->core(), e, value);
}

MetricTimer Metrics::measure_time(std::string_view name) const noexcept {
  detail::MetricEntry* e = by_name(*profiler_, name, MetricKind::Histogram, "ns");
  if (e == nullptr) return MetricTimer(nullptr, nullptr, nullptr);
  detail::SessionCore& core = profiler_->core();
  const SourceLocation* site = nullptr;
  // by_name found the thread's state and the session; the name's scope is cached per thread as
  // ProfileGuard's run-time names are. Out of memory, the metric is still recorded, without scope.
  if (detail::ThreadState* ts = detail::thread_state(core)) {
    try {
      site = &core.session->intern_cached(ts, name)->site;
    } catch (...) {
    }
  }
  return MetricTimer(&core, e, site);
}

std::optional<MetricSummary> Metrics::summary(std::string_view name) const {
  const Profile p = profiler_->snapshot();
  if (const MetricSeries* m = find_metric(p, name)) return m->summary;
  return std::nullopt;
}

void Metrics::save_metrics(const std::string& path) const { nnprof::save_metrics(profiler_->snapshot(), path); }

void Metrics::save_metrics_summary(const std::string& path) const {
  nnprof::save_metrics_summary(profiler_->snapshot(), path);
}

void Metrics::plot_metrics(const std::string& path) const { nnprof::plot_metrics(profiler_->snapshot(), path); }

Metrics Profiler::metrics() noexcept { return Metrics(*this); }

const MetricSeries* find_metric(const Profile& profile, std::string_view name) {
  for (const MetricSeries& m : profile.metrics)
    if (m.name < profile.strings.size() && profile.strings[m.name] == name) return &m;
  return nullptr;
}

namespace {
// ".csv" in any case, as the report formats match their extensions.
bool has_csv_extension(std::string_view path) {
  if (path.size() < 4) return false;
  const std::string_view ext = path.substr(path.size() - 4);
  return ext[0] == '.' && (ext[1] | 0x20) == 'c' && (ext[2] | 0x20) == 's' && (ext[3] | 0x20) == 'v';
}
}  // namespace

void save_metrics(const Profile& profile, const std::string& path) {
  detail::InternalAllocations internal;
  if (has_csv_extension(path)) {
    io::write_file_atomically(path, [&](std::ostream& out) { io::write_metric_points_csv(profile, out); });
  } else {
    io::write_file_atomically(path, [&](std::ostream& out) { io::write_metrics_json(profile, out); });
  }
}

void save_metrics_summary(const Profile& profile, const std::string& path) {
  detail::InternalAllocations internal;
  io::write_file_atomically(path, [&](std::ostream& out) { io::write_metric_summary_csv(profile, out); });
}

void plot_metrics(const Profile& profile, const std::string& path) {
  detail::InternalAllocations internal;
  io::write_metrics_png(profile, path);
}

void increment(std::string_view name, double delta) noexcept { global_profiler().metrics().increment(name, delta); }
void set(std::string_view name, double value) noexcept { global_profiler().metrics().set(name, value); }
void record(std::string_view name, double value) noexcept { global_profiler().metrics().record(name, value); }
MetricTimer measure_time(std::string_view name) noexcept { return global_profiler().metrics().measure_time(name); }
void save_metrics(const std::string& path) { global_profiler().metrics().save_metrics(path); }
void save_metrics_summary(const std::string& path) { global_profiler().metrics().save_metrics_summary(path); }
void plot_metrics(const std::string& path) { global_profiler().metrics().plot_metrics(path); }

}  // namespace nnprof
