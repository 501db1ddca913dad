// Flame graph SVG: a self-contained interactive picture of the CPU samples, in the manner
// of flamegraph.pl. Frames are boxes as wide as their share of the samples, callers below
// callees; hovering shows the function, its module, samples and share; clicking zooms into
// a frame (with "Reset Zoom"); Ctrl-F (or "Search") highlights the frames whose name
// matches a regular expression and shows the share of samples they cover. Opens in any
// browser; no network access.
#pragma once

#include <iosfwd>
#include <string>

#include "io/collapsed_stacks.hpp"
#include "io/exporter.hpp"
#include "nnprof/profile.hpp"

namespace nnprof::io {

struct FlameGraphOptions {
  CpuStackOptions stacks;     ///< which samples, per-thread roots, samples or nanoseconds
  std::string title;          ///< empty: "CPU flame graph" ("Wall-clock flame graph" in wall mode)
  unsigned width = 1200;      ///< of the image, in pixels
  double min_frame_px = 0.1;  ///< frames narrower than this are left out (as flamegraph.pl does)
};

/// Writes the flame graph of the samples that pass `options.stacks`. Throws nnprof::Error
/// when the profile has no CPU samples or none passes the filter.
void write_flamegraph_svg(const Profile& profile, std::ostream& out, const FlameGraphOptions& options = {});

/// The "flamegraph" format (".svg"): write_flamegraph_svg of every sample.
class FlameGraphExporter final : public Exporter {
 public:
  FlameGraphExporter() noexcept : Exporter(ReportFormat::Flamegraph) {}
 private:
  void do_write(const Profile& profile, std::ostream& out, const ReportOptions& options) const override;
};

}  // namespace nnprof::io
