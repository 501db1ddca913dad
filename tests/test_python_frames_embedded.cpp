// Python frames with the CPU sampler started from inside the process (what the nnprof Python
// module's start_sampling() does): this test embeds CPython 3.11 (it links libpython; libnnprof
// never does), starts a CpuProfiler, runs Python code on the main thread and on a thread
// created after the start, and reads the Python frames back from the profile.
//
// It also replaces malloc and free, as tests/test_sampler_no_alloc.cpp does, and counts the
// calls made while a thread runs the sampler's handler: the Python walk must make none.
#include <Python.h>
#include <gtest/gtest.h>

#include <atomic>
#include <cerrno>
#include <cstdint>
#include <map>
#include <string>

#include "collect/cpu/cpu_sampler.hpp"
#include "nnprof/nnprof.hpp"

#include "handler_allocations.hpp"

using nnprof::testing::g_allocator_calls_in_handler;

namespace {

const char* kScript = R"(
import threading

def hot(n):
    s = 0
    for i in range(n):
        s += i * i
    return s

def in_thread():
    hot(3_000_000)

t = threading.Thread(target=in_thread)
t.start()
hot(3_000_000)
t.join()
)";

// Samples whose stack holds a frame named `name`, and the lines those frames name.
struct Seen {
  std::size_t samples = 0;
  std::map<std::uint32_t, std::size_t> lines;
};

Seen samples_in(const nnprof::Profile& p, const std::string& name) {
  Seen seen;
  for (const nnprof::CpuSample& s : p.cpu_samples) {
    if (s.stack >= p.stacks.size()) continue;
    for (const std::uint32_t f : p.stacks[s.stack].frames) {
      const nnprof::StackFrame& frame = p.frames[f];
      if (frame.function == nnprof::kNone || p.strings[frame.function] != name) continue;
      ++seen.samples;
      ++seen.lines[frame.line];
      break;
    }
  }
  return seen;
}

TEST(PythonFramesEmbedded, SamplerStartedInsideThePythonProcessShowsItsFramesOnEveryThread) {
  Py_Initialize();
  nnprof::Profiler profiler;
  nnprof::CpuProfilerOptions options;
  options.hz = 500;
  nnprof::Profile p;
  {
    nnprof::CpuProfiler sampler(profiler, options);
    ASSERT_EQ(PyRun_SimpleString(kScript), 0);
    sampler.stop();
    p = profiler.snapshot();
  }
  Py_FinalizeEx();
  ASSERT_TRUE(p.cpu.sampled);
  const Seen hot = samples_in(p, "hot (<string>:4)");
  const Seen thread = samples_in(p, "in_thread (<string>:10)");
  EXPECT_GT(hot.samples, 50u) << p.cpu.samples << " samples";
  EXPECT_GT(thread.samples, 10u) << "the thread started after the sampler is sampled, with its Python frames";
  for (const auto& [line, count] : hot.lines) EXPECT_TRUE(line >= 5 && line <= 8) << "line " << line << " x" << count;
  for (const nnprof::Diagnostic& d : p.diagnostics) EXPECT_EQ(d.message.find("CPython"), std::string::npos) << d.message;
  EXPECT_EQ(g_allocator_calls_in_handler.load(), 0u) << "the handler allocated or freed while reading Python frames";
}

}  // namespace
