// The Chrome trace-event JSON format, as read by Perfetto UI and chrome://tracing.
#pragma once

#include <iosfwd>

#include "io/exporter.hpp"

namespace nnprof::io {

/// Streams the trace: process and thread names, every span as a complete ("X") event
/// nested by time on its thread, memory counters as counter tracks, metadata in otherData.
void write_chrome_trace(const Profile& profile, std::ostream& out);

class ChromeTraceExporter final : public Exporter {
 public:
  ChromeTraceExporter() noexcept : Exporter(ReportFormat::Chrome) {}
 private:
  void do_write(const Profile& profile, std::ostream& out, const ReportOptions& options) const override;
};

}  // namespace nnprof::io
