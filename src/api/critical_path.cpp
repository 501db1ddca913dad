// The public critical-path writer: the profile report's critical-path section, alone, as text.
#include "nnprof/critical_path.hpp"

#include <optional>
#include <ostream>
#include <vector>

#include "render/sentence_markup.hpp"
#include "record/internal_allocations.hpp"
#include "render/render.hpp"
#include "report/report_data.hpp"
#include "report/sections.hpp"

namespace nnprof {

void write_critical_path(const Profile& whole, const CriticalPath& path, std::ostream& out) {
  detail::InternalAllocations internal;
  std::optional<Profile> storage;
  const Profile& profile = render::with_capped_names(whole, storage);
  report::ReportData data;
  data.profile = &profile;
  data.critical_path = path;
  report::Document document;
  document.strings = &profile;
  report::sections::critical_path(data, document.sections);
  render::write_text_sections(document, out);
}

}  // namespace nnprof
