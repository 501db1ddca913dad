// The documents nnprof writes, each an ordered list of sections: the report of one profile
// here; the comparison and the model comparison beside it.
#pragma once

#include "report/document.hpp"
#include "report/report_data.hpp"

namespace nnprof::report {

/// The report of one profile: ReportData described by the profile report's sections, in order.
[[nodiscard]] Document profile_document(const ReportData& data);

}  // namespace nnprof::report
