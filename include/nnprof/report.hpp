// Report: a profile ready to be read by a person.
#pragma once

#include <iosfwd>
#include <memory>
#include <string>

#include "nnprof/config.hpp"
#include "nnprof/profile.hpp"

namespace nnprof {

/// A snapshot of a profiler, rendered on demand. `std::cout << report` prints the text
/// summary: hot paths, most called, the call tree, memory and the profile's completeness.
class NNPROF_API Report {
 public:
  explicit Report(Profile profile);
  [[nodiscard]] const Profile& profile() const noexcept { return *profile_; }
  /// The text summary as a string.
  [[nodiscard]] std::string text() const;
  /// Writes the text summary to `out`.
  void write_text(std::ostream& out) const;

 private:
  std::shared_ptr<const Profile> profile_;
};

NNPROF_API std::ostream& operator<<(std::ostream& out, const Report& report);

}  // namespace nnprof
