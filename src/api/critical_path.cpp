// The public critical-path section writer: the text report's own section, for one path.
#include "nnprof/critical_path.hpp"

#include "io/critical_path_report.hpp"

namespace nnprof {

void write_critical_path(const Profile& profile, const CriticalPath& path, std::ostream& out) {
  io::write_critical_path_text(profile, path, out);
}

}  // namespace nnprof
