// machine_peaks(): the cached roofs of this machine, measured when missing or stale.
#include "collect/host_info.hpp"
#include "nnprof/roofline.hpp"

namespace nnprof {

MachinePeaks machine_peaks(bool force, const std::string& path, const MachineMeasureOptions& options) {
  if (!force) {
    // A file from another machine (a shared home directory) or another CPU allotment is
    // measured again rather than trusted.
    if (const auto cached = load_machine_peaks(path);
        cached && cached->cpu_model == collect::read_host_info().cpu_model &&
        cached->threads == collect::usable_cpus())
      return *cached;
  }
  MachinePeaks measured = measure_machine(options);
  save_machine_peaks(measured, path);
  return measured;
}

}  // namespace nnprof
