// The roofs of this machine: measured (src/collect/machine), cached in the machine file
// (src/io/machine_file.cpp), and machine_peaks(), which measures when the cache is missing or stale.
#include "collect/host_info.hpp"
#include "collect/machine/measure_peaks.hpp"
#include "io/machine_file.hpp"
#include "nnprof/roofline.hpp"

namespace nnprof {

MachinePeaks measure_machine(const MachineMeasureOptions& options) { return collect::measure_machine(options); }

std::string default_machine_file() { return io::default_machine_file(); }

std::optional<MachinePeaks> load_machine_peaks(const std::string& path) { return io::load_machine_peaks(path); }

void save_machine_peaks(const MachinePeaks& peaks, const std::string& path) { io::save_machine_peaks(peaks, path); }

std::optional<MachinePeaks> cached_machine_peaks(const std::string& path) {
  // A file from another machine (a shared home directory) or another CPU allotment does not
  // describe this one.
  auto cached = io::load_machine_peaks(path);
  if (cached && cached->cpu_model == collect::read_host_info().cpu_model && cached->threads == collect::usable_cpus())
    return cached;
  return std::nullopt;
}

MachinePeaks machine_peaks(bool force, const std::string& path, const MachineMeasureOptions& options) {
  if (!force) {
    if (auto cached = cached_machine_peaks(path)) return *cached;
  }
  MachinePeaks measured = collect::measure_machine(options);
  io::save_machine_peaks(measured, path);
  return measured;
}

}  // namespace nnprof
