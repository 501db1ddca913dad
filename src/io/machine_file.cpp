// The machine file: measured roofs cached as JSON, so that `nnprof machine` runs once per
// machine rather than once per profile.
#include "io/machine_file.hpp"

#include <cstdlib>
#include <filesystem>
#include <fstream>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "io/output_file.hpp"
#include "nnprof/error.hpp"

namespace nnprof::io {

namespace {
constexpr int kMachineFileVersion = 1;
using Json = nlohmann::ordered_json;
}  // namespace

std::string default_machine_file() {
  if (const char* f = std::getenv("NNPROF_MACHINE_FILE"); f != nullptr && *f != '\0') return f;
  if (const char* x = std::getenv("XDG_CACHE_HOME"); x != nullptr && *x != '\0')
    return (std::filesystem::path(x) / "nnprof" / "machine.json").string();
  const char* home = std::getenv("HOME");
  return (std::filesystem::path(home != nullptr && *home != '\0' ? home : "/tmp") / ".cache" / "nnprof" /
          "machine.json")
      .string();
}

std::optional<MachinePeaks> load_machine_peaks(const std::string& path) {
  std::ifstream in(path);
  if (!in) return std::nullopt;
  auto corrupt = [&](const std::string& why) {
    return Error(fmt::format("'{}' is not a usable nnprof machine file ({}): delete it or run `nnprof machine --force`",
                             path, why));
  };
  Json j;
  try {
    j = Json::parse(in);
  } catch (const Json::exception& e) {
    throw corrupt(e.what());
  }
  try {
    if (j.at("version").get<int>() != kMachineFileVersion)
      throw corrupt(fmt::format("version {}, this nnprof reads {}", j.at("version").dump(), kMachineFileVersion));
    MachinePeaks p;
    p.cpu_model = j.at("cpu_model").get<std::string>();
    p.threads = j.at("threads").get<std::uint32_t>();
    p.isa = j.at("isa").get<std::string>();
    p.fp32_flops = j.at("fp32_flops").get<double>();
    p.fp64_flops = j.at("fp64_flops").get<double>();
    p.fp32_flops_one_core = j.at("fp32_flops_one_core").get<double>();
    p.fp64_flops_one_core = j.at("fp64_flops_one_core").get<double>();
    p.bandwidth = j.at("bandwidth_bytes_per_second").get<double>();
    p.bandwidth_one_core = j.at("bandwidth_one_core_bytes_per_second").get<double>();
    p.measured_unix = j.at("measured_unix").get<std::int64_t>();
    if (!(p.fp32_flops > 0 && p.fp64_flops > 0 && p.bandwidth > 0 && p.fp32_flops_one_core > 0 &&
          p.fp64_flops_one_core > 0 && p.bandwidth_one_core > 0))
      throw corrupt("a peak is not positive");
    return p;
  } catch (const Json::exception& e) {
    throw corrupt(e.what());
  }
}

void save_machine_peaks(const MachinePeaks& p, const std::string& path) {
  const std::filesystem::path target(path);
  std::error_code ec;
  if (target.has_parent_path()) std::filesystem::create_directories(target.parent_path(), ec);
  if (ec) throw Error(fmt::format("cannot create '{}': {}", target.parent_path().string(), ec.message()));
  Json j;
  j["version"] = kMachineFileVersion;
  j["cpu_model"] = p.cpu_model;
  j["threads"] = p.threads;
  j["isa"] = p.isa;
  j["fp32_flops"] = p.fp32_flops;
  j["fp64_flops"] = p.fp64_flops;
  j["fp32_flops_one_core"] = p.fp32_flops_one_core;
  j["fp64_flops_one_core"] = p.fp64_flops_one_core;
  j["bandwidth_bytes_per_second"] = p.bandwidth;
  j["bandwidth_one_core_bytes_per_second"] = p.bandwidth_one_core;
  j["measured_unix"] = p.measured_unix;
  write_file_atomically(path, [&](std::ostream& out) { out << j.dump(2) << '\n'; });
}

}  // namespace nnprof::io
