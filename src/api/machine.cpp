// machine_peaks(): the cached roofs of this machine, measured when missing or stale.
#include "collect/host_info.hpp"
#include "nnprof/roofline.hpp"

namespace nnprof {

std::optional<MachinePeaks> cached_machine_peaks(const std::string& path) {
  // A file from another machine (a shared home directory) or another CPU allotment does not
  // describe this one.
  auto cached = load_machine_peaks(path);
  if (cached && cached->cpu_model == collect::read_host_info().cpu_model && cached->threads == collect::usable_cpus())
    return cached;
  return std::nullopt;
}

MachinePeaks machine_peaks(bool force, const std::string& path, const MachineMeasureOptions& options) {
  if (!force) {
    if (auto cached = cached_machine_peaks(path)) return *cached;
  }
  MachinePeaks measured = measure_machine(options);
  save_machine_peaks(measured, path);
  return measured;
}

}  // namespace nnprof
