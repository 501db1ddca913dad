// Python frames in CPU samples (collect/cpu/python_frames.hpp): CPython 3.11's location table
// decoded as CPython decodes it, and the splice rule that puts the Python frames in place of
// the interpreter's eval activations. Recording real Python programs is tests/python/
// test_python_frames.py.
#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <string>
#include <tuple>
#include <vector>

#include "analysis/function_name.hpp"
#include "nnprof/profile.hpp"
#include "nnprof/sampling_profiler.hpp"
#include "collect/cpu/python_frames.hpp"

namespace {

using nnprof::collect::kPythonFrameTag;
using nnprof::collect::PythonInterpreter;
using nnprof::collect::PythonStacks;

// co_linetable and co_lines() of f in this source, from Debian's python3 3.11.2 (compiled as
// "gen_src.py"): short forms, one-line forms, long forms with lines going back (the list
// comprehension's continuation line) and a line continued with a backslash.
//
//   2 def f(a):
//   3     x = a + 1
//   4
//   5
//   6     y = [i
//   7          for i in range(3)]
//   8     if x:
//   9         return x + (backslash)
//  10             len(y)
//  11     return 0
const unsigned char kTable[] = {
    0x80, 0x00, 0xd8, 0x08, 0x09, 0x88, 0x41, 0x89, 0x05, 0x80, 0x41, 0xf0, 0x06, 0x01, 0x09, 0x1c, 0xf0,
    0x00, 0x01, 0x09, 0x1c, 0xdd, 0x12, 0x17, 0x98, 0x01, 0x91, 0x28, 0x94, 0x28, 0xf0, 0x03, 0x01, 0x09,
    0x1c, 0xf1, 0x00, 0x01, 0x09, 0x1c, 0xf4, 0x00, 0x01, 0x09, 0x1c, 0x80, 0x41, 0xe0, 0x07, 0x08, 0xf0,
    0x00, 0x02, 0x05, 0x13, 0xd8, 0x0f, 0x10, 0xdd, 0x0c, 0x0f, 0x90, 0x01, 0x89, 0x46, 0x8c, 0x46, 0xf1,
    0x03, 0x01, 0x10, 0x13, 0xf0, 0x00, 0x01, 0x09, 0x13, 0xe0, 0x0b, 0x0c, 0x88, 0x31};
const std::tuple<int, int, int> kLines[] = {
    {0, 2, 2},    {2, 4, 3},    {4, 6, 3},     {6, 10, 3},    {10, 12, 3},  {12, 14, 6},  {14, 16, 6},
    {16, 28, 7},  {28, 30, 7},  {30, 34, 7},   {34, 44, 7},   {44, 46, 6},  {46, 50, 6},  {50, 60, 6},
    {60, 62, 6},  {62, 64, 8},  {64, 66, 8},   {66, 68, 9},   {68, 80, 10}, {80, 82, 10}, {82, 86, 10},
    {86, 96, 10}, {96, 100, 9}, {100, 102, 9}, {102, 104, 11}, {104, 106, 11}};

TEST(PythonFrames, LineTableDecodesAsCPythonDoes) {
  for (const auto& [begin, end, line] : kLines)
    for (int address = begin; address < end; address += 2)
      EXPECT_EQ(nnprof::collect::python311_line(kTable, sizeof kTable, 2, address), static_cast<std::uint32_t>(line))
          << "byte offset " << address;
  EXPECT_EQ(nnprof::collect::python311_line(kTable, sizeof kTable, 2, -2), 2u) << "before the first instruction";
  EXPECT_EQ(nnprof::collect::python311_line(kTable, sizeof kTable, 2, 106), 0u) << "past the table";
  EXPECT_EQ(nnprof::collect::python311_line(kTable, 20, 2, 80), 0u) << "a table cut short names no line";
}

// A Python section as the handler writes it: descriptions, one word per frame, the trailer.
struct Section {
  std::vector<std::uint64_t> words;
  std::uint32_t descriptions = 0;
  std::vector<std::uint64_t> frames;

