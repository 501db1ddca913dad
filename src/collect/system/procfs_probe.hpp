// The system monitor's readers of procfs and sysfs: the process (CPU, RSS, storage I/O), the
// machine (CPU, memory, disks, network, pressure stall information) and the process's cgroup.
// Every file is read under SystemOptions::proc_root / sys_root, so tests build a fake tree and
// containers may point at the host's. The parsers take the file's text and are free functions,
// tested on their own; the probes keep the previous counters and turn them into rates.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "collect/system/probe.hpp"
#include "nnprof/system.hpp"
#include "nnprof/system_profile.hpp"

namespace nnprof::detail::system {

/// The whole of a (proc or sys) file; nullopt with `error` set ("No such file or directory")
/// when it cannot be opened or read. procfs files report size 0, so this reads to the end.
std::optional<std::string> read_text_file(const std::string& path, std::string* error = nullptr);

/// utime and stime of /proc/<pid>/stat, in clock ticks (sysconf(_SC_CLK_TCK)).
struct ProcessCpuTicks {
  std::uint64_t user = 0;
  std::uint64_t system = 0;
};
/// Parses /proc/self/stat. The command name (field 2) may hold spaces and parentheses, so the
/// fields are counted from its last ')'.
std::optional<ProcessCpuTicks> parse_process_stat(std::string_view text);

/// VmRSS of /proc/self/status in bytes (the file gives kB).
std::optional<std::uint64_t> parse_status_rss_bytes(std::string_view text);

/// read_bytes and write_bytes of /proc/self/io: what the process caused to be fetched from or
/// sent to storage (page cache hits and tmpfs are not counted).
struct ProcessIo {
  std::uint64_t read_bytes = 0;
  std::uint64_t write_bytes = 0;
};
std::optional<ProcessIo> parse_process_io(std::string_view text);

/// The aggregate "cpu" line of /proc/stat in USER_HZ ticks, and how many "cpuN" lines follow.
struct CpuTimes {
  std::uint64_t total = 0;  ///< user + nice + system + idle + iowait + irq + softirq + steal
  std::uint64_t idle = 0;   ///< idle + iowait: waiting on I/O is not work
  std::uint32_t cpus = 0;   ///< logical CPUs listed (online ones)
};
/// guest and guest_nice are left out of the total: the kernel already counts them in user and nice.
std::optional<CpuTimes> parse_proc_stat(std::string_view text);

/// MemTotal and MemAvailable of /proc/meminfo, in bytes.
struct MemInfo {
  std::uint64_t total_bytes = 0;
  std::uint64_t available_bytes = 0;
};
std::optional<MemInfo> parse_meminfo(std::string_view text);

/// The process's cgroup v2 path from /proc/self/cgroup (the "0::/path" line); nullopt when
/// there is no v2 line (a cgroup v1 only system).
std::optional<std::string> parse_cgroup_v2_path(std::string_view text);
/// The path of the process in the cgroup v1 hierarchy holding `controller` ("memory", "cpu"),
/// from lines like "4:memory:/docker/abc" or "2:cpu,cpuacct:/x"; nullopt when absent.
std::optional<std::string> parse_cgroup_v1_path(std::string_view text, std::string_view controller);

/// A cgroup v2 limit file holding a number or "max" (memory.max). 0: no limit.
std::optional<std::uint64_t> parse_cgroup_limit(std::string_view text);
/// cgroup v2 cpu.max ("quota period", "max period") as cores; 0: no limit.
std::optional<double> parse_cpu_max(std::string_view text);
/// usage_usec of cgroup v2 cpu.stat: the CPU time the cgroup's tasks used, in µs.
std::optional<std::uint64_t> parse_cpu_stat_usage_usec(std::string_view text);
/// A file holding one unsigned number (cgroup v1 memory.usage_in_bytes, cpuacct.usage).
std::optional<std::uint64_t> parse_single_number(std::string_view text);

/// One line of /proc/diskstats: the counters that make the disk tracks.
struct DiskCounters {
  std::string device;
  std::uint64_t reads_completed = 0;
  std::uint64_t sectors_read = 0;  ///< of 512 bytes, whatever the device's sector size
  std::uint64_t writes_completed = 0;
  std::uint64_t sectors_written = 0;
  std::uint64_t io_ticks_ms = 0;   ///< time the device had I/O in flight (field 13)
};
std::vector<DiskCounters> parse_diskstats(std::string_view text);

/// Received and transmitted bytes of each interface in /proc/net/dev.
struct NetCounters {
  std::string interface;
  std::uint64_t rx_bytes = 0;
  std::uint64_t tx_bytes = 0;
};
std::vector<NetCounters> parse_net_dev(std::string_view text);

/// The "total=" stall times (µs) of a /proc/pressure file; "full" is absent from the cpu file
/// of older kernels.
struct PressureTotals {
  std::optional<std::uint64_t> some_us;
  std::optional<std::uint64_t> full_us;
};
std::optional<PressureTotals> parse_pressure(std::string_view text);

/// The limits percentages are computed against: the host's CPUs and memory, the cgroup's
/// cpu.max and memory.max (cgroup v2, or v1's cfs quota and memory.limit_in_bytes).
SystemLimits read_system_limits(const SystemOptions& options);

/// The procfs, sysfs and cgroup probes, in the order of the track list of
/// nnprof/system_profile.hpp.
std::vector<std::unique_ptr<Probe>> make_procfs_probes(const SystemOptions& options);

}  // namespace nnprof::detail::system
