#include "collect/system/procfs_probe.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <limits>
#include <map>
#include <utility>

#include <fmt/format.h>

namespace nnprof::detail::system {

namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
constexpr std::uint64_t kSectorBytes = 512;  // /proc/diskstats counts 512-byte sectors on every device
// cgroup v1 reports "no limit" as the largest page-aligned counter (9223372036854771712 on
// x86-64), not as a word: anything this large is no limit.
constexpr std::uint64_t kCgroupV1Unlimited = std::uint64_t{1} << 60;

std::string_view trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t' || s.front() == '\n' || s.front() == '\r'))
    s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t' || s.back() == '\n' || s.back() == '\r'))
    s.remove_suffix(1);
  return s;
}

std::vector<std::string_view> split_words(std::string_view s) {
  std::vector<std::string_view> words;
  std::size_t i = 0;
  while (i < s.size()) {
    while (i < s.size() && (s[i] == ' ' || s[i] == '\t')) ++i;
    const std::size_t begin = i;
    while (i < s.size() && s[i] != ' ' && s[i] != '\t') ++i;
    if (i > begin) words.push_back(s.substr(begin, i - begin));
  }
  return words;
}

/// Calls `f` with each line of `text`, without its newline.
template <class F>
void for_each_line(std::string_view text, F&& f) {
  while (!text.empty()) {
    const std::size_t end = text.find('\n');
    f(text.substr(0, end));
    if (end == std::string_view::npos) break;
    text.remove_prefix(end + 1);
  }
}

std::optional<std::uint64_t> to_u64(std::string_view s) {
  std::uint64_t value = 0;
  const auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), value);
  if (ec != std::errc() || end != s.data() + s.size()) return std::nullopt;
  return value;
}

std::optional<std::int64_t> to_i64(std::string_view s) {
  std::int64_t value = 0;
  const auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), value);
  if (ec != std::errc() || end != s.data() + s.size()) return std::nullopt;
  return value;
}

/// The number after "Key:" in a "Key:   123 kB" file (status, meminfo); the unit is left to the caller.
std::optional<std::uint64_t> keyed_value(std::string_view text, std::string_view key) {
  std::optional<std::uint64_t> found;
  for_each_line(text, [&](std::string_view line) {
    if (found || line.size() <= key.size() || line.substr(0, key.size()) != key || line[key.size()] != ':') return;
    const auto words = split_words(line.substr(key.size() + 1));
    if (!words.empty()) found = to_u64(words[0]);
  });
  return found;
}

bool exists(const std::string& path) {
  std::error_code ec;
  return std::filesystem::exists(path, ec);
}

bool is_directory(const std::string& path) {
  std::error_code ec;
  return std::filesystem::is_directory(path, ec);
}

/// Per second, of a counter that rose from `before` to `after` over `seconds`; NaN when it went
/// backwards (it wrapped or was reset: that interval's rise is unknown, never negative).
double rate(std::uint64_t before, std::uint64_t after, double seconds) {
  if (after < before || seconds <= 0.0) return kNaN;
  return static_cast<double>(after - before) / seconds;
}

/// Sets `track` unless the value is unknown: the monitor stores NaN for a track not set.
void set_known(SampleSink& sink, std::string_view track, std::string_view unit, double value) {
  if (!std::isnan(value)) sink.set(track, unit, value);
}

double seconds_between(std::uint64_t before_ns, std::uint64_t after_ns) {
  return after_ns > before_ns ? static_cast<double>(after_ns - before_ns) * 1e-9 : 0.0;
}

/// Where the process's cgroup files are, v2 or v1, found once.
struct CgroupView {
  int version = 0;          ///< 2, 1, or 0: no cgroup found
  std::string path;         ///< as /proc/self/cgroup gives it
  std::string memory_dir;   ///< v2: the cgroup's directory; v1: the memory controller's
  std::string cpu_dir;      ///< v1: the cpu controller's (cfs quota)
  std::string cpuacct_dir;  ///< v1: the cpuacct controller's (usage)
  std::string note;         ///< why no cgroup was found, when none was
};

