// The public face of the model comparison (nnprof/model_compare.hpp).
#include "nnprof/model_compare.hpp"

#include <ostream>
#include <string>

#include <fmt/format.h>

#include "analysis/model_compare.hpp"
#include "io/formats.hpp"
#include "io/model_compare_report.hpp"
#include "io/output_file.hpp"
#include "nnprof/error.hpp"
#include "record/internal_allocations.hpp"
#include "render/render.hpp"
#include "report/model_comparison.hpp"

namespace nnprof {

const char* to_string(ScalingVerdict verdict) noexcept {
  switch (verdict) {
    case ScalingVerdict::Linear: return "linear";
    case ScalingVerdict::SubLinear: return "sub-linear";
    case ScalingVerdict::Poor: return "poor";
    case ScalingVerdict::Unknown: break;
  }
  return "unknown";
}

ModelComparison compare_models(const Profile& profile) {
  detail::InternalAllocations internal;
  return analysis::compare_models(profile);
}

void write_model_comparison(const ModelComparison& comparison, std::ostream& out, ReportFormat format) {
  detail::InternalAllocations internal;
  if (comparison.models.empty()) throw Error("the model comparison is empty: it compares no model");
  switch (io::checked_format(format, Document::ModelComparison)) {
    case ReportFormat::Text: render::write_text(report::model_comparison_document(comparison), out); break;
    case ReportFormat::Markdown: render::write_markdown(report::model_comparison_document(comparison), out); break;
    case ReportFormat::Html: render::write_html(report::model_comparison_document(comparison), out); break;
    case ReportFormat::Json: io::write_model_comparison_json(comparison, out); return;
    default: break;
  }
  // A closed pipe or a full disk shows only when the buffer is written.
  out.flush();
  if (!out)
    throw Error("could not write the model comparison: the output stream failed (disk full, or a closed pipe?)");
}

void export_model_comparison(const ModelComparison& comparison, const std::string& path, ReportFormat format) {
  detail::InternalAllocations internal;
  if (format == ReportFormat::Auto) format = io::format_for_path(path, Document::ModelComparison);
  // Checked before the file is created, so that a bad format leaves no file behind.
  io::checked_format(format, Document::ModelComparison);
  io::write_file_atomically(path, [&](std::ostream& out) { write_model_comparison(comparison, out, format); });
}

}  // namespace nnprof
