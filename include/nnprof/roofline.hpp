// The roofline model of this machine: how many FLOP/s its cores can do (vectorised FMA, fp32
// and fp64) and how many bytes/s its memory delivers (a STREAM triad), measured once with
// `nnprof machine` and cached; then, for a piece of work with known FLOPs and bytes, whether
// it is compute- or memory-bound and how close it came to the roof it is under.
#pragma once

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>

#include "nnprof/config.hpp"

namespace nnprof {

enum class Precision : std::uint8_t { Fp32, Fp64 };

/// Measured peaks of this machine. Rates are per second; "one_core" figures are one thread.
struct MachinePeaks {
  std::string cpu_model;
  std::uint32_t threads = 0;  ///< threads the all-core figures used
  std::string isa;            ///< the vector code the FLOP kernels ran: "avx512f", "avx2+fma" or "scalar"
  double fp32_flops = 0.0, fp64_flops = 0.0;
  double fp32_flops_one_core = 0.0, fp64_flops_one_core = 0.0;
  double bandwidth = 0.0;           ///< bytes/s, triad on every thread
  double bandwidth_one_core = 0.0;  ///< bytes/s, triad on one thread
  std::int64_t measured_unix = 0;   ///< when, seconds since 1970

  [[nodiscard]] double peak_flops(Precision p, bool one_core = false) const noexcept {
    if (p == Precision::Fp64) return one_core ? fp64_flops_one_core : fp64_flops;
    return one_core ? fp32_flops_one_core : fp32_flops;
  }
  [[nodiscard]] double peak_bandwidth(bool one_core = false) const noexcept {
    return one_core ? bandwidth_one_core : bandwidth;
  }
  /// FLOPs per byte where the memory roof meets the compute roof.
  [[nodiscard]] double ridge_point(Precision p, bool one_core = false) const noexcept {
    const double bw = peak_bandwidth(one_core);
    return bw > 0.0 ? peak_flops(p, one_core) / bw : 0.0;
  }

  bool operator==(const MachinePeaks&) const = default;
};

struct MachineMeasureOptions {
  /// How long each of the three runs of each FLOP test lasts (the best run counts).
  std::chrono::milliseconds duration{100};
  /// Threads for the all-core figures; 0: one per logical CPU this process may run on.
  std::uint32_t threads = 0;
  /// Bytes of each of the triad's three arrays; 0: 128 MiB (64 MiB still read 25% fast here: the
  /// host's caches are larger than the VM says).
  std::uint64_t triad_array_bytes = 0;
};

/// Measures this machine (about two seconds with the defaults). Throws nnprof::Error when the
/// arrays cannot be allocated.
NNPROF_API MachinePeaks measure_machine(const MachineMeasureOptions& options = {});

/// $NNPROF_MACHINE_FILE, else $XDG_CACHE_HOME/nnprof/machine.json, else ~/.cache/nnprof/machine.json.
NNPROF_API std::string default_machine_file();
/// The peaks saved in `path`; nullopt when there is no such file. Throws nnprof::Error when
/// the file is not a machine file (corrupt, truncated, another version).
NNPROF_API std::optional<MachinePeaks> load_machine_peaks(const std::string& path);
/// Writes `peaks` to `path` (JSON), creating its directory. Throws nnprof::Error.
NNPROF_API void save_machine_peaks(const MachinePeaks& peaks, const std::string& path);
/// The peaks cached in `path` when they describe this machine (same CPU model and thread
/// count); nullopt when there are none or they are another machine's. Never measures.
/// Throws nnprof::Error when the file is not a machine file.
NNPROF_API std::optional<MachinePeaks> cached_machine_peaks(const std::string& path = default_machine_file());
/// The cached peaks when they describe this machine (same CPU model and thread count),
/// else a fresh measurement, saved for next time. `force` always measures.
NNPROF_API MachinePeaks machine_peaks(bool force = false, const std::string& path = default_machine_file(),
                                      const MachineMeasureOptions& options = {});

enum class RooflineBound : std::uint8_t { Memory, Compute };

/// Where one piece of work sits under the roofs.
struct RooflinePoint {
  double intensity = 0.0;   ///< FLOPs per byte
  double attained = 0.0;    ///< FLOP/s it achieved
  double attainable = 0.0;  ///< min(peak FLOP/s, intensity × bandwidth)
  double fraction = 0.0;    ///< attained / attainable (1 = on the roof)
  double ridge = 0.0;       ///< the machine's ridge point, FLOPs per byte
  RooflineBound bound = RooflineBound::Memory;
};

/// Classifies `flops` and `bytes` done in `seconds` against `peaks`: memory-bound below the
/// ridge point, compute-bound above it. `one_core` compares with the one-thread roofs (for
/// single-threaded work). Throws nnprof::Error when bytes or seconds are not positive.
NNPROF_API RooflinePoint roofline_point(double flops, double bytes, double seconds, const MachinePeaks& peaks,
                                        Precision precision = Precision::Fp32, bool one_core = false);

}  // namespace nnprof