/// The directory of `path` in the hierarchy mounted at `mount`. A container without its own
/// cgroup namespace sees its host's path in /proc/self/cgroup, with its own cgroup mounted at
/// the root: then the path is not found under the mount, and the mount's root is the cgroup.
std::string cgroup_dir(const std::string& mount, const std::string& path) {
  if (!path.empty() && path != "/" && is_directory(mount + path)) return mount + path;
  return is_directory(mount) ? mount : std::string();
}

CgroupView find_cgroup(const SystemOptions& options) {
  CgroupView view;
  std::string error;
  const std::string cgroup_file = options.proc_root + "/self/cgroup";
  const std::optional<std::string> text = read_text_file(cgroup_file, &error);
  if (!text) {
    view.note = fmt::format("cgroup: {} is not readable ({}); no cgroup limits or tracks", cgroup_file, error);
    return view;
  }
  const std::string mount = options.sys_root + "/fs/cgroup";
  // A unified (v2) hierarchy has cgroup.controllers at its root; a hybrid system's v2 part
  // (mounted at unified/) has no controllers, so its v1 hierarchies hold the limits.
  if (const auto path = parse_cgroup_v2_path(*text); path && exists(mount + "/cgroup.controllers")) {
    view.version = 2;
    view.path = *path;
    view.memory_dir = cgroup_dir(mount, *path);
    return view;
  }
  const auto memory_path = parse_cgroup_v1_path(*text, "memory");
  const auto cpu_path = parse_cgroup_v1_path(*text, "cpu");
  const auto cpuacct_path = parse_cgroup_v1_path(*text, "cpuacct");
  if (!memory_path && !cpu_path && !cpuacct_path) {
    view.note = fmt::format("cgroup: {} names neither a cgroup v2 path with controllers under {} nor a v1 memory or "
                            "cpu controller; no cgroup limits or tracks",
                            cgroup_file, mount);
    return view;
  }
  view.version = 1;
  view.path = memory_path ? *memory_path : cpu_path ? *cpu_path : *cpuacct_path;
  if (memory_path) view.memory_dir = cgroup_dir(mount + "/memory", *memory_path);
  // cpu and cpuacct are usually mounted together ("cpu,cpuacct"), with cpu/ and cpuacct/ links.
  if (cpu_path) view.cpu_dir = cgroup_dir(mount + "/cpu", *cpu_path);
  if (cpuacct_path) view.cpuacct_dir = cgroup_dir(mount + "/cpuacct", *cpuacct_path);
  return view;
}

std::optional<std::uint64_t> read_number_file(const std::string& path) {
  const auto text = read_text_file(path);
  return text ? parse_single_number(*text) : std::nullopt;
}

/// The cgroup's memory limit in bytes; 0: none (or unreadable).
std::uint64_t cgroup_memory_limit(const CgroupView& view) {
  if (view.memory_dir.empty()) return 0;
  if (view.version == 2) {
    const auto text = read_text_file(view.memory_dir + "/memory.max");
    return text ? parse_cgroup_limit(*text).value_or(0) : 0;
  }
  const auto limit = read_number_file(view.memory_dir + "/memory.limit_in_bytes");
  return limit && *limit < kCgroupV1Unlimited ? *limit : 0;
}

/// The cgroup's CPU quota in cores; 0: none (or unreadable).
double cgroup_cpu_cores(const CgroupView& view) {
  if (view.version == 2) {
    if (view.memory_dir.empty()) return 0.0;
    const auto text = read_text_file(view.memory_dir + "/cpu.max");
    return text ? parse_cpu_max(*text).value_or(0.0) : 0.0;
  }
  if (view.cpu_dir.empty()) return 0.0;
  // cfs_quota_us is -1 without a limit, which read_number_file rejects as not unsigned.
  const auto quota_text = read_text_file(view.cpu_dir + "/cpu.cfs_quota_us");
  const auto period = read_number_file(view.cpu_dir + "/cpu.cfs_period_us");
  if (!quota_text || !period || *period == 0) return 0.0;
  const auto quota = to_i64(trim(*quota_text));
  if (!quota || *quota <= 0) return 0.0;
  return static_cast<double>(*quota) / static_cast<double>(*period);
}

