#include "nnprof/report.hpp"

#include <ostream>
#include <sstream>

#include "io/text_report.hpp"

namespace nnprof {

Report::Report(Profile profile) : profile_(std::make_shared<const Profile>(std::move(profile))) {}

std::string Report::text() const {
  std::ostringstream out;
  write_text(out);
  return out.str();
}

void Report::write_text(std::ostream& out) const { io::write_text_report(*profile_, out); }

std::ostream& operator<<(std::ostream& out, const Report& report) {
  report.write_text(out);
  return out;
}

}  // namespace nnprof
