#include <gtest/gtest.h>

#include "nnprof/nnprof.hpp"

int compiled_out_work(nnprof::Profiler& profiler, int n);

namespace {

TEST(CompiledOut, MacrosExpandToNothing) {
  nnprof::Profiler profiler;
  EXPECT_EQ(compiled_out_work(profiler, 1000), 999 * 1000 / 2);
  const auto p = profiler.snapshot();
  EXPECT_TRUE(p.scopes.empty());
  EXPECT_EQ(nnprof::global_profiler().call_count("compiled_out_global"), 0u);
  EXPECT_EQ(p.completeness.scopes_recorded, 0u);
}

}  // namespace