// ---- Probes -------------------------------------------------------------------------------

/// process.cpu.*, process.memory.rss and process.io.* from /proc/self/{stat,status,io}.
class ProcessProbe final : public Probe {
 public:
  explicit ProcessProbe(const SystemOptions& options)
      : stat_path_(options.proc_root + "/self/stat"),
        status_path_(options.proc_root + "/self/status"),
        io_path_(options.proc_root + "/self/io") {
    const long ticks = sysconf(_SC_CLK_TCK);
    ticks_per_second_ = ticks > 0 ? static_cast<double>(ticks) : 100.0;
  }

  void sample(std::uint64_t now_ns, SampleSink& sink) override {
    const double seconds = primed_ ? seconds_between(last_ns_, now_ns) : 0.0;
    std::string error;
    if (const auto text = read_text_file(stat_path_, &error); text) {
      if (const auto cpu = parse_process_stat(*text)) {
        if (last_cpu_ && seconds > 0.0) {
          // Ticks over the interval as a share of one core: 200 reads two cores busy.
          const double scale = 100.0 / (ticks_per_second_ * seconds);
          set_known(sink, "process.cpu.user", "percent", rate(last_cpu_->user, cpu->user, 1.0) * scale);
          set_known(sink, "process.cpu.system", "percent", rate(last_cpu_->system, cpu->system, 1.0) * scale);
        }
        last_cpu_ = cpu;
      }
    } else {
      sink.note(fmt::format("process CPU: {} is not readable ({})", stat_path_, error));
    }
    if (const auto text = read_text_file(status_path_, &error); text) {
      if (const auto rss = parse_status_rss_bytes(*text))
        sink.set("process.memory.rss", "bytes", static_cast<double>(*rss));
    } else {
      sink.note(fmt::format("process memory: {} is not readable ({})", status_path_, error));
    }
    if (io_readable_) {
      if (const auto text = read_text_file(io_path_, &error); text) {
        if (const auto io = parse_process_io(*text)) {
          if (last_io_ && seconds > 0.0) {
            set_known(sink, "process.io.read_bytes", "bytes/s", rate(last_io_->read_bytes, io->read_bytes, seconds));
            set_known(sink, "process.io.write_bytes", "bytes/s", rate(last_io_->write_bytes, io->write_bytes, seconds));
          }
          last_io_ = io;
        }
      } else {
        // Some containers deny /proc/self/io (EACCES) for good: say so once and stop trying.
        io_readable_ = false;
        sink.note(fmt::format("process I/O: {} is not readable ({}); no process.io tracks", io_path_, error));
      }
    }
    last_ns_ = now_ns;
    primed_ = true;
  }

 private:
  std::string stat_path_, status_path_, io_path_;
  double ticks_per_second_ = 100.0;
  bool primed_ = false;
  std::uint64_t last_ns_ = 0;
  std::optional<ProcessCpuTicks> last_cpu_;
  std::optional<ProcessIo> last_io_;
  bool io_readable_ = true;
};

/// system.cpu.busy from /proc/stat, system.memory.used from /proc/meminfo.
class HostProbe final : public Probe {
 public:
  explicit HostProbe(const SystemOptions& options)
      : stat_path_(options.proc_root + "/stat"), meminfo_path_(options.proc_root + "/meminfo") {}

