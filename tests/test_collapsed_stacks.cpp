// Collapsed stacks: exact lines for a hand-built profile, the filters, the reader, and the
// registry entry.
#include "io/collapsed_stacks.hpp"

#include <gtest/gtest.h>

#include <cstdint>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "cpu_export_fixture.hpp"
#include "io/exporter_registry.hpp"
#include "nnprof/error.hpp"

namespace nnprof {
namespace {

using io::CpuStackOptions;
using io::CpuWeight;
using Stacks = std::map<std::vector<std::string>, std::uint64_t>;

std::string collapsed(const Profile& p, const CpuStackOptions& options = {}) {
  std::ostringstream out;
  io::write_collapsed(p, out, options);
  return out.str();
}

Stacks parse(const std::string& text) {
  std::istringstream in(text);
  return io::parse_collapsed(in);
}

std::string error_of(const std::string& text) {
  try {
    parse(text);
  } catch (const Error& e) {
    return e.what();
  }
  return "(no error)";
}

TEST(CollapsedStacks, OneLinePerStackRootFirstWithInlinedAndUnsymbolizedFrames) {
  EXPECT_EQ(collapsed(testing::cpu_export_profile()),
            "[no stack] 1\n"
            "main;[unknown] 1\n"
            "main;train_step;libc.so.6+0x29234 1\n"
            "main;train_step;matmul 3\n"
            "main;train_step;matmul;dot_[i] 4\n"
            "main;weird:name <T&> \"q\" 1\n");
}

TEST(CollapsedStacks, FoldedFramesSayWhatKindTheyAre) {
  const std::vector<io::FoldedStack> stacks = io::fold_cpu_samples(testing::cpu_export_profile());
  ASSERT_EQ(stacks.size(), 6U);
  const io::FoldedStack& inlined = stacks[4];
  ASSERT_EQ(inlined.frames.size(), 4U);
  EXPECT_EQ(inlined.frames[3], (io::FoldedFrame{"dot", "libml.so", io::FoldedFrameKind::Inlined}));
  EXPECT_EQ(inlined.frames[2], (io::FoldedFrame{"matmul", "libml.so", io::FoldedFrameKind::Function}));
  EXPECT_EQ(inlined.frames[0], (io::FoldedFrame{"main", "app", io::FoldedFrameKind::Function}));
  EXPECT_EQ(stacks[2].frames[2].kind, io::FoldedFrameKind::Unsymbolized);
  EXPECT_EQ(stacks[2].frames[2].module, "libc.so.6");
  EXPECT_EQ(stacks[0].frames[0].kind, io::FoldedFrameKind::NoStack);

  // Without a module offset, the run's address stands in.
  Profile p = testing::cpu_export_profile();
  p.frames[testing::kLibcNoSymbol].module_offset = 0;
  EXPECT_EQ(io::fold_cpu_samples(p)[2].frames[2].name, "libc.so.6+0x7f0000001234");
}

TEST(CollapsedStacks, ScopeFilterKeepsTheScopeAndItsDescendants) {
  CpuStackOptions options;
  options.scope = testing::kTrain;  // train, and forward below it
  EXPECT_EQ(collapsed(testing::cpu_export_profile(), options),
            "main;train_step;libc.so.6+0x29234 1\n"
            "main;train_step;matmul 3\n"
            "main;train_step;matmul;dot_[i] 2\n");
  options.scope = testing::kForward;
  EXPECT_EQ(collapsed(testing::cpu_export_profile(), options),
            "main;train_step;matmul 3\n"
            "main;train_step;matmul;dot_[i] 2\n");
}

TEST(CollapsedStacks, ThreadFilterAndNanosecondWeights) {
  CpuStackOptions options;
  options.thread = 1;
  EXPECT_EQ(collapsed(testing::cpu_export_profile(), options),
            "main;train_step;matmul;dot_[i] 2\n"
            "main;weird:name <T&> \"q\" 1\n");
  options.weight = CpuWeight::Nanoseconds;
  EXPECT_EQ(collapsed(testing::cpu_export_profile(), options),
            "main;train_step;matmul;dot_[i] 4000000\n"
            "main;weird:name <T&> \"q\" 2000000\n");
}

TEST(CollapsedStacks, ThreadRootsSeparateTheThreads) {
  CpuStackOptions options;
  options.thread_roots = true;
  options.scope = testing::kRoot;  // 0: every sample, as the default
  EXPECT_EQ(collapsed(testing::cpu_export_profile(), options),
            "main (tid 100);[no stack] 1\n"
            "main (tid 100);main;[unknown] 1\n"
            "main (tid 100);main;train_step;libc.so.6+0x29234 1\n"
            "main (tid 100);main;train_step;matmul 3\n"
            "main (tid 100);main;train_step;matmul;dot_[i] 2\n"
            "worker<1> (tid 101);main;train_step;matmul;dot_[i] 2\n"
            "worker<1> (tid 101);main;weird:name <T&> \"q\" 1\n");
}

TEST(CollapsedStacks, StacksThatPrintAlikeAreMerged) {
  Profile p = testing::cpu_export_profile();
  // A second frame for matmul at another address of the same function: the same line.
  p.frames.push_back(p.frames[testing::kMatmulLoop]);
  p.frames.back().address += 8;
  p.stacks.push_back(CallStack{{static_cast<std::uint32_t>(p.frames.size() - 1), testing::kTrainStep, testing::kMain}});
  CpuSample sample;
  sample.time_ns = 99'000'000;
  sample.stack = static_cast<std::uint32_t>(p.stacks.size() - 1);
  p.cpu_samples.push_back(sample);
  EXPECT_NE(collapsed(p).find("main;train_step;matmul 4\n"), std::string::npos) << collapsed(p);
}

TEST(CollapsedStacks, DamagedIndicesBecomeUnknownFrames) {
  Profile p = testing::cpu_export_profile();
  p.stacks[0].frames.push_back(999);  // a frame index past the end
  p.cpu_samples[0].stack = 12345;     // a stack index past the end
  const std::string text = collapsed(p);
  EXPECT_NE(text.find("[unknown];main;train_step;matmul 2\n"), std::string::npos) << text;
  EXPECT_NE(text.find("[no stack] 2\n"), std::string::npos) << text;
}

TEST(CollapsedStacks, WritesWhatTheReaderReadsBack) {
  const Profile p = testing::cpu_export_profile();
  for (const bool roots : {false, true}) {
    CpuStackOptions options;
    options.thread_roots = roots;
    Stacks expected;
    for (const io::FoldedStack& stack : io::fold_cpu_samples(p, options)) {
      std::vector<std::string> frames;
      for (const io::FoldedFrame& frame : stack.frames) frames.push_back(io::collapsed_frame_text(frame));
      expected[frames] += stack.value;
    }
    EXPECT_EQ(parse(collapsed(p, options)), expected);
  }
}

TEST(CollapsedStacks, ReaderAddsRepeatedStacksSkipsBlankLinesAndAcceptsCrLf) {
  const Stacks stacks = parse("a;b 2\r\n\n   \nc 1\na;b 3\nfn with spaces;x 7");
  EXPECT_EQ(stacks, (Stacks{{{"a", "b"}, 5}, {{"c"}, 1}, {{"fn with spaces", "x"}, 7}}));
}

TEST(CollapsedStacks, ReaderNamesTheLineAndTheProblem) {
  EXPECT_EQ(error_of("a;b 1\nno_count_here\n"),
            "collapsed stacks, line 2: no count after the stack (expected 'frame;frame;... count')");
  EXPECT_EQ(error_of("a;b 1\n\na;b 1.5\n"),
            "collapsed stacks, line 3: the count '1.5' is not a whole number (expected 'frame;frame;... count')");
  EXPECT_NE(error_of("a;b -1").find("line 1: the count '-1' is not a whole number"), std::string::npos);
  EXPECT_NE(error_of("a;b ").find("line 1: no count after the stack"), std::string::npos);
  EXPECT_NE(error_of("a;;b 3").find("line 1: frame 2 is empty"), std::string::npos);
  EXPECT_NE(error_of(";a 3").find("line 1: frame 1 is empty"), std::string::npos);
  EXPECT_NE(error_of("a; 3").find("line 1: frame 2 is empty"), std::string::npos);
  EXPECT_NE(error_of(" 3").find("line 1: the stack is empty"), std::string::npos);
  EXPECT_NE(error_of("a;b 1 2").find("line 1: two counts: differential stacks are not supported"),
            std::string::npos);
  EXPECT_NE(error_of("a 18446744073709551616").find("does not fit 64 bits"), std::string::npos);
  EXPECT_NE(error_of("a 18446744073709551615\na 1").find("line 2: the total count overflows 64 bits"),
            std::string::npos);
}

TEST(CollapsedStacks, NoSamplesOrAnEmptyFilterIsAnError) {
  Profile empty;
  try {
    collapsed(empty);
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("no CPU samples; record with --sample-hz"), std::string::npos) << e.what();
  }
  CpuStackOptions options;
  options.thread = 1;
  options.scope = testing::kTrain;
  try {
    collapsed(testing::cpu_export_profile(), options);
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_STREQ(e.what(),
                 "no CPU sample was taken on thread worker<1> (tid 101) in scope 'train' (11 samples in the profile)");
  }
  options = {};
  options.thread = 2;
  EXPECT_THROW(collapsed(testing::cpu_export_profile(), options), Error);
  options = {};
  options.scope = 4;
  EXPECT_THROW(collapsed(testing::cpu_export_profile(), options), Error);
}

TEST(CollapsedStacks, RegisteredAsCollapsedWithFoldedAndCollapsedExtensions) {
  const io::Exporter* e = io::find_exporter("collapsed");
  ASSERT_NE(e, nullptr);
  EXPECT_EQ(e->extension(), ".folded");
  EXPECT_EQ(io::find_exporter_for_path("out/run.folded"), e);
  EXPECT_EQ(io::find_exporter_for_path("out/RUN.COLLAPSED"), e);
  std::ostringstream out;
  e->write(testing::cpu_export_profile(), out);
  EXPECT_EQ(out.str(), collapsed(testing::cpu_export_profile()));
  std::ostringstream nothing;
  EXPECT_THROW(e->write(Profile{}, nothing), Error);
}

}  // namespace
}  // namespace nnprof
