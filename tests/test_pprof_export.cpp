// The pprof export: decoded with the generated perftools.profiles classes and checked for
// what pprof relies on (ids, the string table, inline chains as lines of one location).
#include "io/pprof_export.hpp"

#include <gtest/gtest.h>

#include <cstdint>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "cpu_export_fixture.hpp"
#include "io/exporter_registry.hpp"
#include "io/proto/profile.pb.h"
#include "nnprof/error.hpp"

namespace nnprof {
namespace {

namespace pb = perftools::profiles;

pb::Profile exported(const Profile& p) {
  std::ostringstream out;
  io::write_pprof(p, out);
  pb::Profile message;
  io::decode_pprof(out.str(), message);
  return message;
}

// Lookups by id over a decoded profile, checking pprof's structural rules on the way.
class Decoded {
 public:
  explicit Decoded(pb::Profile message) : m(std::move(message)) {
    EXPECT_GT(m.string_table_size(), 0);
    if (m.string_table_size() > 0) {
      EXPECT_EQ(m.string_table(0), "");
    }
    for (const pb::Mapping& mapping : m.mapping()) EXPECT_TRUE(mappings.emplace(mapping.id(), &mapping).second);
    for (const pb::Function& function : m.function()) EXPECT_TRUE(functions.emplace(function.id(), &function).second);
    for (const pb::Location& location : m.location()) {
      EXPECT_NE(location.id(), 0U);
      EXPECT_TRUE(locations.emplace(location.id(), &location).second);
      if (location.mapping_id() != 0) {
        EXPECT_TRUE(mappings.contains(location.mapping_id()));
      }
      for (const pb::Line& line : location.line()) EXPECT_TRUE(functions.contains(line.function_id()));
    }
    for (const pb::Sample& sample : m.sample()) {
      EXPECT_EQ(sample.value_size(), m.sample_type_size());
      for (const std::uint64_t id : sample.location_id()) EXPECT_TRUE(locations.contains(id));
    }
  }

  [[nodiscard]] std::string str(std::int64_t id) const {
    EXPECT_GE(id, 0);
    EXPECT_LT(id, m.string_table_size());
    return id >= 0 && id < m.string_table_size() ? m.string_table(static_cast<int>(id)) : "<bad string id>";
  }

  // "function:line" for each line of a location, innermost first.
  [[nodiscard]] std::vector<std::string> lines(std::uint64_t location) const {
    std::vector<std::string> out;
    for (const pb::Line& line : locations.at(location)->line())
      out.push_back(str(functions.at(line.function_id())->name()) + ":" + std::to_string(line.line()));
    return out;
  }

  // The function names of a sample's stack, leaf first, inlined frames included.
  [[nodiscard]] std::vector<std::string> stack(const pb::Sample& sample) const {
    std::vector<std::string> out;
    for (const std::uint64_t id : sample.location_id()) {
      const pb::Location& location = *locations.at(id);
      if (location.line_size() == 0) out.push_back("0x" + fmt_hex(location.address()));
      for (const pb::Line& line : location.line()) out.push_back(str(functions.at(line.function_id())->name()));
    }
    return out;
  }

  [[nodiscard]] std::map<std::string, std::string> labels(const pb::Sample& sample) const {
    std::map<std::string, std::string> out;
    for (const pb::Label& label : sample.label())
      out[str(label.key())] = label.str() != 0 ? str(label.str()) : std::to_string(label.num());
    return out;
  }

  static std::string fmt_hex(std::uint64_t v) {
    std::ostringstream s;
    s << std::hex << v;
    return s.str();
  }