  void describe(std::uint32_t id, const std::string& qualname, const std::string& file, std::int32_t firstlineno) {
    words.push_back((std::uint64_t{id} << 32) | (std::uint64_t{qualname.size()} << 16) | file.size());
    words.push_back(static_cast<std::uint32_t>(firstlineno));
    for (const std::string* text : {&qualname, &file}) {
      std::vector<std::uint64_t> packed((text->size() + 7) / 8, 0);
      std::memcpy(packed.data(), text->data(), text->size());
      words.insert(words.end(), packed.begin(), packed.end());
    }
    ++descriptions;
  }
  void frame(std::uint32_t id, std::uint32_t line, bool entry) {
    frames.push_back((std::uint64_t{id} << 32) | (entry ? 1u << 31 : 0u) | line);
  }
  std::vector<std::uint64_t> finish(bool whole_chain = false) const {
    std::vector<std::uint64_t> out = words;
    out.insert(out.end(), frames.begin(), frames.end());
    out.push_back((std::uint64_t{descriptions} << 48) | (whole_chain ? std::uint64_t{1} << 47 : 0) |
                  (std::uint64_t{frames.size()} << 32) | (out.size() + 1));
    return out;
  }
};

// The interpreter's object spans [0x1000, 0x9000); its eval loop is [0x2000, 0x3000).
PythonInterpreter fake_interpreter() {
  PythonInterpreter interp;
  interp.readable = true;
  interp.eval_begin = 0x2000;
  interp.eval_end = 0x3000;
  interp.module_begin = 0x1000;
  interp.module_end = 0x9000;
  return interp;
}

std::vector<std::string> labels(const PythonStacks& stacks, const std::vector<std::uintptr_t>& stack) {
  std::vector<std::string> out;
  for (const std::uintptr_t a : stack) {
    if (nnprof::collect::is_python_frame_address(a)) {
      const auto& s = stacks.frames().at(a & ~kPythonFrameTag);
      out.push_back(s.function + "@" + std::to_string(s.line));
    } else {
      out.push_back(std::to_string(a));
    }
  }
  return out;
}

TEST(PythonFrames, EachEvalActivationIsReplacedByTheFramesItRanAndInterpreterFramesBetweenAreHidden) {
  PythonStacks stacks;
  stacks.set_interpreter(fake_interpreter());
  Section s;
  s.describe(7, "Linear.forward", "/lib/torch/nn/linear.py", 113);
  s.describe(8, "train", "/work/train.py", 10);
  s.describe(9, "<module>", "/work/train.py", 1);
  s.describe(10, "collate", "/work/train.py", 30);
  // Innermost first: collate ran by a C call of the eval loop (a callback from native code),
  // then forward and train in one eval activation, then <module> in the outermost one.
  s.frame(10, 33, true);
  s.frame(7, 114, false);
  s.frame(8, 12, true);
  s.frame(9, 40, true);
  const std::vector<std::uint64_t> section = s.finish();
  // Native, innermost first: the interpreter's helper (hidden), eval (collate), a C callback
  // in the extension (kept), eval (forward, train), the interpreter's vectorcall (hidden), a
  // native operator (kept), the interpreter's call dispatch (hidden), eval (<module>), then
  // Py_RunMain and main, outward of every Python frame (kept).
  const std::vector<std::uintptr_t> native = {0x1500, 0x2100, 0xA000, 0x2200, 0x1600, 0xB000, 0x1700,
                                              0x2300, 0x1800, 0x1900};
  std::vector<std::uintptr_t> out(64);
  out.resize(stacks.splice(section.data(), static_cast<std::uint32_t>(section.size()), native.data(), native.size(),
                           out.data(), out.size()));
  // 0xA000 and 0xB000 are not the interpreter's: they stay where they were.
  EXPECT_EQ(labels(stacks, out),
            (std::vector<std::string>{"collate (train.py:30)@33", std::to_string(0xA000), "Linear.forward (linear.py:113)@114",
                                      "train (train.py:10)@12", std::to_string(0xB000), "<module> (train.py:1)@40",
                                      std::to_string(0x1800), std::to_string(0x1900)}));
  ASSERT_GE(stacks.frames().size(), 2u);
  EXPECT_EQ(stacks.frames()[1].file, "/lib/torch/nn/linear.py") << "frames are kept in order of first use";
  EXPECT_EQ(stacks.frames()[1].module, "/lib/torch/nn/linear.py") << "a Python frame's module is its file";
}

TEST(PythonFrames, DescriptionsOfEarlierRecordsAreRememberedAndAStackCutShortKeepsItsPythonFramesOutermost) {
  PythonStacks stacks;
  stacks.set_interpreter(fake_interpreter());
  Section first;
  first.describe(21, "outer", "/w/a.py", 5);
  first.describe(22, "inner", "/w/a.py", 9);
  first.frame(22, 10, false);
  first.frame(21, 6, true);
  const std::vector<std::uint64_t> a = first.finish();
  std::vector<std::uintptr_t> out(64);
  const std::vector<std::uintptr_t> native = {0x2100, 0x1800};
  out.resize(stacks.splice(a.data(), static_cast<std::uint32_t>(a.size()), native.data(), native.size(), out.data(),
                           out.size()));
  EXPECT_EQ(labels(stacks, out), (std::vector<std::string>{"inner (a.py:9)@10", "outer (a.py:5)@6", std::to_string(0x1800)}));

  // A later sample of the same thread names the code objects by id only. Its native stack
  // ends early (no eval activation found): the Python frames go on the outer end.
  Section later;
  later.frame(22, 11, false);
  later.frame(0, 0, true);  // a frame pushed but not started: it closes a group, shows nothing
  later.frame(21, 7, true);
  const std::vector<std::uint64_t> b = later.finish();
  const std::vector<std::uintptr_t> leaf_only = {0xC000};
  out.assign(64, 0);
  out.resize(stacks.splice(b.data(), static_cast<std::uint32_t>(b.size()), leaf_only.data(), leaf_only.size(),
                           out.data(), out.size()));
  EXPECT_EQ(labels(stacks, out),
            (std::vector<std::string>{std::to_string(0xC000), "inner (a.py:9)@11", "outer (a.py:5)@7"}));
}

TEST(PythonFrames, AnEvalCallEnteringOrLeavingIsMatchedFromTheOuterEndWhenTheWalkWasWhole) {
  PythonStacks stacks;
  stacks.set_interpreter(fake_interpreter());
  Section s;
  s.describe(31, "step", "/w/b.py", 3);
  s.describe(32, "<module>", "/w/b.py", 1);
  s.frame(31, 4, true);  // run by a C call from the extension frame 0xA000
  s.frame(32, 9, true);
  // Native: an eval activation whose frame is not linked yet (innermost), the extension's
  // callback, the eval running step, the interpreter's dispatch, the eval running <module>.
  const std::vector<std::uintptr_t> native = {0x2100, 0xA000, 0x2200, 0x1700, 0x2300, 0x1900};
  std::vector<std::uintptr_t> out(64);
  const std::vector<std::uint64_t> whole = s.finish(true);
  out.resize(stacks.splice(whole.data(), static_cast<std::uint32_t>(whole.size()), native.data(), native.size(),
                           out.data(), out.size()));
  EXPECT_EQ(labels(stacks, out), (std::vector<std::string>{std::to_string(0xA000), "step (b.py:3)@4",
                                                           "<module> (b.py:1)@9", std::to_string(0x1900)}));
  // A walk cut short (its outer frames missing) matches from the inner end instead.
  const std::vector<std::uint64_t> cut = s.finish(false);
  out.assign(64, 0);
  out.resize(stacks.splice(cut.data(), static_cast<std::uint32_t>(cut.size()), native.data(), native.size(),
                           out.data(), out.size()));
  EXPECT_EQ(labels(stacks, out), (std::vector<std::string>{"step (b.py:3)@4", std::to_string(0xA000),
                                                           "<module> (b.py:1)@9", std::to_string(0x1700),
                                                           std::to_string(0x2300), std::to_string(0x1900)}));
}

TEST(PythonFrames, AMalformedSectionLeavesTheNativeStackAsItWas) {
  PythonStacks stacks;
  stacks.set_interpreter(fake_interpreter());
  const std::vector<std::uintptr_t> native = {0x2100, 0x1800};
  const std::uint64_t bad[] = {0xFFFF'0000'0000'0000ull | 3, 0, (std::uint64_t{5} << 48) | (std::uint64_t{9} << 32) | 3};
  std::vector<std::uintptr_t> out(8);
  out.resize(stacks.splice(bad, 3, native.data(), native.size(), out.data(), out.size()));
  EXPECT_EQ(out, native);
}

TEST(PythonFrames, ReportsShowPythonFrameNamesAsTheyAre) {
  using nnprof::analysis::readable_function;
  // Not a C++ signature to strip to its name (which left an empty name in reports).
  EXPECT_EQ(readable_function("forward (model.py:42)"), "forward (model.py:42)");
  EXPECT_EQ(readable_function("Module._call_impl (module.py:1188)"), "Module._call_impl (module.py:1188)");
  EXPECT_EQ(readable_function("_find_and_load (<frozen importlib._bootstrap>:1167)"),
            "_find_and_load (<frozen importlib._bootstrap>:1167)");
  EXPECT_EQ(readable_function("ns::f(int)"), "ns::f") << "C++ names are still shortened";
}

TEST(PythonFrames, NoInterpreterInATestProgramMeansNoFramesAndNoProblem) {
  // This test program does not run CPython: nothing to read, and nothing to warn about.
  const PythonInterpreter interp = nnprof::collect::find_python_interpreter();
  EXPECT_FALSE(interp.readable);
  EXPECT_TRUE(interp.problem.empty()) << interp.problem;
}


TEST(PythonLines, SelfIsTheInnermostPythonLineAndTotalEveryLineOnThePythonStackOnce) {
  // Frames: a native leaf (sgemm), then Python frames forward (model.py:20, :21), train
  // (train.py:5) and a recursive walk (tree.py:3); samples of 1 ms each.
  nnprof::Profile p;
  p.strings = {"", "sgemm", "libblas.so", "forward (model.py:19)", "model.py", "train (train.py:4)", "train.py",
               "walk (tree.py:2)", "tree.py"};
  const auto python = [](std::uint32_t index) { return kPythonFrameTag | index; };
  p.frames = {
      {0x401000, 1, nnprof::kNone, 0, 2, 0x1000, false},  // 0 sgemm (native)
      {python(0), 3, 4, 20, 4, 0, false},                  // 1 forward, line 20
      {python(1), 3, 4, 21, 4, 0, false},                  // 2 forward, line 21
      {python(2), 5, 6, 5, 6, 0, false},                   // 3 train, line 5
      {python(3), 7, 8, 3, 8, 0, false},                   // 4 walk, line 3
  };
  p.stacks = {{{0, 1, 3}},  // sgemm <- forward:20 <- train:5
              {{2, 3}},     // forward:21 <- train:5
              {{4, 4, 3}},  // walk:3 <- walk:3 <- train:5 (recursion: once per sample)
              {{0}}};       // native only: in the whole, no Python line
  for (std::uint32_t stack : {0u, 0u, 0u, 1u, 2u, 3u})
    p.cpu_samples.push_back({p.cpu_samples.size() * 1'000'000, 0, stack, 0, 1'000'000});
  EXPECT_TRUE(nnprof::is_python_frame(p.frames[1]));
  EXPECT_FALSE(nnprof::is_python_frame(p.frames[0]));

  const std::vector<nnprof::PythonLineStats> lines = nnprof::python_line_stats(p);
  ASSERT_EQ(lines.size(), 4u);
  // forward:20 is the innermost Python line of the three sgemm samples (it called the BLAS).
  EXPECT_EQ(lines[0].function, "forward (model.py:19)");
  EXPECT_EQ(lines[0].file, "model.py");
  EXPECT_EQ(lines[0].line, 20u);
  EXPECT_EQ(lines[0].self_samples, 3u);
  EXPECT_EQ(lines[0].total_samples, 3u);
  EXPECT_DOUBLE_EQ(lines[0].self_time_ms, 3.0);
  EXPECT_DOUBLE_EQ(lines[0].self_percentage, 50.0);
  // Then forward:21 and walk:3 with one self sample each (equal: the file then line decides).
  EXPECT_EQ(lines[1].file, "model.py");
  EXPECT_EQ(lines[1].line, 21u);
  EXPECT_EQ(lines[2].file, "tree.py");
  EXPECT_EQ(lines[2].self_samples, 1u);
  EXPECT_EQ(lines[2].total_samples, 1u) << "the recursive frame counts once per sample";
  // train:5 is on five samples' Python stacks, innermost on none.
  EXPECT_EQ(lines[3].function, "train (train.py:4)");
  EXPECT_EQ(lines[3].self_samples, 0u);
  EXPECT_EQ(lines[3].total_samples, 5u);
  EXPECT_NEAR(lines[3].percentage, 500.0 / 6.0, 1e-9);

  EXPECT_EQ(nnprof::python_line_stats(nnprof::Profile{}).size(), 0u);
}

}  // namespace
