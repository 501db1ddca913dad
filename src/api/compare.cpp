#include "nnprof/compare.hpp"

#include <ostream>
#include <string>
#include <string_view>

#include <fmt/format.h>

#include "analysis/compare.hpp"
#include "io/compare_report.hpp"
#include "io/formats.hpp"
#include "io/output_file.hpp"
#include "nnprof/error.hpp"
#include "record/internal_allocations.hpp"
#include "render/render.hpp"
#include "report/comparison.hpp"

namespace nnprof {

Comparison compare(const Profile& a, const Profile& b, const CompareOptions& options) {
  detail::InternalAllocations internal;
  if (!(options.alpha > 0.0 && options.alpha < 1.0))
    throw Error(fmt::format("the significance level must be between 0 and 1, not {}", options.alpha));
  if (!(options.min_change >= 0.0))
    throw Error(fmt::format("the minimum relevant change must be 0 or more, not {}", options.min_change));
  return analysis::compare_profiles(a, b, options);
}

void write_comparison(const Comparison& comparison, std::ostream& out, ReportFormat format) {
  detail::InternalAllocations internal;
  switch (io::checked_format(format, Document::Comparison)) {
    case ReportFormat::Text: render::write_text(report::comparison_document(comparison), out); break;
    case ReportFormat::Markdown: render::write_markdown(report::comparison_document(comparison), out); break;
    case ReportFormat::Html: render::write_html(report::comparison_document(comparison), out); break;
    case ReportFormat::Json: io::write_comparison_json(comparison, out); return;
    default: break;
  }
  // A closed pipe or a full disk shows only when the buffer is written.
  out.flush();
  if (!out) throw Error("could not write the comparison: the output stream failed (disk full, or a closed pipe?)");
}

void export_comparison(const Comparison& comparison, const std::string& path, ReportFormat format) {
  detail::InternalAllocations internal;
  if (format == ReportFormat::Auto) format = io::format_for_path(path, Document::Comparison);
  // Checked before the file is created, so that a bad format leaves no file behind.
  io::checked_format(format, Document::Comparison);
  io::write_file_atomically(path, [&](std::ostream& out) { write_comparison(comparison, out, format); });
}

}  // namespace nnprof