  void sample(std::uint64_t /*now_ns*/, SampleSink& sink) override {
    std::string error;
    if (const auto text = read_text_file(stat_path_, &error); text) {
      if (const auto cpu = parse_proc_stat(*text)) {
        // A share of ticks, not of time: independent of the interval and of the tick rate.
        // iowait may step backwards on tickless kernels; that interval is then left unknown.
        if (last_cpu_ && cpu->total > last_cpu_->total && cpu->idle >= last_cpu_->idle) {
          const double total = static_cast<double>(cpu->total - last_cpu_->total);
          const double idle = static_cast<double>(cpu->idle - last_cpu_->idle);
          if (idle <= total) sink.set("system.cpu.busy", "percent", 100.0 * (total - idle) / total);
        }
        last_cpu_ = cpu;
      }
    } else {
      sink.note(fmt::format("host CPU: {} is not readable ({})", stat_path_, error));
    }
    if (const auto text = read_text_file(meminfo_path_, &error); text) {
      if (const auto mem = parse_meminfo(*text); mem && mem->total_bytes > 0 && mem->available_bytes <= mem->total_bytes)
        sink.set("system.memory.used", "percent",
                 100.0 * static_cast<double>(mem->total_bytes - mem->available_bytes) / static_cast<double>(mem->total_bytes));
    } else {
      sink.note(fmt::format("host memory: {} is not readable ({})", meminfo_path_, error));
    }
  }

 private:
  std::string stat_path_, meminfo_path_;
  std::optional<CpuTimes> last_cpu_;
};

/// cgroup.memory.used and cgroup.cpu.used, against the limits found at construction (a track
/// only where there is a limit: against no limit the host's tracks say it all).
class CgroupProbe final : public Probe {
 public:
  CgroupProbe(CgroupView view, std::uint64_t memory_limit, double cpu_cores)
      : view_(std::move(view)), memory_limit_(memory_limit), cpu_cores_(cpu_cores) {
    if (view_.version == 2) {
      memory_current_ = view_.memory_dir + "/memory.current";
      cpu_usage_ = view_.memory_dir + "/cpu.stat";
    } else {
      if (!view_.memory_dir.empty()) memory_current_ = view_.memory_dir + "/memory.usage_in_bytes";
      if (!view_.cpuacct_dir.empty()) cpu_usage_ = view_.cpuacct_dir + "/cpuacct.usage";
    }
  }

  void sample(std::uint64_t now_ns, SampleSink& sink) override {
    std::string error;
    if (memory_limit_ > 0 && !memory_current_.empty()) {
      if (const auto text = read_text_file(memory_current_, &error); text) {
        if (const auto used = parse_single_number(*text))
          sink.set("cgroup.memory.used", "percent", 100.0 * static_cast<double>(*used) / static_cast<double>(memory_limit_));
      } else {
        sink.note(fmt::format("cgroup memory: {} is not readable ({})", memory_current_, error));
      }
    }
    if (cpu_cores_ > 0.0 && !cpu_usage_.empty()) {
      if (const auto text = read_text_file(cpu_usage_, &error); text) {
        // v2 counts µs (cpu.stat usage_usec), v1 ns (cpuacct.usage).
        const auto usage = view_.version == 2 ? parse_cpu_stat_usage_usec(*text) : parse_single_number(*text);
        if (usage) {
          const double usage_seconds_per_unit = view_.version == 2 ? 1e-6 : 1e-9;
          if (last_usage_) {
            const double seconds = seconds_between(last_ns_, now_ns);
            const double used = rate(*last_usage_, *usage, seconds) * usage_seconds_per_unit;
            set_known(sink, "cgroup.cpu.used", "percent", 100.0 * used / cpu_cores_);
          }
          last_usage_ = usage;
          last_ns_ = now_ns;
        }
      } else {
        sink.note(fmt::format("cgroup CPU: {} is not readable ({})", cpu_usage_, error));
      }
    }
  }

 private:
  CgroupView view_;
  std::uint64_t memory_limit_ = 0;
  double cpu_cores_ = 0.0;
  std::string memory_current_, cpu_usage_;
  std::optional<std::uint64_t> last_usage_;
  std::uint64_t last_ns_ = 0;
};

/// disk.<device>.* from /proc/diskstats, whole devices only.
class DiskProbe final : public Probe {
 public:
  explicit DiskProbe(const SystemOptions& options)
      : path_(options.proc_root + "/diskstats"), block_dir_(options.sys_root + "/block/") {}

