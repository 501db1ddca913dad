// Span arguments (ProfileGuard::arg, Profiler::arg, nnprof::span_arg): recorded off the hot
// path, joined to their spans by the profile builder, kept by the store (the args table) and
// shown in the Chrome trace's args.
#include <gtest/gtest.h>
#include <sqlite3.h>

#include <cmath>
#include <cstdint>
#include <limits>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include <nlohmann/json.hpp>

#include "nnprof/nnprof.hpp"
#include "test_directory.hpp"

namespace {

using nnprof::Profile;
using nnprof::SpanArg;

const nnprof::Span& span_of(const Profile& p, const SpanArg& a) { return p.spans.at(a.span); }

// Every argument of the spans named `name`, as "key=value" in order.
std::vector<std::string> args_of(const Profile& p, const std::string& name) {
  std::vector<std::string> out;
  for (const SpanArg& a : p.span_args) {
    if (p.str(span_of(p, a).name) != name) continue;
    switch (a.type) {
      case SpanArg::Type::String: out.push_back(a.key + "=" + a.string_value); break;
      case SpanArg::Type::Int: out.push_back(a.key + "=" + std::to_string(a.int_value)); break;
      case SpanArg::Type::Real: out.push_back(a.key + "=" + std::to_string(a.real_value)); break;
    }
  }
  return out;
}

Profile recorded() {
  nnprof::Profiler p;
  for (int i = 0; i < 3; ++i) {
    NNPROF_SCOPE_IN(p, "step");
    {
      nnprof::ProfileGuard guard(p, "matmul");
      guard.arg("shape", std::to_string(64 * (i + 1)) + "x64");
      guard.arg("batch", i + 1);
      guard.arg("scale", 0.5);
    }
    p.start("softmax");
    p.arg("dim", -1);  // the innermost open scope: softmax, not step
    p.stop("softmax");
  }
  p.arg("outside", "any scope");  // nothing is open: nothing to attach it to
  return p.snapshot();
}

TEST(SpanArgs, EachArgumentJoinsItsOwnSpan) {
  const Profile p = recorded();
  EXPECT_EQ(args_of(p, "matmul"), (std::vector<std::string>{"shape=64x64", "batch=1", "scale=0.500000", "shape=128x64",
                                                             "batch=2", "scale=0.500000", "shape=192x64", "batch=3",
                                                             "scale=0.500000"}));
  EXPECT_EQ(args_of(p, "softmax"), (std::vector<std::string>{"dim=-1", "dim=-1", "dim=-1"}));
  EXPECT_TRUE(args_of(p, "step").empty());
  // One span per matmul call, each with its own three arguments, sorted by span.
  std::vector<std::uint32_t> spans;
  for (const SpanArg& a : p.span_args)
    if (p.str(span_of(p, a).name) == "matmul") spans.push_back(a.span);
  ASSERT_EQ(spans.size(), 9u);
  EXPECT_EQ(spans[0], spans[2]);
  EXPECT_LT(spans[2], spans[3]);
  EXPECT_LT(p.spans[spans[0]].start_ns, p.spans[spans[3]].start_ns);
  for (std::size_t i = 1; i < p.span_args.size(); ++i) EXPECT_LE(p.span_args[i - 1].span, p.span_args[i].span);
}

TEST(SpanArgs, ThreadsKeepTheirOwnAndTheGlobalProfilerTakesThemToo) {
  nnprof::Profiler p;
  std::thread worker([&] {
    nnprof::ProfileGuard g(p, "load");
    g.arg("file", "shard-7.bin");
  });
  {
    nnprof::ProfileGuard g(p, "load");
    g.arg("file", "shard-0.bin");
  }
  worker.join();
  const Profile profile = p.snapshot();
  ASSERT_EQ(profile.span_args.size(), 2u);
  EXPECT_NE(span_of(profile, profile.span_args[0]).thread, span_of(profile, profile.span_args[1]).thread);
  {
    NNPROF_SCOPE("global_op");
    nnprof::span_arg("rows", std::uint64_t{1024});
  }
  const Profile global = nnprof::global_profiler().snapshot();
  EXPECT_EQ(args_of(global, "global_op"), (std::vector<std::string>{"rows=1024"}));
}

TEST(SpanArgs, WithoutSpansNothingIsKeptAndNothingBreaks) {
  nnprof::ProfilerOptions o;
  o.record_spans = false;
  nnprof::Profiler p(o);
  {
    nnprof::ProfileGuard g(p, "op");
    g.arg("k", "v");
  }
  const Profile profile = p.snapshot();
  EXPECT_TRUE(profile.span_args.empty());
  EXPECT_EQ(profile.find_scope("op")->time.count, 1u);
}

TEST(SpanArgs, AnArgumentOfAStillOpenSpanIsCountedNotGuessed) {
  nnprof::Profiler p;
  nnprof::ProfileGuard open(p, "open");
  open.arg("k", "v");
  const Profile profile = p.snapshot();  // the span is not closed: it has no record yet
  EXPECT_TRUE(profile.span_args.empty());
  bool said = false;
  for (const nnprof::Diagnostic& d : profile.diagnostics)
    said |= d.kind == nnprof::DiagnosticKind::SpanArgsDropped && d.count == 1;
  EXPECT_TRUE(said);
}

class SpanArgsFiles : public nnprof::testing::TestDirectory {
 protected:
  SpanArgsFiles() : TestDirectory("span_args") {}
};

TEST_F(SpanArgsFiles, TheStoreKeepsThemExactlyAndSqlReadsThemAsPerfettosArgs) {
  Profile p = recorded();
  // Values a store must not bend: extremes, a non-finite real, bytes that are not UTF-8.
  const std::uint32_t last = p.span_args.back().span;
  SpanArg min{last, "min", SpanArg::Type::Int, {}, std::numeric_limits<std::int64_t>::min(), 0.0};
  SpanArg inf{last, "inf", SpanArg::Type::Real, {}, 0, std::numeric_limits<double>::infinity()};
  SpanArg bytes{last, "bytes", SpanArg::Type::String, std::string("a\0\xff", 3), 0, 0.0};
  p.span_args.insert(p.span_args.end(), {min, inf, bytes});
  p.save(path("run.nnprof"));
  const Profile back = Profile::load(path("run.nnprof"));
  EXPECT_EQ(back.span_args, p.span_args);
  EXPECT_EQ(back, p);

  const nnprof::QueryResult q = nnprof::query_profile(
      path("run.nnprof"),
      "select s.name, a.key, a.value_type, a.display_value from slice s join args a using(arg_set_id) "
      "where s.name = 'matmul' order by a.id limit 2");
  ASSERT_EQ(q.rows.size(), 2u);
  EXPECT_EQ(q.rows[0], (std::vector<std::string>{"matmul", "shape", "string", "64x64"}));
  EXPECT_EQ(q.rows[1], (std::vector<std::string>{"matmul", "batch", "int", "1"}));
}

// A slice names its argument set (format version 8); one that no args row has is damage,
// not a slice without arguments. Version 7's check (an argument of a missing slice) is in
// test_arg_sets.cpp.
TEST_F(SpanArgsFiles, ASliceOfAMissingArgumentSetIsRejectedOnLoad) {
  recorded().save(path("run.nnprof"));
  sqlite3* db = nullptr;
  ASSERT_EQ(sqlite3_open(path("run.nnprof").c_str(), &db), SQLITE_OK);
  ASSERT_EQ(sqlite3_exec(db,
                         "UPDATE slice_data SET arg_set_id = 999999 WHERE id = "
                         "(SELECT min(id) FROM slice_data WHERE arg_set_id IS NOT NULL)",
                         nullptr, nullptr, nullptr),
            SQLITE_OK);
  sqlite3_close(db);
  try {
    (void)Profile::load(path("run.nnprof"));
    FAIL() << "loaded";
  } catch (const nnprof::Error& e) {
    EXPECT_NE(std::string(e.what()).find("refers to the missing argument set 999999"), std::string::npos) << e.what();
  }
}

TEST(SpanArgs, TheChromeTraceShowsThemAsTheSlicesArgs) {
  const Profile p = recorded();
  std::ostringstream out;
  nnprof::Report(p).write(out, nnprof::ReportFormat::Chrome);
  const auto trace = nlohmann::json::parse(out.str());
  int matmuls = 0, softmaxes = 0;
  for (const auto& e : trace["traceEvents"]) {
    if (e.value("ph", "") != "X" || e.value("cat", "") != "scope") continue;
    if (e["name"] == "matmul") {
      ++matmuls;
      ASSERT_TRUE(e.contains("args")) << e.dump();
      EXPECT_EQ(e["args"]["shape"], std::to_string(64 * matmuls) + "x64");
      EXPECT_EQ(e["args"]["batch"], matmuls);
      EXPECT_DOUBLE_EQ(e["args"]["scale"].get<double>(), 0.5);
    } else if (e["name"] == "softmax") {
      ++softmaxes;
      EXPECT_EQ(e["args"]["dim"], -1);
    } else {
      EXPECT_FALSE(e.contains("args")) << e.dump();
    }
  }
  EXPECT_EQ(matmuls, 3);
  EXPECT_EQ(softmaxes, 3);
}

// PyTorch's operators: an arrow from the forward call whose autograd node a backward operator
// ran (the outermost with its sequence number) to that backward call.
TEST(SpanArgs, TheChromeTraceLinksBackwardOperatorsToTheirForwardCalls) {
  nnprof::Profiler p;
  const auto op = [&](const char* name, const char* scope, std::int64_t seq, auto&& inside) {
    p.start(name);
    p.arg("op_scope", scope);
    if (seq >= 0) p.arg("seq", seq);
    inside();
    p.stop(name);
  };
  const auto nothing = [] {};
  op("aten::detach", "function", 7, nothing);  // an earlier call that shows the same number: not it
  op("train_step", "user", -1, [&] {
    op("aten::linear", "function", 7, [&] { op("aten::addmm", "function", 7, nothing); });  // linear is the outermost
  });
  op("aten::relu", "function", 8, nothing);
  op("AddmmBackward0", "backward", 7, nothing);
  op("ReluBackward0", "backward", 8, nothing);
  op("SumBackward0", "backward", 9, nothing);  // no forward call carries 9: no arrow
  const Profile profile = p.snapshot();
  std::ostringstream out;
  nnprof::Report(profile).write(out, nnprof::ReportFormat::Chrome);
  const auto trace = nlohmann::json::parse(out.str());
  std::map<std::string, double> start_of;  // scope name -> its slice's ts
  std::map<std::uint64_t, std::pair<double, double>> arrows;  // id -> (s ts, f ts)
  for (const auto& e : trace["traceEvents"]) {
    if (e.value("ph", "") == "X" && e.value("cat", "") == "scope") start_of[e["name"].get<std::string>()] = e["ts"].get<double>();
    if (e.value("cat", "") != "fwd_bwd") continue;
    auto& arrow = arrows[e["id"].get<std::uint64_t>()];
    (e["ph"] == "s" ? arrow.first : arrow.second) = e["ts"].get<double>();
    if (e["ph"] == "f") {
      EXPECT_EQ(e["bp"], "e");
    }
  }
  ASSERT_EQ(arrows.size(), 2u);
  std::set<std::pair<double, double>> expected{{start_of["aten::linear"], start_of["AddmmBackward0"]},
                                               {start_of["aten::relu"], start_of["ReluBackward0"]}};
  std::set<std::pair<double, double>> got;
  for (const auto& [id, arrow] : arrows) got.insert(arrow);
  EXPECT_EQ(got, expected);
}

TEST(SpanArgs, TheHtmlTimelineShowsThemInTheSpansTooltip) {
  nnprof::Profiler p;
  {
    nnprof::ProfileGuard g(p, "conv");
    g.arg("input", "1x3x224x224");
    g.arg("<tag>", std::string(5000, 'x'));  // escaped, and cut like any long text
  }
  std::ostringstream out;
  nnprof::Report(p.snapshot()).write(out, nnprof::ReportFormat::Html);
  const std::string html = out.str();
  EXPECT_NE(html.find("\ninput: 1x3x224x224"), std::string::npos);
  EXPECT_NE(html.find("\n&lt;tag&gt;: xxxx"), std::string::npos);
  EXPECT_EQ(html.find(std::string(2100, 'x')), std::string::npos) << "a 5,000-character value is cut";
}

}  // namespace
