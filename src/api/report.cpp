#include "nnprof/report.hpp"

#include <ostream>
#include <sstream>

#include <fmt/format.h>

#include "io/exporter_registry.hpp"
#include "io/formats.hpp"
#include "io/output_file.hpp"
#include "io/profile_reports.hpp"
#include "nnprof/error.hpp"
#include "record/internal_allocations.hpp"

namespace nnprof {

namespace {
const io::Exporter& exporter_for(ReportFormat format, const std::string& path) {
  if (format == ReportFormat::Auto) format = io::format_for_path(path, Document::Profile);
  const io::Exporter* e = io::find_exporter(format);
  if (e == nullptr) throw Error(fmt::format("the {} format is not available in this build of nnprof", to_string(format)));
  return *e;
}
}  // namespace

Report::Report(Profile profile, ReportOptions options)
    : profile_(std::make_shared<const Profile>(std::move(profile))), options_(options) {}

std::string Report::text() const {
  detail::InternalAllocations internal;
  std::ostringstream out;
  write_text(out);
  return out.str();
}

void Report::write_text(std::ostream& out) const {
  detail::InternalAllocations internal;
  io::write_text_report(*profile_, out, options_);
}

void Report::write(std::ostream& out, ReportFormat format) const {
  detail::InternalAllocations internal;
  if (format == ReportFormat::Auto) throw Error("Report::write needs an explicit format");
  exporter_for(format, {}).write(*profile_, out, options_);
}

void Report::export_to(const std::string& path, ReportFormat format) const {
  detail::InternalAllocations internal;
  const io::Exporter& e = exporter_for(format, path);
  io::write_file_atomically(path, [&](std::ostream& out) { e.write(*profile_, out, options_); });
}

std::ostream& operator<<(std::ostream& out, const Report& report) {
  report.write_text(out);
  return out;
}

}  // namespace nnprof