  void sample(std::uint64_t now_ns, SampleSink& sink) override {
    std::string error;
    const auto text = read_text_file(path_, &error);
    if (!text) {
      sink.note(fmt::format("disks: {} is not readable ({}); no disk tracks", path_, error));
      return;
    }
    const double seconds = seconds_between(last_ns_, now_ns);
    for (DiskCounters& d : parse_diskstats(*text)) {
      if (!whole_device(d.device)) continue;
      // Loop, RAM and zram devices that never did any I/O are set up by the system, not used.
      const bool virtual_device = d.device.starts_with("loop") || d.device.starts_with("ram") || d.device.starts_with("zram");
      if (virtual_device && d.reads_completed == 0 && d.writes_completed == 0) continue;
      const auto last = last_.find(d.device);
      if (last != last_.end() && seconds > 0.0) {
        const DiskCounters& before = last->second;
        const std::string prefix = "disk." + d.device;
        set_known(sink, prefix + ".read_bytes", "bytes/s",
                  rate(before.sectors_read, d.sectors_read, seconds) * static_cast<double>(kSectorBytes));
        set_known(sink, prefix + ".write_bytes", "bytes/s",
                  rate(before.sectors_written, d.sectors_written, seconds) * static_cast<double>(kSectorBytes));
        // io_ticks may run a little ahead of the interval measured here: busy is at most 100 %.
        const double busy = rate(before.io_ticks_ms, d.io_ticks_ms, seconds) * 1e-3 * 100.0;
        set_known(sink, prefix + ".busy", "percent", std::isnan(busy) ? busy : std::min(busy, 100.0));
      }
      last_[d.device] = std::move(d);
    }
    last_ns_ = now_ns;
  }

 private:
  /// Partitions have no directory of their own in /sys/block (they are below their disk's).
  bool whole_device(const std::string& device) {
    const auto known = whole_.find(device);
    if (known != whole_.end()) return known->second;
    // sysfs spells a '/' in a device name ("cciss/c0d0") as '!'.
    std::string sysfs_name = device;
    std::replace(sysfs_name.begin(), sysfs_name.end(), '/', '!');
    const bool whole = exists(block_dir_ + sysfs_name);
    whole_.emplace(device, whole);
    return whole;
  }

  std::string path_, block_dir_;
  std::map<std::string, bool> whole_;
  std::map<std::string, DiskCounters> last_;
  std::uint64_t last_ns_ = 0;
};

/// net.<interface>.* from /proc/net/dev.
class NetProbe final : public Probe {
 public:
  explicit NetProbe(const SystemOptions& options) : path_(options.proc_root + "/net/dev") {}

  void sample(std::uint64_t now_ns, SampleSink& sink) override {
    std::string error;
    const auto text = read_text_file(path_, &error);
    if (!text) {
      sink.note(fmt::format("network: {} is not readable ({}); no network tracks", path_, error));
      return;
    }
    const double seconds = seconds_between(last_ns_, now_ns);
    for (NetCounters& n : parse_net_dev(*text)) {
      const auto last = last_.find(n.interface);
      if (last != last_.end() && seconds > 0.0) {
        const std::string prefix = "net." + n.interface;
        set_known(sink, prefix + ".rx_bytes", "bytes/s", rate(last->second.rx_bytes, n.rx_bytes, seconds));
        set_known(sink, prefix + ".tx_bytes", "bytes/s", rate(last->second.tx_bytes, n.tx_bytes, seconds));
      }
      last_[n.interface] = std::move(n);
    }
    last_ns_ = now_ns;
  }

 private:
  std::string path_;
  std::map<std::string, NetCounters> last_;
  std::uint64_t last_ns_ = 0;
};

/// pressure.* from /proc/pressure/{cpu,memory,io}: the share of the interval in which some (or
/// all non-idle) tasks were stalled on the resource.
class PressureProbe final : public Probe {
 public:
  explicit PressureProbe(const SystemOptions& options) : dir_(options.proc_root + "/pressure") {}

