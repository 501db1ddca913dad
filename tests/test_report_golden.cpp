// The whole report of a saved demo profile, per format, against the file it must equal
// (tests/golden/). A change to any section or renderer shows here as a diff to review: when the
// change is meant, regenerate with NNPROF_UPDATE_GOLDEN=1 and commit the new files with it.
//   NNPROF_UPDATE_GOLDEN=1 build/release/bin/test_report_golden
#include <gtest/gtest.h>

#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>

#include "io/exporter_registry.hpp"
#include "nnprof/profile.hpp"

namespace nnprof {
namespace {

const std::string kGolden = NNPROF_GOLDEN_DIR;

std::string slurp(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream out;
  out << in.rdbuf();
  return out.str();
}

// The 1-based line and both lines where `a` and `b` first differ.
std::string first_difference(const std::string& expected, const std::string& actual) {
  std::istringstream e(expected), a(actual);
  std::string le, la;
  for (int line = 1;; ++line) {
    const bool more_e = static_cast<bool>(std::getline(e, le)), more_a = static_cast<bool>(std::getline(a, la));
    if (!more_e && !more_a) return "same lines, different line endings";
    if (!more_e || !more_a || le != la)
      return "line " + std::to_string(line) + ":\n  expected: " + (more_e ? le : "<end>") +
             "\n  actual:   " + (more_a ? la : "<end>");
  }
}

class ReportGolden : public ::testing::TestWithParam<const char*> {};

TEST_P(ReportGolden, DemoReportEqualsItsGoldenFile) {
  const std::string format = GetParam();
  const Profile profile = Profile::load(kGolden + "/demo_small.nnprof");
  const io::Exporter* exporter = io::find_exporter(format);
  ASSERT_NE(exporter, nullptr) << format;
  std::ostringstream out;
  exporter->write(profile, out);
  const std::string golden = kGolden + "/demo_small" + std::string(exporter->extension());
  if (const char* update = std::getenv("NNPROF_UPDATE_GOLDEN"); update != nullptr && std::string(update) == "1") {
    std::ofstream(golden, std::ios::binary) << out.str();
    GTEST_SKIP() << "wrote " << golden;
  }
  const std::string expected = slurp(golden);
  ASSERT_FALSE(expected.empty()) << golden << " is missing: run with NNPROF_UPDATE_GOLDEN=1 to write it";
  EXPECT_TRUE(out.str() == expected) << format << " report differs from " << golden << " at "
                                     << first_difference(expected, out.str())
                                     << "\nIf the change is meant, regenerate with NNPROF_UPDATE_GOLDEN=1.";
}

INSTANTIATE_TEST_SUITE_P(EveryReportFormat, ReportGolden, ::testing::Values("text", "markdown", "html", "json"));

}  // namespace
}  // namespace nnprof