  pb::Profile m;
  std::map<std::uint64_t, const pb::Mapping*> mappings;
  std::map<std::uint64_t, const pb::Function*> functions;
  std::map<std::uint64_t, const pb::Location*> locations;
};

const pb::Sample* find_sample(const Decoded& d, const std::vector<std::string>& stack, const std::string& thread) {
  for (const pb::Sample& sample : d.m.sample())
    if (d.stack(sample) == stack && d.labels(sample).at("thread") == thread) return &sample;
  return nullptr;
}

TEST(PprofExport, SampleTypesPeriodAndTimes) {
  const Decoded d(exported(testing::cpu_export_profile()));
  ASSERT_EQ(d.m.sample_type_size(), 2);
  EXPECT_EQ(d.str(d.m.sample_type(0).type()), "samples");
  EXPECT_EQ(d.str(d.m.sample_type(0).unit()), "count");
  EXPECT_EQ(d.str(d.m.sample_type(1).type()), "cpu");
  EXPECT_EQ(d.str(d.m.sample_type(1).unit()), "nanoseconds");
  EXPECT_EQ(d.str(d.m.period_type().type()), "cpu");
  EXPECT_EQ(d.str(d.m.period_type().unit()), "nanoseconds");
  EXPECT_EQ(d.m.period(), 1'000'000);
  EXPECT_EQ(d.str(d.m.default_sample_type()), "cpu");
  EXPECT_EQ(d.m.duration_nanos(), 50'000'000);
  EXPECT_EQ(d.m.time_nanos(), 1'700'000'000'000'000'000);
  ASSERT_GT(d.m.comment_size(), 0);
  EXPECT_EQ(d.str(d.m.comment(0)), "nnprof 0.1.0");

  Profile wall = testing::cpu_export_profile();
  wall.cpu.mode = "wall";
  const Decoded w(exported(wall));
  EXPECT_EQ(w.str(w.m.sample_type(1).type()), "wall");
  EXPECT_EQ(w.str(w.m.period_type().type()), "wall");
}

TEST(PprofExport, ValuesAddUpToEverySample) {
  const Decoded d(exported(testing::cpu_export_profile()));
  std::int64_t samples = 0;
  std::int64_t ns = 0;
  for (const pb::Sample& sample : d.m.sample()) {
    samples += sample.value(0);
    ns += sample.value(1);
  }
  EXPECT_EQ(samples, 11);
  EXPECT_EQ(ns, 8 * 1'000'000 + 3 * 2'000'000);
  // Merged by (stack, thread, scope): 5 groups on the main thread, 2 on the worker.
  EXPECT_EQ(d.m.sample_size(), 7);
}

TEST(PprofExport, InlineChainIsOneLocationWithALinePerFrame) {
  const Decoded d(exported(testing::cpu_export_profile()));
  const pb::Sample* sample = find_sample(d, {"dot", "matmul", "train_step", "main"}, "main");
  ASSERT_NE(sample, nullptr);
  ASSERT_EQ(sample->location_id_size(), 3);
  EXPECT_EQ(d.lines(sample->location_id(0)), (std::vector<std::string>{"dot:5", "matmul:40"}));
  EXPECT_EQ(d.lines(sample->location_id(1)), (std::vector<std::string>{"train_step:20"}));
  EXPECT_EQ(d.lines(sample->location_id(2)), (std::vector<std::string>{"main:10"}));
  EXPECT_EQ(d.locations.at(sample->location_id(0))->address(), 0x2000U);
  EXPECT_EQ(sample->value(0), 2);
  EXPECT_EQ(sample->value(1), 2'000'000);

  // The worker's samples of the same stack share its locations.
  const pb::Sample* worker = find_sample(d, {"dot", "matmul", "train_step", "main"}, "worker<1>");
  ASSERT_NE(worker, nullptr);
  EXPECT_EQ(worker->location_id(0), sample->location_id(0));
  EXPECT_EQ(worker->value(1), 4'000'000);
  // One location per address: 0x1000, 0x1100, 0x1200, 0x2000, 0x2040, libc's, 0xdead, and
  // one for "[no stack]".
  EXPECT_EQ(d.m.location_size(), 8);
  const pb::Sample* own = find_sample(d, {"matmul", "train_step", "main"}, "main");
  ASSERT_NE(own, nullptr);
  EXPECT_EQ(d.lines(own->location_id(0)), (std::vector<std::string>{"matmul:42"}));
  EXPECT_EQ(d.locations.at(own->location_id(0))->address(), 0x2040U);
  EXPECT_EQ(d.lines(own->location_id(1)), d.lines(sample->location_id(1)));
}

TEST(PprofExport, FunctionsHaveNamesFilesAndAreShared) {
  const Decoded d(exported(testing::cpu_export_profile()));
  std::map<std::string, std::string> files;
  for (const pb::Function& function : d.m.function()) {
    EXPECT_TRUE(files.emplace(d.str(function.name()), d.str(function.filename())).second)
        << "duplicate function " << d.str(function.name());
    EXPECT_EQ(function.system_name(), function.name());
  }
  EXPECT_EQ(files, (std::map<std::string, std::string>{{"main", "src/main.cpp"},
                                                       {"train_step", "src/train.cpp"},
                                                       {"dot", "include/linalg.hpp"},
                                                       {"matmul", "src/linalg.cpp"},
                                                       {testing::kWeirdName, "src/weird.cpp"},
                                                       {"[no stack]", ""}}));
}

TEST(PprofExport, UnsymbolizedFramesKeepTheirAddressAndMapping) {
  const Decoded d(exported(testing::cpu_export_profile()));
  const pb::Sample* sample = find_sample(d, {"0x7f0000001234", "train_step", "main"}, "main");
  ASSERT_NE(sample, nullptr);
  const pb::Location& location = *d.locations.at(sample->location_id(0));
  EXPECT_EQ(location.line_size(), 0);
  ASSERT_NE(location.mapping_id(), 0U);
  EXPECT_EQ(d.str(d.mappings.at(location.mapping_id())->filename()), "/usr/lib/x86_64-linux-gnu/libc.so.6");

  const pb::Sample* no_module = find_sample(d, {"0xdead", "main"}, "main");
  ASSERT_NE(no_module, nullptr);
  EXPECT_EQ(d.locations.at(no_module->location_id(0))->mapping_id(), 0U);

  const pb::Sample* no_stack = find_sample(d, {"[no stack]"}, "main");
  ASSERT_NE(no_stack, nullptr);
  EXPECT_EQ(no_stack->value(0), 1);
}

TEST(PprofExport, MappingPerModuleMainExecutableFirst) {
  const Decoded d(exported(testing::cpu_export_profile()));
  ASSERT_EQ(d.m.mapping_size(), 3);
  const pb::Mapping& app = d.m.mapping(0);
  EXPECT_EQ(d.str(app.filename()), "/usr/bin/app");
  EXPECT_EQ(app.memory_start(), 0x1000U);
  EXPECT_EQ(app.memory_limit(), 0x1201U);
  EXPECT_TRUE(app.has_functions());
  EXPECT_TRUE(app.has_filenames());
  EXPECT_TRUE(app.has_line_numbers());
  std::map<std::string, const pb::Mapping*> by_name;
  for (const pb::Mapping& mapping : d.m.mapping()) by_name[d.str(mapping.filename())] = &mapping;
  ASSERT_TRUE(by_name.contains("/usr/lib/libml.so"));
  EXPECT_TRUE(by_name["/usr/lib/libml.so"]->has_inline_frames());
  EXPECT_EQ(by_name["/usr/lib/libml.so"]->memory_start(), 0x2000U);
  EXPECT_EQ(by_name["/usr/lib/libml.so"]->memory_limit(), 0x2041U);
  ASSERT_TRUE(by_name.contains("/usr/lib/x86_64-linux-gnu/libc.so.6"));
  EXPECT_FALSE(by_name["/usr/lib/x86_64-linux-gnu/libc.so.6"]->has_functions());
  EXPECT_EQ(by_name["/usr/lib/x86_64-linux-gnu/libc.so.6"]->memory_start(), 0x7f0000001234U);
  EXPECT_EQ(by_name["/usr/lib/x86_64-linux-gnu/libc.so.6"]->file_offset(), 0x29234U);  // the ELF address
  EXPECT_EQ(app.file_offset(), 0U);  // the fixture's own frames have no module offset
}

TEST(PprofExport, LabelsNameThreadAndScope) {
  const Decoded d(exported(testing::cpu_export_profile()));
  const pb::Sample* forward = find_sample(d, {"matmul", "train_step", "main"}, "main");
  ASSERT_NE(forward, nullptr);
  EXPECT_EQ(d.labels(*forward),
            (std::map<std::string, std::string>{{"thread", "main"}, {"tid", "100"}, {"scope", "train > forward"}}));
  const pb::Sample* eval = find_sample(d, {testing::kWeirdName, "main"}, "worker<1>");
  ASSERT_NE(eval, nullptr);
  EXPECT_EQ(d.labels(*eval),
            (std::map<std::string, std::string>{{"thread", "worker<1>"}, {"tid", "101"}, {"scope", "eval"}}));
  const pb::Sample* outside = find_sample(d, {"0xdead", "main"}, "main");
  ASSERT_NE(outside, nullptr);
  EXPECT_FALSE(d.labels(*outside).contains("scope"));  // outside any instrumented scope
}

TEST(PprofExport, InvalidUtf8BecomesReplacementCharacters) {
  Profile p = testing::cpu_export_profile();
  p.threads[0].name = "trunc\xE2\x82";  // a name cut in the middle of a character, as the kernel does
  const Decoded d(exported(p));         // the C++ parser rejects invalid UTF-8 in strings
  EXPECT_NE(find_sample(d, {"matmul", "train_step", "main"}, "trunc\xEF\xBF\xBD\xEF\xBF\xBD"), nullptr);
}

TEST(PprofExport, GzipRoundTripAndDamagedInput) {
  const std::string text(100'000, 'x');
  const std::string compressed = io::gzip(text);
  ASSERT_GE(compressed.size(), 2U);
  EXPECT_EQ(static_cast<unsigned char>(compressed[0]), 0x1F);
  EXPECT_EQ(static_cast<unsigned char>(compressed[1]), 0x8B);
  EXPECT_LT(compressed.size(), 1000U);
  EXPECT_EQ(io::gunzip(compressed), text);
  EXPECT_EQ(io::gunzip(""), "");
  EXPECT_THROW(io::gunzip(compressed.substr(0, compressed.size() / 2)), Error);
  pb::Profile message;
  EXPECT_THROW(io::decode_pprof(std::string("\x1F\x8B\x08\x00garbage", 11), message), Error);
  EXPECT_THROW(io::decode_pprof("\xFF\xFF\xFF\xFF not a protobuf", message), Error);
}

TEST(PprofExport, RegisteredAsPprofWithPbGzExtension) {
  const io::Exporter* e = io::find_exporter("pprof");
  ASSERT_NE(e, nullptr);
  EXPECT_EQ(e->extension(), ".pb.gz");
  EXPECT_EQ(io::find_exporter_for_path("out/cpu.pb.gz"), e);
  std::ostringstream out;
  e->write(testing::cpu_export_profile(), out);
  ASSERT_GE(out.str().size(), 2U);
  EXPECT_EQ(static_cast<unsigned char>(out.str()[0]), 0x1F);  // gzip, as pprof wants on disk
  pb::Profile message;
  io::decode_pprof(out.str(), message);
  EXPECT_EQ(message.sample_size(), 7);
  std::ostringstream nothing;
  try {
    e->write(Profile{}, nothing);
    FAIL() << "no error";
  } catch (const Error& error) {
    EXPECT_NE(std::string(error.what()).find("--sample-hz"), std::string::npos);
  }
}

}  // namespace
}  // namespace nnprof