  void sample(std::uint64_t now_ns, SampleSink& sink) override {
    if (absent_) return;
    if (!is_directory(dir_)) {
      // It does not appear later: say so once and stop looking.
      absent_ = true;
      sink.note(fmt::format("pressure: {} is absent (a kernel without PSI); no pressure tracks", dir_));
      return;
    }
    const double seconds = seconds_between(last_ns_, now_ns);
    // cpu "full" is only meaningful for cgroups (and absent from older kernels): left out.
    read(sink, seconds, "cpu", last_cpu_, false);
    read(sink, seconds, "memory", last_memory_, true);
    read(sink, seconds, "io", last_io_, true);
    last_ns_ = now_ns;
  }

 private:
  void read(SampleSink& sink, double seconds, const char* resource, std::optional<PressureTotals>& last, bool with_full) {
    const std::string path = fmt::format("{}/{}", dir_, resource);
    std::string error;
    const auto text = read_text_file(path, &error);
    if (!text) {
      // EOPNOTSUPP where PSI is compiled in but disabled.
      sink.note(fmt::format("pressure: {} is not readable ({})", path, error));
      return;
    }
    const auto totals = parse_pressure(*text);
    if (!totals) return;
    if (last && seconds > 0.0) {
      // µs stalled per second of interval, as percent: 1e6 µs/s is 100 %.
      const auto percent = [&](const std::optional<std::uint64_t>& before, const std::optional<std::uint64_t>& after) {
        if (!before || !after) return kNaN;
        const double r = rate(*before, *after, seconds) * 1e-4;
        return std::isnan(r) ? r : std::min(r, 100.0);
      };
      set_known(sink, fmt::format("pressure.{}.some", resource), "percent", percent(last->some_us, totals->some_us));
      if (with_full)
        set_known(sink, fmt::format("pressure.{}.full", resource), "percent", percent(last->full_us, totals->full_us));
    }
    last = totals;
  }

  std::string dir_;
  bool absent_ = false;
  std::optional<PressureTotals> last_cpu_, last_memory_, last_io_;
  std::uint64_t last_ns_ = 0;
};

}  // namespace

std::optional<std::string> read_text_file(const std::string& path, std::string* error) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    if (error != nullptr) *error = std::strerror(errno);
    return std::nullopt;
  }
  std::string text;
  char buffer[4096];
  for (;;) {
    const ssize_t n = ::read(fd, buffer, sizeof buffer);
    if (n > 0) {
      text.append(buffer, static_cast<std::size_t>(n));
      continue;
    }
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      // Opening may succeed where reading is refused (EOPNOTSUPP of a disabled PSI file).
      if (error != nullptr) *error = std::strerror(errno);
      ::close(fd);
      return std::nullopt;
    }
    break;
  }
  ::close(fd);
  return text;
}

std::optional<ProcessCpuTicks> parse_process_stat(std::string_view text) {
  const std::size_t close = text.rfind(')');
  if (close == std::string_view::npos) return std::nullopt;
  // After "pid (comm) " the words are fields 3 (state) onwards: utime is field 14, stime 15.
  const auto words = split_words(trim(text.substr(close + 1)));
  if (words.size() < 13) return std::nullopt;
  const auto user = to_u64(words[11]);
  const auto system = to_u64(words[12]);
  if (!user || !system) return std::nullopt;
  return ProcessCpuTicks{*user, *system};
}

std::optional<std::uint64_t> parse_status_rss_bytes(std::string_view text) {
  const auto kib = keyed_value(text, "VmRSS");
  if (!kib) return std::nullopt;
  return *kib * 1024;
}

std::optional<ProcessIo> parse_process_io(std::string_view text) {
  const auto read = keyed_value(text, "read_bytes");
  const auto write = keyed_value(text, "write_bytes");
  if (!read || !write) return std::nullopt;
  return ProcessIo{*read, *write};
}

