// The machine file: measured roofs cached as JSON (nnprof::load_machine_peaks and neighbours).
#pragma once

#include <optional>
#include <string>

#include "nnprof/roofline.hpp"

namespace nnprof::io {

/// $NNPROF_MACHINE_FILE, else $XDG_CACHE_HOME/nnprof/machine.json, else ~/.cache/nnprof/machine.json.
std::string default_machine_file();
/// The peaks saved in `path`; nullopt when there is no such file. Throws nnprof::Error when
/// the file is not a machine file.
std::optional<MachinePeaks> load_machine_peaks(const std::string& path);
/// Writes `peaks` to `path` atomically, creating its directory.
void save_machine_peaks(const MachinePeaks& peaks, const std::string& path);

}  // namespace nnprof::io
