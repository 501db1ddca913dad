// NVTX interop (ProfilerOptions::nvtx, NNPROF_NVTX=1): every scope becomes an NVTX range in
// the "nnprof" domain, seen here through a recording injection library standing in for Nsight
// Systems (tests/nvtx/nvtx_recorder.cpp).
#include <gtest/gtest.h>

#include <dlfcn.h>

#include <cstdlib>
#include <string>

#include "nnprof/profiler.hpp"
#include "nnprof/scope.hpp"

namespace {

std::string recorded() {
  void* lib = dlopen(NVTX_RECORDER_PATH, RTLD_NOW | RTLD_NOLOAD);
  if (lib == nullptr) return "(the recorder was not loaded)";
  auto events = reinterpret_cast<const char* (*)()>(dlsym(lib, "nvtx_recorder_events"));
  return events != nullptr ? events() : "(no nvtx_recorder_events)";
}

TEST(Nvtx, ScopesBecomeNamedRangesInTheNnprofDomain) {
  // Before the first NVTX call of the process: that is when NVTX looks for its tool.
  setenv("NVTX_INJECTION64_PATH", NVTX_RECORDER_PATH, 1);
  nnprof::ProfilerOptions options;
  options.nvtx = true;
  options.measure_overhead = false;
  nnprof::Profiler profiler(options);
  {
    NNPROF_SCOPE_IN(profiler, "step");
    { NNPROF_SCOPE_IN(profiler, "forward"); }
    profiler.start("backward");
    profiler.stop("backward");
  }
  const std::string events = recorded();
  // Alone in its process (ctest), the domain is created here; after the other test, it exists.
  const std::string ranges = "push step\npush forward\npop\npush backward\npop\npop\n";
  ASSERT_GE(events.size(), ranges.size()) << events;
  EXPECT_EQ(events.substr(events.size() - ranges.size()), ranges);
  EXPECT_NE(events.find("domain nnprof\n"), std::string::npos);
  EXPECT_EQ(profiler.call_count("forward"), 1u);  // and nnprof recorded them as always
}

TEST(Nvtx, OffByDefault) {
  setenv("NVTX_INJECTION64_PATH", NVTX_RECORDER_PATH, 1);
  nnprof::ProfilerOptions options;
  options.measure_overhead = false;
  nnprof::Profiler profiler(options);
  const std::string before = recorded();
  { NNPROF_SCOPE_IN(profiler, "quiet"); }
  EXPECT_EQ(recorded(), before);  // nothing emitted (NVTX not even initialised when alone)
}

}  // namespace