std::optional<CpuTimes> parse_proc_stat(std::string_view text) {
  std::optional<CpuTimes> times;
  std::uint32_t cpus = 0;
  for_each_line(text, [&](std::string_view line) {
    if (!line.starts_with("cpu")) return;
    const auto words = split_words(line);
    if (words.empty()) return;
    if (words[0] != "cpu") {
      ++cpus;  // "cpu0", "cpu1", ...: one per online logical CPU
      return;
    }
    // user nice system idle iowait irq softirq steal [guest guest_nice]
    if (words.size() < 5) return;
    CpuTimes t;
    for (std::size_t i = 1; i < words.size() && i <= 8; ++i) {
      const auto v = to_u64(words[i]);
      if (!v) return;
      t.total += *v;
      if (i == 4 || i == 5) t.idle += *v;
    }
    times = t;
  });
  if (times) times->cpus = cpus;
  return times;
}

std::optional<MemInfo> parse_meminfo(std::string_view text) {
  const auto total = keyed_value(text, "MemTotal");
  const auto available = keyed_value(text, "MemAvailable");
  if (!total || !available) return std::nullopt;
  return MemInfo{*total * 1024, *available * 1024};
}

std::optional<std::string> parse_cgroup_v2_path(std::string_view text) {
  std::optional<std::string> path;
  for_each_line(text, [&](std::string_view line) {
    if (!path && line.starts_with("0::")) path = std::string(trim(line.substr(3)));
  });
  return path;
}

std::optional<std::string> parse_cgroup_v1_path(std::string_view text, std::string_view controller) {
  std::optional<std::string> path;
  for_each_line(text, [&](std::string_view line) {
    if (path) return;
    // hierarchy-id:controller,controller:path
    const std::size_t first = line.find(':');
    if (first == std::string_view::npos) return;
    const std::size_t second = line.find(':', first + 1);
    if (second == std::string_view::npos) return;
    std::string_view controllers = line.substr(first + 1, second - first - 1);
    while (!controllers.empty()) {
      const std::size_t comma = controllers.find(',');
      if (controllers.substr(0, comma) == controller) {
        path = std::string(trim(line.substr(second + 1)));
        return;
      }
      if (comma == std::string_view::npos) break;
      controllers.remove_prefix(comma + 1);
    }
  });
  return path;
}

std::optional<std::uint64_t> parse_cgroup_limit(std::string_view text) {
  const std::string_view value = trim(text);
  if (value == "max") return 0;
  return to_u64(value);
}

std::optional<double> parse_cpu_max(std::string_view text) {
  const auto words = split_words(trim(text));
  if (words.size() != 2) return std::nullopt;
  const auto period = to_u64(words[1]);
  if (!period || *period == 0) return std::nullopt;
  if (words[0] == "max") return 0.0;
  const auto quota = to_u64(words[0]);
  if (!quota) return std::nullopt;
  return static_cast<double>(*quota) / static_cast<double>(*period);
}

std::optional<std::uint64_t> parse_cpu_stat_usage_usec(std::string_view text) {
  std::optional<std::uint64_t> usage;
  for_each_line(text, [&](std::string_view line) {
    const auto words = split_words(line);
    if (!usage && words.size() == 2 && words[0] == "usage_usec") usage = to_u64(words[1]);
  });
  return usage;
}

std::optional<std::uint64_t> parse_single_number(std::string_view text) { return to_u64(trim(text)); }

std::vector<DiskCounters> parse_diskstats(std::string_view text) {
  std::vector<DiskCounters> disks;
  for_each_line(text, [&](std::string_view line) {
    // major minor name, then reads completed, merged, sectors, ms; writes completed, merged,
    // sectors, ms; I/Os in flight, io_ticks, ...
    const auto words = split_words(line);
    if (words.size() < 13) return;
    const auto reads = to_u64(words[3]);
    const auto sectors_read = to_u64(words[5]);
    const auto writes = to_u64(words[7]);
    const auto sectors_written = to_u64(words[9]);
    const auto io_ticks = to_u64(words[12]);
    if (!reads || !sectors_read || !writes || !sectors_written || !io_ticks) return;
    disks.push_back(DiskCounters{std::string(words[2]), *reads, *sectors_read, *writes, *sectors_written, *io_ticks});
  });
  return disks;
}

