// `nnprof record --memory` on Debian's /usr/bin/python3: a non-PIE executable whose canonical
// PLT entries make dlsym("malloc"/"free") point into it although its calls reach the hooks,
// and an interpreter that keeps its objects in arenas it maps itself (pymalloc).
#include <gtest/gtest.h>

#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <string>

#include "cli_run.hpp"
#include "nnprof/nnprof.hpp"

namespace {

namespace fs = std::filesystem;

constexpr const char* kPython = "/usr/bin/python3";

fs::path out_dir() {
  static const fs::path dir = [] {
    fs::path d = fs::temp_directory_path() / ("nnprof_record_python_" + std::to_string(::getpid()));
    fs::remove_all(d);
    fs::create_directories(d);
    return d;
  }();
  return dir;
}

// A program that builds and keeps many small objects (pymalloc) and some large ones (malloc).
constexpr const char* kScript =
    "import sys; keep = [str(i) * 3 for i in range(200000)]; big = [bytes(4096) for _ in range(200)]; "
    "print('python done', len(keep), len(big))";

TEST(RecordPython, MemoryOnSystemPythonWarnsOfNoOtherAllocatorAndFindsNoFalseLeaks) {
  if (::access(kPython, X_OK) != 0) GTEST_SKIP() << kPython << " is not installed";
  ::unsetenv("PYTHONMALLOC");  // pymalloc, Python's default
  const std::string out = (out_dir() / "python.nnprof").string();
  const CliRun r = run_cli("record --memory -o " + out + " -- " + kPython + " -c \"" + kScript + "\"");
  ASSERT_EQ(r.status, 0) << r.output;
  EXPECT_NE(r.output.find("python done 200000 200"), std::string::npos) << r.output;
  EXPECT_EQ(r.output.find("another allocator"), std::string::npos) << r.output;
  const nnprof::Profile p = nnprof::Profile::load(out);
  ASSERT_TRUE(p.heap.tracked);
  EXPECT_GT(p.heap.alloc_count, 1000u) << "the hooks saw the interpreter's allocations";
  for (const nnprof::Diagnostic& d : p.diagnostics)
    EXPECT_EQ(d.message.find("another allocator"), std::string::npos) << d.message;
  ASSERT_TRUE(p.heap.reachability_checked);
  // Before pymalloc's arenas were roots, ~6 MiB of the interpreter's blocks were "leaked".
  EXPECT_LT(p.heap.leaked_bytes, 1u << 20) << "leaked " << p.heap.leaked_bytes << " bytes";
  EXPECT_GT(p.heap.reachable_bytes, 0u);
}

}  // namespace
