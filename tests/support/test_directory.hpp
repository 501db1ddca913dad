// A fixture that gives each test a fresh directory of its own (named after the test and the
// process, so parallel CTest runs never share one), removed when the test ends.
#pragma once

#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <stdexcept>
#include <string>
#include <utility>

namespace nnprof::testing {

class TestDirectory : public ::testing::Test {
 protected:
  explicit TestDirectory(std::string prefix) : prefix_(std::move(prefix)) {}
  void SetUp() override {
    dir_ = std::filesystem::temp_directory_path() /
           ("nnprof_" + prefix_ + "_" + std::to_string(getpid()) + "_" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    std::filesystem::remove_all(dir_);
    std::filesystem::create_directories(dir_);
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }
  [[nodiscard]] std::string path(const std::string& name) const { return (dir_ / name).string(); }

  std::filesystem::path dir_;

 private:
  std::string prefix_;
};

/// A fresh directory for this test process, `nnprof_<prefix>_<pid>` in the temporary
/// directory, emptied and made anew on each call: call it once (keep the result in a static)
/// for tests that share files across test cases.
inline std::filesystem::path process_directory(const std::string& prefix) {
  std::filesystem::path d = std::filesystem::temp_directory_path() / ("nnprof_" + prefix + "_" + std::to_string(getpid()));
  std::filesystem::remove_all(d);
  std::filesystem::create_directories(d);
  return d;
}

/// A fresh directory `<prefix>-XXXXXX` in the temporary directory (mkdtemp), removed with
/// everything in it when the object goes: for helpers that are not fixtures (a browser's
/// profile, a Prometheus server's data).
class ScratchDirectory {
 public:
  explicit ScratchDirectory(const std::string& prefix) {
    std::string pattern = (std::filesystem::temp_directory_path() / (prefix + "-XXXXXX")).string();
    if (mkdtemp(pattern.data()) == nullptr) throw std::runtime_error("mkdtemp failed for " + pattern);
    path_ = pattern;
  }
  ~ScratchDirectory() {
    std::error_code ignored;
    std::filesystem::remove_all(path_, ignored);
  }
  ScratchDirectory(const ScratchDirectory&) = delete;
  ScratchDirectory& operator=(const ScratchDirectory&) = delete;
  [[nodiscard]] const std::filesystem::path& path() const { return path_; }

 private:
  std::filesystem::path path_;
};

/// The whole of a file, as bytes; empty when it cannot be read.
inline std::string read_whole_file(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

}  // namespace nnprof::testing