std::vector<NetCounters> parse_net_dev(std::string_view text) {
  std::vector<NetCounters> interfaces;
  for_each_line(text, [&](std::string_view line) {
    // "  eth0: rx_bytes packets errs drop fifo frame compressed multicast tx_bytes ...";
    // the two header lines have no ':' before their words of numbers.
    const std::size_t colon = line.find(':');
    if (colon == std::string_view::npos) return;
    const std::string_view name = trim(line.substr(0, colon));
    const auto words = split_words(line.substr(colon + 1));
    if (name.empty() || words.size() < 9) return;
    const auto rx = to_u64(words[0]);
    const auto tx = to_u64(words[8]);
    if (!rx || !tx) return;
    interfaces.push_back(NetCounters{std::string(name), *rx, *tx});
  });
  return interfaces;
}

std::optional<PressureTotals> parse_pressure(std::string_view text) {
  PressureTotals totals;
  for_each_line(text, [&](std::string_view line) {
    const auto words = split_words(line);
    if (words.empty()) return;
    for (std::size_t i = 1; i < words.size(); ++i) {
      if (!words[i].starts_with("total=")) continue;
      const auto value = to_u64(words[i].substr(6));
      if (words[0] == "some") totals.some_us = value;
      if (words[0] == "full") totals.full_us = value;
    }
  });
  if (!totals.some_us && !totals.full_us) return std::nullopt;
  return totals;
}

SystemLimits read_system_limits(const SystemOptions& options) {
  SystemLimits limits;
  if (const auto text = read_text_file(options.proc_root + "/stat"))
    if (const auto cpu = parse_proc_stat(*text)) limits.logical_cpus = cpu->cpus;
  if (limits.logical_cpus == 0) {
    const long online = sysconf(_SC_NPROCESSORS_ONLN);
    limits.logical_cpus = online > 0 ? static_cast<std::uint32_t>(online) : 0;
  }
  if (const auto text = read_text_file(options.proc_root + "/meminfo"))
    if (const auto mem = parse_meminfo(*text)) limits.host_memory_bytes = mem->total_bytes;
  const CgroupView view = find_cgroup(options);
  limits.cgroup = view.path;
  limits.cgroup_memory_bytes = cgroup_memory_limit(view);
  limits.cgroup_cpu_cores = cgroup_cpu_cores(view);
  return limits;
}

std::vector<std::unique_ptr<Probe>> make_procfs_probes(const SystemOptions& options) {
  std::vector<std::unique_ptr<Probe>> probes;
  probes.push_back(std::make_unique<ProcessProbe>(options));
  probes.push_back(std::make_unique<HostProbe>(options));
  CgroupView view = find_cgroup(options);
  if (view.version == 0) {
    // Why there are no cgroup tracks goes into the notes with the first sample.
    struct NoteOnce final : Probe {
      explicit NoteOnce(std::string text) : text(std::move(text)) {}
      void sample(std::uint64_t, SampleSink& sink) override {
        if (!noted) sink.note(text);
        noted = true;
      }
      std::string text;
      bool noted = false;
    };
    probes.push_back(std::make_unique<NoteOnce>(std::move(view.note)));
  } else {
    const std::uint64_t memory_limit = cgroup_memory_limit(view);
    const double cpu_cores = cgroup_cpu_cores(view);
    if (memory_limit > 0 || cpu_cores > 0.0)
      probes.push_back(std::make_unique<CgroupProbe>(std::move(view), memory_limit, cpu_cores));
  }
  probes.push_back(std::make_unique<DiskProbe>(options));
  probes.push_back(std::make_unique<NetProbe>(options));
  probes.push_back(std::make_unique<PressureProbe>(options));
  return probes;
}

}  // namespace nnprof::detail::system
