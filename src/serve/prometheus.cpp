#include "serve/prometheus.hpp"

#include <dirent.h>
#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <cassert>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <map>
#include <sstream>

#include <fmt/format.h>

#include "report/utf8.hpp"
#include "nnprof/trends.hpp"

namespace nnprof::serve {

std::string escape_label_value(std::string_view value) {
  const std::string valid = report::valid_utf8(value);
  std::string out;
  out.reserve(valid.size());
  for (const char c : valid) {
    if (c == '\\') out += "\\\\";
    else if (c == '"') out += "\\\"";
    else if (c == '\n') out += "\\n";
    else out += c;
  }
  return out;
}

std::string escape_help(std::string_view text) {
  std::string out;
  for (const char c : report::valid_utf8(text)) {
    if (c == '\\') out += "\\\\";
    else if (c == '\n') out += "\\n";
    else out += c;
  }
  return out;
}

std::string metric_name_part(std::string_view text) {
  std::string out;
  for (const char c : text) {
    const bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_';
    out += ok ? c : '_';
  }
  if (out.empty() || (out[0] >= '0' && out[0] <= '9')) out.insert(out.begin(), '_');
  return out;
}

std::string sample_value(double value) {
  if (std::isnan(value)) return "NaN";
  if (std::isinf(value)) return value > 0 ? "+Inf" : "-Inf";
  return fmt::format("{}", value);
}

void Exposition::family(std::string_view name, std::string_view type, std::string_view help) {
  assert(std::find(started_.begin(), started_.end(), name) == started_.end());
  family_ = std::string(name);
  started_.push_back(family_);
  out_ += fmt::format("# HELP {} {}\n# TYPE {} {}\n", name, escape_help(help), name, type);
}

void Exposition::sample(const Labels& labels, double value, std::string_view suffix) {
  out_ += family_;
  out_ += suffix;
  if (!labels.empty()) {
    out_ += '{';
    bool first = true;
    for (const auto& [key, text] : labels) {
      if (!first) out_ += ',';
      first = false;
      out_ += key;
      out_ += "=\"";
      out_ += escape_label_value(text);
      out_ += '"';
    }
    out_ += '}';
  }
  out_ += ' ';
  out_ += sample_value(value);
  out_ += '\n';
}

std::optional<ProcessStats> read_process_stats() {
  std::ifstream stat_file("/proc/self/stat");
  std::string stat((std::istreambuf_iterator<char>(stat_file)), std::istreambuf_iterator<char>());
  // The command name (field 2) may hold spaces and parentheses: fields are counted after the last ')'.
  const std::size_t close = stat.rfind(')');
  if (close == std::string::npos) return std::nullopt;
  std::istringstream fields(stat.substr(close + 2));
  std::vector<std::string> f;
  for (std::string field; fields >> field;) f.push_back(field);
  // f[0] is field 3 (state): utime is field 14, stime 15, num_threads 20, starttime 22, vsize 23, rss 24.
  const auto field = [&](int number) -> double {
    const std::size_t i = static_cast<std::size_t>(number - 3);
    return i < f.size() ? std::strtod(f[i].c_str(), nullptr) : 0.0;
  };
  const double ticks = static_cast<double>(sysconf(_SC_CLK_TCK));
  const double page = static_cast<double>(sysconf(_SC_PAGESIZE));
  ProcessStats s;
  s.cpu_seconds = (field(14) + field(15)) / ticks;
  s.threads = field(20);
  s.virtual_bytes = field(23);
  s.resident_bytes = field(24) * page;
  std::ifstream proc_stat("/proc/stat");
  for (std::string line; std::getline(proc_stat, line);) {
    if (line.rfind("btime ", 0) == 0) {
      s.start_time_seconds = std::strtod(line.c_str() + 6, nullptr) + field(22) / ticks;
      break;
    }
  }
  if (DIR* dir = opendir("/proc/self/fd")) {
    double count = 0;
    while (const dirent* entry = readdir(dir))
      if (entry->d_name[0] != '.') ++count;
    closedir(dir);
    s.open_fds = count - 1;  // the descriptor opendir holds
  }
  rlimit limit{};
  if (getrlimit(RLIMIT_NOFILE, &limit) == 0) s.max_fds = static_cast<double>(limit.rlim_cur);
  return s;
}

namespace {

constexpr double kNs = 1e-9;

// A system track's unit in Prometheus base units: the name suffix and the factor to it.
std::pair<std::string_view, double> base_unit(std::string_view unit) {
  if (unit == "percent") return {"_ratio", 0.01};
  if (unit == "bytes") return {"_bytes", 1.0};
  if (unit == "bytes/s") return {"_bytes_per_second", 1.0};
  if (unit == "W") return {"_watts", 1.0};
  if (unit == "celsius") return {"_celsius", 1.0};
  if (unit == "MHz") return {"_hertz", 1e6};
  return {"", 1.0};
}

double last_value(const SystemTrack& track) {
  for (auto it = track.values.rbegin(); it != track.values.rend(); ++it)
    if (!std::isnan(*it)) return *it;
  return std::nan("");
}

void write_process(Exposition& e, const ProcessStats& p) {
  e.family("process_cpu_seconds_total", "counter", "Total user and system CPU time spent in seconds.");
  e.sample({}, p.cpu_seconds);
  e.family("process_resident_memory_bytes", "gauge", "Resident memory size in bytes.");
  e.sample({}, p.resident_bytes);
  e.family("process_virtual_memory_bytes", "gauge", "Virtual memory size in bytes.");
  e.sample({}, p.virtual_bytes);
  e.family("process_start_time_seconds", "gauge", "Start time of the process since unix epoch in seconds.");
  e.sample({}, p.start_time_seconds);
  e.family("process_open_fds", "gauge", "Number of open file descriptors.");
  e.sample({}, p.open_fds);
  e.family("process_max_fds", "gauge", "Maximum number of open file descriptors.");
  e.sample({}, p.max_fds);
  e.family("nnprof_process_threads", "gauge", "Threads of the profiled process.");
  e.sample({}, p.threads);
}

void write_scopes(Exposition& e, const Profile& p) {
  const std::size_t n = std::min(p.scopes.size(), kMaxExportedScopes);
  e.family("nnprof_scope_calls_total", "counter", "Closed calls of each instrumented scope.");
  for (std::size_t i = 0; i < n; ++i) e.sample({{"scope", p.str(p.scopes[i].name)}}, static_cast<double>(p.scopes[i].time.count));
  e.family("nnprof_scope_seconds_total", "counter",
           "Inclusive time of each scope in seconds (nested calls of the same name counted once, summed over threads).");
  for (std::size_t i = 0; i < n; ++i) e.sample({{"scope", p.str(p.scopes[i].name)}}, static_cast<double>(p.scopes[i].total_ns) * kNs);
  e.family("nnprof_scope_self_seconds_total", "counter", "Time in each scope minus the time in scopes inside it, in seconds.");
  for (std::size_t i = 0; i < n; ++i) e.sample({{"scope", p.str(p.scopes[i].name)}}, static_cast<double>(p.scopes[i].self_ns) * kNs);
  e.family("nnprof_scope_call_seconds", "summary", "Duration of one call of each scope in seconds (quantiles within 3.2%).");
  for (std::size_t i = 0; i < n; ++i) {
    const ScopeStats& s = p.scopes[i];
    const std::string& name = p.str(s.name);
    e.sample({{"scope", name}, {"quantile", "0.5"}}, static_cast<double>(s.time.p50_ns) * kNs);
    e.sample({{"scope", name}, {"quantile", "0.95"}}, static_cast<double>(s.time.p95_ns) * kNs);
    e.sample({{"scope", name}, {"quantile", "0.99"}}, static_cast<double>(s.time.p99_ns) * kNs);
    e.sample({{"scope", name}}, static_cast<double>(s.time.sum_ns) * kNs, "_sum");
    e.sample({{"scope", name}}, static_cast<double>(s.time.count), "_count");
  }
  e.family("nnprof_scopes_not_exported", "gauge", "Scopes left out of the nnprof_scope_* families (the least time first).");
  e.sample({}, static_cast<double>(p.scopes.size() - n));

  // Steps: the scopes for which the program reported work items (add_items).
  e.family("nnprof_steps_total", "counter", "Calls of each step scope (a scope the program reported work items for).");
  for (const ScopeStats& s : p.scopes)
    if (s.items != 0) e.sample({{"scope", p.str(s.name)}}, static_cast<double>(s.time.count));
  e.family("nnprof_step_items_total", "counter", "Work items (samples, tokens, batches) reported for each step scope.");
  for (const ScopeStats& s : p.scopes)
    if (s.items != 0) e.sample({{"scope", p.str(s.name)}}, static_cast<double>(s.items));
}

void write_memory(Exposition& e, const Profile& p) {
  e.family("nnprof_memory_counter_bytes", "gauge", "Bytes the program reports held now per named memory counter (record_alloc - record_free).");
  for (const MemoryCounter& c : p.memory_counters) e.sample({{"counter", p.str(c.name)}}, static_cast<double>(c.current_bytes));
  e.family("nnprof_memory_counter_peak_bytes", "gauge", "Highest value of each named memory counter.");
  for (const MemoryCounter& c : p.memory_counters) e.sample({{"counter", p.str(c.name)}}, static_cast<double>(c.peak_bytes));
  if (!p.heap.tracked) return;
  const HeapSummary& h = p.heap;
  e.family("nnprof_heap_live_bytes", "gauge", "Bytes of tracked heap blocks allocated and not freed.");
  e.sample({}, static_cast<double>(h.current_bytes));
  e.family("nnprof_heap_live_blocks", "gauge", "Tracked heap blocks allocated and not freed.");
  e.sample({}, static_cast<double>(h.current_blocks));
  e.family("nnprof_heap_peak_bytes", "gauge", "Highest live heap in bytes.");
  e.sample({}, static_cast<double>(h.peak_bytes));
  e.family("nnprof_heap_allocated_bytes_total", "counter", "Bytes requested by every tracked allocation.");
  e.sample({}, static_cast<double>(h.alloc_bytes));
  e.family("nnprof_heap_allocations_total", "counter", "Tracked allocations.");
  e.sample({}, static_cast<double>(h.alloc_count));
  e.family("nnprof_heap_freed_bytes_total", "counter", "Bytes of tracked blocks freed.");
  e.sample({}, static_cast<double>(h.free_bytes));
  e.family("nnprof_heap_frees_total", "counter", "Frees of tracked blocks.");
  e.sample({}, static_cast<double>(h.free_count));
}

void write_collection(Exposition& e, const Profile& p) {
  e.family("nnprof_session_duration_seconds", "gauge", "Time since the profiling session started, in seconds.");
  e.sample({}, static_cast<double>(p.meta.duration_ns) * kNs);
  e.family("nnprof_scopes_recorded_total", "counter", "Closed scopes counted in the statistics.");
  e.sample({}, static_cast<double>(p.completeness.scopes_recorded));
  e.family("nnprof_spans_dropped_total", "counter", "Spans not kept individually because of the memory cap (statistics keep them).");
  e.sample({}, static_cast<double>(p.completeness.spans_dropped));
  if (p.cpu.sampled) {
    e.family("nnprof_cpu_samples_total", "counter", "CPU samples taken.");
    e.sample({}, static_cast<double>(p.cpu.samples));
    e.family("nnprof_cpu_samples_dropped_total", "counter", "CPU samples lost because the sample buffer was full.");
    e.sample({}, static_cast<double>(p.cpu.samples_dropped));
  }
}

void write_gpu(Exposition& e, const Profile& p) {
  if (!p.gpu.summary.traced) return;
  std::map<std::uint32_t, std::pair<double, double>> by_stream;  // kernels, seconds
  for (const GpuOp& op : p.gpu.ops)
    if (op.kind == GpuOpKind::Kernel) {
      auto& [count, seconds] = by_stream[op.stream];
      count += 1;
      seconds += static_cast<double>(op.duration_ns()) * kNs;
    }
  std::map<std::string, std::pair<double, double>> by_device;
  for (const auto& [stream, figures] : by_stream) {
    const std::string device = stream < p.gpu.streams.size() ? std::to_string(p.gpu.streams[stream].device) : "unknown";
    by_device[device].first += figures.first;
    by_device[device].second += figures.second;
  }
  e.family("nnprof_gpu_kernels_total", "counter", "GPU kernels traced, per device.");
  for (const auto& [device, figures] : by_device) e.sample({{"gpu", device}}, figures.first);
  e.family("nnprof_gpu_kernel_seconds_total", "counter", "Time GPU kernels ran, per device, in seconds.");
  for (const auto& [device, figures] : by_device) e.sample({{"gpu", device}}, figures.second);
  e.family("nnprof_gpu_records_dropped_total", "counter", "GPU activity records CUPTI had no buffer for.");
  e.sample({}, static_cast<double>(p.gpu.summary.records_dropped));
}

void write_system(Exposition& e, const Profile& p) {
  if (!p.system.monitored) return;
  // One family per track (a track is one series with its own unit): gpu0.utilization ->
  // nnprof_system_gpu0_utilization_ratio.
  std::vector<std::string> seen;
  for (const SystemTrack& track : p.system.tracks) {
    const auto [suffix, factor] = base_unit(track.unit);
    std::string name = "nnprof_system_" + metric_name_part(track.name);
    if (!suffix.empty() && !name.ends_with(suffix)) name += suffix;
    if (std::find(seen.begin(), seen.end(), name) != seen.end()) continue;
    seen.push_back(name);
    e.family(name, "gauge", fmt::format("System monitor track {} (last sample; {} in nnprof, base units here).", track.name, track.unit));
    e.sample({}, last_value(track) * factor);
  }
  e.family("nnprof_energy_joules_total", "counter", "Energy used per domain since monitoring began, in joules.");
  for (const EnergyDomain& d : p.system.energy)
    e.sample({{"domain", d.name}, {"kind", d.kind}, {"method", to_string(d.method)}}, d.joules);
}

void write_user_metrics(Exposition& e, const Profile& p) {
  // The program's own metrics, one family per kind with the metric's name as a label, so that
  // any name the program chose is a valid series and two names never collide.
  const auto unit_of = [](const MetricSeries& m) -> std::pair<std::string, double> {
    if (m.unit == "ns") return {"seconds", kNs};
    return {m.unit, 1.0};
  };
  e.family("nnprof_metric_total", "counter", "Counters the program increments (nnprof::Metrics::increment).");
  for (const MetricSeries& m : p.metrics)
    if (m.kind == MetricKind::Counter) {
      const auto [unit, factor] = unit_of(m);
      e.sample({{"metric", p.str(m.name)}, {"unit", unit}}, m.summary.sum * factor);
    }
  e.family("nnprof_metric_gauge", "gauge", "Gauges the program sets (nnprof::Metrics::set): the last value.");
  for (const MetricSeries& m : p.metrics)
    if (m.kind == MetricKind::Gauge) {
      const auto [unit, factor] = unit_of(m);
      e.sample({{"metric", p.str(m.name)}, {"unit", unit}}, m.summary.last * factor);
    }
  e.family("nnprof_metric_observation", "summary", "Histograms the program records (nnprof::Metrics::record, measure_time).");
  for (const MetricSeries& m : p.metrics)
    if (m.kind == MetricKind::Histogram) {
      const auto [unit, factor] = unit_of(m);
      const std::string& name = p.str(m.name);
      if (m.summary.percentile_points != 0) {
        e.sample({{"metric", name}, {"unit", unit}, {"quantile", "0.5"}}, m.summary.p50 * factor);
        e.sample({{"metric", name}, {"unit", unit}, {"quantile", "0.9"}}, m.summary.p90 * factor);
        e.sample({{"metric", name}, {"unit", unit}, {"quantile", "0.99"}}, m.summary.p99 * factor);
      }
      e.sample({{"metric", name}, {"unit", unit}}, m.summary.sum * factor, "_sum");
      e.sample({{"metric", name}, {"unit", unit}}, static_cast<double>(m.summary.count), "_count");
    }
}

void write_continuous(Exposition& e, const Profile& p) {
  if (p.continuous.enabled) {
    std::uint64_t raw = 0;
    for (const ProfileWindow& w : p.continuous.windows) raw += w.raw_windows;
    e.family("nnprof_continuous_windows", "gauge", "Windows a continuous run holds now (older ones rolled up into coarser ones).");
    e.sample({}, static_cast<double>(p.continuous.windows.size()));
    e.family("nnprof_continuous_raw_windows", "gauge", "Raw windows of the interval asked for that those windows sum.");
    e.sample({}, static_cast<double>(raw));
  }
  std::map<std::pair<std::string, std::string>, double> counts;
  for (const Anomaly& a : p.continuous.anomalies) counts[{to_string(a.kind), a.metric}] += 1;
  e.family("nnprof_anomalies_total", "counter", "Level shifts, outliers and growth found over the windows of a continuous run.");
  for (const auto& [key, count] : counts) e.sample({{"kind", key.first}, {"metric", key.second}}, count);
  e.family("nnprof_trend_relative_slope_per_hour", "gauge", "Theil-Sen slope of each windowed metric per hour, relative to its median.");
  for (const Trend& t : p.continuous.trends) e.sample({{"metric", t.metric}}, t.relative_slope_per_hour);
  e.family("nnprof_trend_significant", "gauge", "1 when the 95% confidence interval of the trend's slope excludes 0.");
  for (const Trend& t : p.continuous.trends) e.sample({{"metric", t.metric}}, t.significant ? 1.0 : 0.0);
}

void write_server(Exposition& e, const ServerStats& s) {
  e.family("nnprof_live_clients", "gauge", "Live pages (server-sent event streams) open now.");
  e.sample({}, static_cast<double>(s.live_clients));
  e.family("nnprof_live_frames_total", "counter", "Frames the broadcaster built (each sent to every open page).");
  e.sample({}, static_cast<double>(s.frames_sent));
  e.family("nnprof_live_snapshots_total", "counter", "Snapshots of the profiler the server took.");
  e.sample({}, static_cast<double>(s.snapshots_taken));
  e.family("nnprof_live_snapshot_seconds_total", "counter", "Time the server spent taking snapshots, in seconds.");
  e.sample({}, s.snapshot_seconds_total);
}

}  // namespace

std::string prometheus_text(const Profile& profile, const std::optional<ProcessStats>& process, const ServerStats& server) {
  Exposition e;
  if (process) write_process(e, *process);
  e.family("nnprof_info", "gauge", "nnprof's version and the profiled program; always 1.");
  e.sample({{"version", profile.meta.nnprof_version},
            {"host", profile.meta.hostname},
            {"command", profile.meta.command_line.substr(0, 200)}},
           1.0);
  write_collection(e, profile);
  write_scopes(e, profile);
  write_memory(e, profile);
  write_gpu(e, profile);
  write_system(e, profile);
  write_user_metrics(e, profile);
  write_continuous(e, profile);
  write_server(e, server);
  return e.take();
}

}  // namespace nnprof::serve
