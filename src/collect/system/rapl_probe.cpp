#include "collect/system/rapl_probe.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include <fmt/format.h>

namespace nnprof::detail::system {

namespace {

// RAPL's documented accuracy is not published by Intel or AMD; validation studies against
// external meters put the package counter within a few percent on Haswell and later, where it
// is measured rather than modelled (Hackenberg et al., "An Energy Efficiency Feature Survey of
// the Intel Haswell Processor", IPDPSW 2015; Khan et al., "RAPL in Action: Experiences in Using
// RAPL for Power Measurements", ACM TOMPECS 3(2), 2018), and DRAM likewise on Haswell servers
// (Desrochers et al., "A Validation of DRAM RAPL Power Measurements", MEMSYS 2016). ±5 % is
// our estimate from those studies, not a vendor figure.
constexpr double kRaplUncertainty = 0.05;

struct ReadResult {
  std::optional<std::uint64_t> value;
  int error = 0;  // errno when value is empty (0: the text was not a number)
};

// One unsigned number from a sysfs file, with the errno of a failed open or read: EACCES is
// how Linux 5.10+ says energy_uj is root's.
ReadResult read_number(const std::string& path) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return {std::nullopt, errno};
  char buffer[64];
  const ssize_t n = ::read(fd, buffer, sizeof buffer - 1);
  const int read_errno = errno;
  ::close(fd);
  if (n < 0) return {std::nullopt, read_errno};
  std::uint64_t value = 0;
  const auto [end, ec] = std::from_chars(buffer, buffer + n, value);
  if (ec != std::errc{} || end == buffer) return {std::nullopt, 0};
  return {value, 0};
}

std::string read_name(const std::filesystem::path& zone) {
  const int fd = ::open((zone / "name").c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return {};
  char buffer[128];
  const ssize_t n = ::read(fd, buffer, sizeof buffer);
  ::close(fd);
  if (n <= 0) return {};
  std::string name(buffer, static_cast<std::size_t>(n));
  while (!name.empty() && (name.back() == '\n' || name.back() == ' ')) name.pop_back();
  return name;
}

// "intel-rapl:3" -> {3}; "intel-rapl:0:2" -> {0, 2}; anything else (the "intel-rapl" control
// type itself, intel-rapl-mmio:*) -> empty.
std::vector<unsigned> zone_indices(const std::string& entry) {
  constexpr std::string_view prefix = "intel-rapl:";
  if (entry.rfind(prefix, 0) != 0) return {};
  std::vector<unsigned> out;
  std::string_view rest = std::string_view(entry).substr(prefix.size());
  while (true) {
    unsigned v = 0;
    const auto [end, ec] = std::from_chars(rest.data(), rest.data() + rest.size(), v);
    if (ec != std::errc{} || end == rest.data()) return {};
    out.push_back(v);
    rest.remove_prefix(static_cast<std::size_t>(end - rest.data()));
    if (rest.empty()) return out;
    if (rest.front() != ':') return {};
    rest.remove_prefix(1);
  }
}

struct Zone {
  std::vector<unsigned> indices;  // for a stable order: package 0, its subzones, package 1, ...
  std::string domain;
  std::string kind;
  std::string energy_path;
  std::uint64_t max_range_uj = 0;  // 0: unknown, a decrease cannot be told from a reset
  // Accumulated on the monitor thread.
  bool primed = false;
  std::uint64_t previous_uj = 0;
  std::uint64_t previous_ns = 0;
  double joules = 0.0;
  unsigned wraps = 0;
  unsigned unexplained_decreases = 0;
  unsigned failed_reads = 0;
};

class RaplProbe final : public Probe {
 public:
  RaplProbe(std::vector<Zone> zones, std::vector<std::string> notes) : zones_(std::move(zones)), notes_(std::move(notes)) {}

  void sample(std::uint64_t now_ns, SampleSink& sink) override {
    if (!noted_) {
      for (const std::string& n : notes_) sink.note(n);
      noted_ = true;
    }
    for (Zone& z : zones_) {
      const ReadResult r = read_number(z.energy_path);
      if (!r.value) {
        ++z.failed_reads;  // the next good read spans the gap: no energy is lost, only a sample
        continue;
      }
      const std::uint64_t current = *r.value;
      if (!z.primed) {
        z.primed = true;
      } else {
        std::uint64_t delta_uj = 0;
        if (current >= z.previous_uj) {
          delta_uj = current - z.previous_uj;
        } else if (z.max_range_uj >= z.previous_uj) {
          delta_uj = z.max_range_uj - z.previous_uj + current;
          ++z.wraps;
        } else {
          ++z.unexplained_decreases;  // no range to wrap at: the interval is left out
        }
        const double joules = static_cast<double>(delta_uj) / 1e6;
        z.joules += joules;
        if (now_ns > z.previous_ns)
          sink.set("energy." + z.domain + ".power", "W", joules / (static_cast<double>(now_ns - z.previous_ns) / 1e9));
      }
      z.previous_uj = current;
      z.previous_ns = now_ns;
    }
  }

  void energy(std::vector<EnergyDomain>& out) const override {
    for (const Zone& z : zones_) {
      if (!z.primed) continue;
      std::vector<std::string> parts;
      if (z.kind == "psys")
        parts.emplace_back("the whole platform (package, DRAM and more): overlaps the other domains, left out of sums");
      if (z.wraps > 0) parts.push_back(fmt::format("counter wrapped {} time{}", z.wraps, z.wraps == 1 ? "" : "s"));
      if (z.unexplained_decreases > 0)
        parts.push_back(fmt::format("{} interval{} left out: the counter went back and no max_energy_range_uj says where it wraps",
                                    z.unexplained_decreases, z.unexplained_decreases == 1 ? "" : "s"));
      if (z.failed_reads > 0)
        parts.push_back(fmt::format("{} read{} of energy_uj failed (the next read covered the gap)", z.failed_reads,
                                    z.failed_reads == 1 ? "" : "s"));
      std::string note;
      for (const std::string& p : parts) note += (note.empty() ? "" : "; ") + p;
      out.push_back(EnergyDomain{z.domain, z.kind, EnergyMethod::Rapl, z.joules, kRaplUncertainty,
                                 "energy." + z.domain + ".power", std::move(note)});
    }
  }

 private:
  std::vector<Zone> zones_;
  std::vector<std::string> notes_;
  bool noted_ = false;
};

}  // namespace

std::unique_ptr<Probe> make_rapl_probe(const SystemOptions& options) {
  namespace fs = std::filesystem;
  const fs::path root = fs::path(options.sys_root) / "class" / "powercap";
  std::error_code ec;
  if (!fs::is_directory(root, ec))
    return std::make_unique<RaplProbe>(std::vector<Zone>{},
                                       std::vector<std::string>{fmt::format(
                                           "no RAPL: {} is absent (VM or container); CPU energy is modelled", root.string())});

  std::vector<Zone> zones;
  for (const fs::directory_entry& entry : fs::directory_iterator(root, ec)) {
    const std::vector<unsigned> indices = zone_indices(entry.path().filename().string());
    if (indices.empty()) continue;
    const std::string name = read_name(entry.path());
    Zone z;
    z.indices = indices;
    if (indices.size() == 1 && name.rfind("package-", 0) == 0) {
      z.domain = name;
      z.kind = "cpu";
    } else if (name == "dram") {
      z.domain = fmt::format("dram-{}", indices.front());
      z.kind = "dram";
    } else if (indices.size() == 1 && name == "psys") {
      z.domain = "psys";
      z.kind = "psys";
    } else {
      continue;  // core, uncore: inside their package's figure
    }
    z.energy_path = (entry.path() / "energy_uj").string();
    if (const ReadResult max = read_number((entry.path() / "max_energy_range_uj").string()); max.value)
      z.max_range_uj = *max.value;
    zones.push_back(std::move(z));
  }
  std::sort(zones.begin(), zones.end(), [](const Zone& a, const Zone& b) { return a.indices < b.indices; });

  std::vector<std::string> notes;
  if (zones.empty()) {
    notes.push_back(fmt::format("no RAPL: {} has no intel-rapl package or DRAM zone; CPU energy is modelled", root.string()));
    return std::make_unique<RaplProbe>(std::move(zones), std::move(notes));
  }
  // A zone whose counter cannot be read now will not be readable later: permissions do not
  // change while we run. Said once, for all zones alike.
  std::vector<Zone> readable;
  bool denied = false;
  for (Zone& z : zones) {
    const ReadResult r = read_number(z.energy_path);
    if (r.value) {
      readable.push_back(std::move(z));
    } else if (r.error == EACCES || r.error == EPERM) {
      denied = true;
    } else {
      notes.push_back(fmt::format("RAPL: cannot read {} ({}); its energy is not measured", z.energy_path,
                                  r.error != 0 ? std::strerror(r.error) : "not a number"));
    }
  }
  if (denied)
    notes.push_back(
        "RAPL energy_uj is readable by root only since Linux 5.10 (CVE-2020-8694); run as root or make it readable "
        "(sudo chmod o+r /sys/class/powercap/intel-rapl:*/energy_uj /sys/class/powercap/intel-rapl:*/*/energy_uj); "
        "CPU energy is modelled");
  return std::make_unique<RaplProbe>(std::move(readable), std::move(notes));
}

}  // namespace nnprof::detail::system
