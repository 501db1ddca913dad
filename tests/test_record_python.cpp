// `nnprof record --memory` on Debian's /usr/bin/python3 and on small non-PIE programs: a non-PIE
// executable whose canonical PLT entries make dlsym("malloc"/"free") point into it although its
// calls reach the hooks, and an interpreter that keeps its objects in arenas it maps itself.
#include <gtest/gtest.h>

#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <string>

#include "cli_run.hpp"
#include "nnprof/nnprof.hpp"
#include "test_directory.hpp"

namespace {

namespace fs = std::filesystem;

constexpr const char* kPython = "/usr/bin/python3";

fs::path out_dir() {
  static const fs::path dir = nnprof::testing::process_directory("record_python");
  return dir;
}

// 3,000 malloc'd bytes objects (over pymalloc's 512-byte limit) in a list whose header is a
// pymalloc object and whose item array is malloc'd; the list outlives the interpreter's
// finalization (one reference too many), so at the leak check the item array is referenced
// only from pymalloc's arena: reachable, not leaked (3.2 MB were called leaked before).
constexpr const char* kScript =
    "import ctypes; keep = [bytes(1000) for _ in range(3000)]; ctypes.pythonapi.Py_IncRef(ctypes.py_object(keep)); "
    "print('python done', len(keep))";

TEST(RecordPython, MemoryOnSystemPythonWarnsOfNoOtherAllocatorAndFindsNoFalseLeaks) {
  if (::access(kPython, X_OK) != 0) GTEST_SKIP() << kPython << " is not installed";
  ::unsetenv("PYTHONMALLOC");  // pymalloc, Python's default
  const std::string out = (out_dir() / "python.nnprof").string();
  const CliRun r = run_cli("record --memory -o " + out + " -- " + kPython + " -c \"" + kScript + "\"");
  ASSERT_EQ(r.status, 0) << r.output;
  EXPECT_NE(r.output.find("python done 3000"), std::string::npos) << r.output;
  EXPECT_EQ(r.output.find("another allocator"), std::string::npos) << r.output;
  const nnprof::Profile p = nnprof::Profile::load(out);
  ASSERT_TRUE(p.heap.tracked);
  EXPECT_GT(p.heap.alloc_count, 1000u) << "the hooks saw the interpreter's allocations";
  for (const nnprof::Diagnostic& d : p.diagnostics)
    EXPECT_EQ(d.message.find("another allocator"), std::string::npos) << d.message;
  ASSERT_TRUE(p.heap.reachability_checked);
  EXPECT_GT(p.heap.current_bytes, 3'000'000u) << "the kept list and its bytes objects are live at the end";
  EXPECT_LT(p.heap.leaked_bytes, 1u << 20) << "leaked " << p.heap.leaked_bytes << " bytes";
  EXPECT_GT(p.heap.reachable_bytes, 3'000'000u);
}

// The same canonical PLT entries without Python: no warning, and the allocations are seen.
TEST(RecordMemoryHooks, CanonicalPltEntriesOfANonPieExecutableAreNotAnotherAllocator) {
  const std::string out = (out_dir() / "nonpie.nnprof").string();
  const CliRun r = run_cli("record --memory -o " + out + " -- " NONPIE_FREE_PATH);
  ASSERT_EQ(r.status, 0) << r.output;
  EXPECT_NE(r.output.find("nonpie done"), std::string::npos) << r.output;
  EXPECT_EQ(r.output.find("another allocator"), std::string::npos) << r.output;
  EXPECT_GE(nnprof::Profile::load(out).heap.alloc_count, 1u);
}

// An executable that defines malloc and free itself does bypass the hooks: that is warned of.
TEST(RecordMemoryHooks, AnAllocatorInTheExecutableIsStillWarnedOf) {
  const std::string out = (out_dir() / "own_malloc.nnprof").string();
  const CliRun r = run_cli("record --memory -o " + out + " -- " OWN_MALLOC_PATH);
  EXPECT_NE(r.output.find("own malloc done"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("another allocator"), std::string::npos) << r.output;
}

}  // namespace
