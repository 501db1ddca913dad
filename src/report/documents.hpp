// The documents nnprof writes, each an ordered list of sections: the report of one profile
// here; the comparison and the model comparison beside it.
#pragma once

#include <string_view>
#include <vector>

#include "report/document.hpp"
#include "report/report_data.hpp"

namespace nnprof::report {

/// The report of one profile: ReportData described by the profile report's sections, in order.
[[nodiscard]] Document profile_document(const ReportData& data);

/// The sections of `document` made to stand beside those of other profiles on one page
/// (PerformanceAnalysis::generate_report): ids (sections' and tables') prefixed with
/// `id_prefix`, titles with `title_prefix`, every scope in a sentence named by text (the page
/// has no one profile to resolve them), and without pictures (their scripts and element ids
/// assume one per page; each profile's own report draws them).
[[nodiscard]] std::vector<Section> sections_to_combine(const Document& document, std::string_view id_prefix,
                                                       std::string_view title_prefix);

}  // namespace nnprof::report
