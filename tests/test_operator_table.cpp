// The operator table (nnprof::operator_table) and its report section: framework operator calls
// (spans with "op_scope", as the LibTorch observer records them) grouped by operator and input
// shapes. Exact figures come from profiles built by hand; the rendering from profiles recorded
// by a real Profiler.
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdint>
#include <sstream>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "analysis/operators.hpp"
#include "nnprof/nnprof.hpp"
#include "nnprof/operators.hpp"
#include "render/sentence_markup.hpp"

namespace {

using nnprof::OperatorGroup;
using nnprof::OperatorScope;
using nnprof::OperatorTable;
using nnprof::Profile;
using nnprof::Span;
using nnprof::SpanArg;
using nnprof::StringId;

// A profile built span by span, in the order the profile builder sorts them (thread, start,
// depth), each span's arguments right after it (so they are sorted by span).
class ProfileBuilder {
 public:
  ProfileBuilder() {
    profile_.strings.emplace_back("");
    profile_.call_tree.emplace_back();  // the root
    profile_.meta.duration_ns = 1'000;
  }
  StringId name(std::string_view text) {
    for (StringId i = 0; i < profile_.strings.size(); ++i)
      if (profile_.strings[i] == text) return i;
    profile_.strings.emplace_back(text);
    return static_cast<StringId>(profile_.strings.size() - 1);
  }
  // A span; returns *this so that its arguments follow.
  ProfileBuilder& span(std::string_view op, std::uint32_t depth, std::uint64_t start, std::uint64_t end,
                       std::uint32_t thread = 0, std::uint32_t node = 0) {
    profile_.spans.push_back(Span{thread, name(op), node, depth, start, end});
    return *this;
  }
  ProfileBuilder& text(std::string key, std::string value) {
    SpanArg a;
    a.span = last();
    a.key = std::move(key);
    a.string_value = std::move(value);
    profile_.span_args.push_back(std::move(a));
    return *this;
  }
  ProfileBuilder& integer(std::string key, std::int64_t value) {
    SpanArg a;
    a.span = last();
    a.key = std::move(key);
    a.type = SpanArg::Type::Int;
    a.int_value = value;
    profile_.span_args.push_back(std::move(a));
    return *this;
  }
  ProfileBuilder& real(std::string key, double value) {
    SpanArg a;
    a.span = last();
    a.key = std::move(key);
    a.type = SpanArg::Type::Real;
    a.real_value = value;
    profile_.span_args.push_back(std::move(a));
    return *this;
  }
  // An operator span: "op_scope" and, when given, "input_shapes".
  ProfileBuilder& op(std::string_view op, std::string scope, std::uint32_t depth, std::uint64_t start,
                     std::uint64_t end, std::string shapes = {}, std::uint32_t thread = 0, std::uint32_t node = 0) {
    span(op, depth, start, end, thread, node).text("op_scope", std::move(scope));
    if (!shapes.empty()) text("input_shapes", std::move(shapes));
    return *this;
  }
  Profile& profile() { return profile_; }

 private:
  std::uint32_t last() const { return static_cast<std::uint32_t>(profile_.spans.size() - 1); }
  Profile profile_;
};

const OperatorGroup* find_group(const Profile& p, const OperatorTable& t, std::string_view name,
                                std::string_view shapes) {
  for (const OperatorGroup& g : t.groups)
    if (p.str(g.name) == name && g.input_shapes == shapes) return &g;
  return nullptr;
}

TEST(OperatorTable, GroupsByOperatorAndInputShapesExactly) {
  ProfileBuilder b;
  const std::string a = "[[128], [32, 64], [64, 128], [], []]";
  const std::string c = "[[128], [16, 64], [64, 128], [], []]";
  b.op("aten::addmm", "function", 1, 0, 10, a).text("input_dtypes", "[float, float, float, Scalar, Scalar]");
  b.op("aten::addmm", "function", 1, 20, 30, c).text("input_dtypes", "[float, float, float, Scalar, Scalar]");
  b.op("aten::addmm", "function", 1, 40, 50, a).text("input_dtypes", "[float, float, float, Scalar, Scalar]");
  b.op("aten::addmm", "function", 1, 60, 70, a).text("input_dtypes", "[half, half, half, Scalar, Scalar]");
  b.op("aten::relu", "function", 1, 80, 85, "[[32, 128]]");
  b.op("aten::addmm", "function", 1, 90, 95);  // shapes not recorded: a group of its own
  b.span("data_loading", 1, 100, 200).text("file", "batch.bin");  // arguments, but no operator
  const Profile& p = b.profile();

  const OperatorTable t = nnprof::operator_table(p);
  EXPECT_EQ(t.calls, 6u);
  ASSERT_EQ(t.groups.size(), 4u);
  const OperatorGroup* addmm_a = find_group(p, t, "aten::addmm", a);
  ASSERT_NE(addmm_a, nullptr);
  EXPECT_EQ(addmm_a->calls, 3u);
  EXPECT_EQ(addmm_a->total_ns, 30u);
  EXPECT_EQ(addmm_a->self_ns, 30u);
  EXPECT_DOUBLE_EQ(addmm_a->mean_ns(), 10.0);
  EXPECT_EQ(addmm_a->scope, OperatorScope::Function);
  EXPECT_EQ(addmm_a->input_dtypes,
            (std::vector<std::string>{"[float, float, float, Scalar, Scalar]", "[half, half, half, Scalar, Scalar]"}));
  ASSERT_NE(find_group(p, t, "aten::addmm", c), nullptr);
  EXPECT_EQ(find_group(p, t, "aten::addmm", c)->calls, 1u);
  ASSERT_NE(find_group(p, t, "aten::relu", "[[32, 128]]"), nullptr);
  ASSERT_NE(find_group(p, t, "aten::addmm", ""), nullptr);
  EXPECT_TRUE(find_group(p, t, "aten::addmm", "")->input_dtypes.empty());
  EXPECT_EQ(find_group(p, t, "data_loading", ""), nullptr);
  // Most self time first.
  EXPECT_EQ(&t.groups.front(), addmm_a);
  for (std::size_t i = 1; i < t.groups.size(); ++i) EXPECT_GE(t.groups[i - 1].self_ns, t.groups[i].self_ns);
  EXPECT_EQ(t.self_ns, 30u + 10u + 5u + 5u);
  EXPECT_EQ(nnprof::analysis::readable_shapes(a), "[[128], [32, 64], [64, 128]]");
  EXPECT_EQ(nnprof::analysis::readable_shapes("[[], []]"), "[[]]");
  EXPECT_EQ(nnprof::analysis::readable_shapes(""), "");
}

TEST(OperatorTable, SelfTimeLeavesOutTheSpansDirectlyInside) {
  // thread 0:  aten::linear [0, 100]
  //              aten::addmm [10, 70]
  //                copy_weights (not an operator) [20, 30]
  //              aten::t [75, 85]
  // thread 1:  aten::relu [50, 150]
  ProfileBuilder b;
  b.profile().meta.duration_ns = 300;
  b.op("aten::linear", "function", 1, 0, 100);
  b.op("aten::addmm", "function", 2, 10, 70);
  b.span("copy_weights", 3, 20, 30);
  b.op("aten::t", "function", 2, 75, 85);
  b.op("aten::relu", "function", 1, 50, 150, {}, 1);
  const Profile& p = b.profile();
  const OperatorTable t = nnprof::operator_table(p);
  ASSERT_EQ(t.groups.size(), 4u);
  const auto* linear = find_group(p, t, "aten::linear", "");
  const auto* addmm = find_group(p, t, "aten::addmm", "");
  const auto* transpose = find_group(p, t, "aten::t", "");
  ASSERT_TRUE(linear && addmm && transpose);
  EXPECT_EQ(linear->total_ns, 100u);
  EXPECT_EQ(linear->self_ns, 30u);  // 100 - 60 (addmm) - 10 (t)
  EXPECT_EQ(addmm->total_ns, 60u);
  EXPECT_EQ(addmm->self_ns, 50u);   // 60 - 10 (copy_weights, a child though not an operator)
  EXPECT_EQ(transpose->self_ns, 10u);
  EXPECT_EQ(p.str(t.groups[0].name), "aten::relu");
  EXPECT_EQ(p.str(t.groups[1].name), "aten::addmm");
  EXPECT_EQ(p.str(t.groups[2].name), "aten::linear");
  // Outermost calls: linear on thread 0, relu on thread 1; together they cover [0, 150].
  EXPECT_EQ(t.operator_ns, 200u);
  EXPECT_EQ(t.covered_ns, 150u);
  EXPECT_DOUBLE_EQ(t.fraction_of_run(), 0.5);
}

TEST(OperatorTable, FlopsPerSecondIsTotalFlopsOverTotalTime) {
  ProfileBuilder b;
  b.op("aten::mm", "function", 1, 0, 1'000, "[[64, 64], [64, 64]]").real("flops", 524'288.0).integer("bytes", 49'152);
  b.op("aten::mm", "function", 1, 2'000, 4'000, "[[64, 64], [64, 64]]").real("flops", 524'288.0).integer("bytes", 49'152);
  b.op("aten::mm", "function", 1, 5'000, 6'000, "[[64, 64], [64, 64]]");  // FLOPs not known for this call
  b.op("aten::relu", "function", 1, 7'000, 8'000, "[[64, 64]]");
  const Profile& p = b.profile();
  const OperatorTable t = nnprof::operator_table(p);
  const auto* mm = find_group(p, t, "aten::mm", "[[64, 64], [64, 64]]");
  ASSERT_NE(mm, nullptr);
  EXPECT_EQ(mm->calls, 3u);
  EXPECT_EQ(mm->flops_calls, 2u);
  EXPECT_DOUBLE_EQ(mm->flops, 1'048'576.0);
  EXPECT_EQ(mm->bytes, 98'304u);
  EXPECT_DOUBLE_EQ(mm->flops_per_second(), 1'048'576.0 * 1e9 / 4'000.0);
  const auto* relu = find_group(p, t, "aten::relu", "[[64, 64]]");
  ASSERT_NE(relu, nullptr);
  EXPECT_EQ(relu->flops_calls, 0u);
  EXPECT_DOUBLE_EQ(relu->flops_per_second(), 0.0);
}

TEST(OperatorTable, BackwardOperatorsLinkToTheOutermostForwardCallOfTheirSequenceNumber) {
  ProfileBuilder b;
  b.profile().meta.duration_ns = 2'000;
  // Forward, thread 0: linear (seq 7) calls addmm (seq 7 too): linear is the outermost.
  b.op("aten::linear", "function", 1, 0, 100, "[[32, 64], [128, 64], [128]]").integer("seq", 7);
  b.op("aten::addmm", "function", 2, 10, 90, "[[128], [32, 64], [64, 128], [], []]").integer("seq", 7);
  b.op("aten::relu", "function", 1, 100, 120, "[[32, 128]]").integer("seq", 8);
  b.op("aten::linear", "function", 1, 200, 300, "[[32, 64], [128, 64], [128]]").integer("seq", 9);
  b.op("aten::addmm", "function", 2, 210, 290, "[[128], [32, 64], [64, 128], [], []]").integer("seq", 9);
  // Backward, thread 1 (the autograd engine).
  b.op("ReluBackward0", "backward", 1, 1'000, 1'010, "[[32, 128], [32, 128]]", 1).integer("seq", 8).integer("fwd_thread", 1);
  b.op("AddmmBackward0", "backward", 1, 1'020, 1'100, "[[32, 128]]", 1).integer("seq", 9).integer("fwd_thread", 1);
  b.op("aten::mm", "function", 2, 1'030, 1'060, "[[32, 128], [128, 64]]", 1);  // called by the backward: no seq
  b.op("AddmmBackward0", "backward", 1, 1'120, 1'200, "[[32, 128]]", 1).integer("seq", 7).integer("fwd_thread", 1);
  b.op("AddmmBackward0", "backward", 1, 1'220, 1'230, "[[32, 128]]", 1).integer("seq", 42);  // its forward was not kept
  const Profile& sorted = b.profile();

  const OperatorTable t = nnprof::operator_table(sorted);
  const auto* addmm_backward = find_group(sorted, t, "AddmmBackward0", "[[32, 128]]");
  const auto* relu_backward = find_group(sorted, t, "ReluBackward0", "[[32, 128], [32, 128]]");
  const auto* linear = find_group(sorted, t, "aten::linear", "[[32, 64], [128, 64], [128]]");
  const auto* relu = find_group(sorted, t, "aten::relu", "[[32, 128]]");
  ASSERT_TRUE(addmm_backward && relu_backward && linear && relu);
  EXPECT_EQ(addmm_backward->scope, OperatorScope::Backward);
  EXPECT_EQ(addmm_backward->calls, 3u);
  ASSERT_EQ(addmm_backward->forward.size(), 1u);
  EXPECT_EQ(&t.groups[addmm_backward->forward[0].group], linear);  // not aten::addmm: linear is outermost
  EXPECT_EQ(addmm_backward->forward[0].calls, 2u);
  EXPECT_EQ(addmm_backward->unlinked_calls, 1u);
  EXPECT_EQ(addmm_backward->self_ns, 80u + 80u + 10u - 30u);  // aten::mm ran inside the first
  ASSERT_EQ(relu_backward->forward.size(), 1u);
  EXPECT_EQ(&t.groups[relu_backward->forward[0].group], relu);
  EXPECT_TRUE(linear->forward.empty());
  const auto* mm = find_group(sorted, t, "aten::mm", "[[32, 128], [128, 64]]");
  ASSERT_NE(mm, nullptr);
  EXPECT_TRUE(mm->forward.empty());
}

TEST(OperatorTable, HeapPerCallComesFromTheCallPathsOfTheGroup) {
  ProfileBuilder b;
  Profile& p = b.profile();
  p.heap.tracked = true;
  // Node 1: aten::empty under the root, 4 calls, 4 KiB; node 2: aten::empty under a scope, 1 call, 1 KiB.
  p.call_tree.resize(4);
  for (std::uint32_t i = 1; i < 4; ++i) p.call_tree[i].id = i;
  p.call_tree[1].name = b.name("aten::empty");
  p.call_tree[1].time.count = 4;
  p.call_tree[1].heap.alloc_bytes = 4'096;
  p.call_tree[2].name = b.name("block");
  p.call_tree[3].name = b.name("aten::empty");
  p.call_tree[3].parent = 2;
  p.call_tree[3].time.count = 1;
  p.call_tree[3].heap.alloc_bytes = 1'024;
  b.op("aten::empty", "function", 1, 0, 10, "[[16]]", 0, 1);
  b.op("aten::empty", "function", 1, 20, 30, "[[16]]", 0, 1);
  b.op("aten::empty", "function", 1, 40, 50, "[[256]]", 0, 1);
  b.span("block", 1, 60, 100, 0, 2);
  b.op("aten::empty", "function", 2, 70, 80, "[[16]]", 0, 3);
  const OperatorTable t = nnprof::operator_table(p);
  ASSERT_TRUE(t.heap_tracked);
  const auto* small = find_group(p, t, "aten::empty", "[[16]]");
  const auto* large = find_group(p, t, "aten::empty", "[[256]]");
  ASSERT_TRUE(small && large);
  // Both paths for [[16]]: (4 KiB + 1 KiB) over 5 calls; node 1 alone for [[256]].
  EXPECT_EQ(small->heap_alloc_bytes, 5'120u);
  EXPECT_EQ(small->heap_path_calls, 5u);
  EXPECT_DOUBLE_EQ(small->heap_bytes_per_call(), 1'024.0);
  EXPECT_EQ(large->heap_alloc_bytes, 4'096u);
  EXPECT_DOUBLE_EQ(large->heap_bytes_per_call(), 1'024.0);
}

TEST(OperatorTable, CallsCountedButNotKeptAreSaid) {
  ProfileBuilder b;
  Profile& p = b.profile();
  b.op("aten::add", "function", 1, 0, 10, "[[8], [8], []]");
  nnprof::ScopeStats add;
  add.name = b.name("aten::add");
  add.time.count = 5;  // four calls' spans were not kept
  p.scopes.push_back(add);
  const OperatorTable t = nnprof::operator_table(p);
  EXPECT_EQ(t.calls, 1u);
  EXPECT_EQ(t.recorded_calls, 5u);
}

TEST(OperatorTable, NoOperatorCallsNoTable) {
  ProfileBuilder b;
  b.span("step", 1, 0, 10).text("shape", "[[1]]").integer("seq", 3);
  EXPECT_TRUE(nnprof::operator_table(b.profile()).empty());
  EXPECT_TRUE(nnprof::operator_table(Profile{}).empty());
}

// ---- the report section --------------------------------------------------------------------

std::string rendered(const Profile& profile, nnprof::ReportFormat format, nnprof::ReportOptions options = {}) {
  std::ostringstream out;
  nnprof::Report(profile, options).write(out, format);
  return out.str();
}

// A small model's forward and backward as the LibTorch observer records them.
Profile recorded_model() {
  nnprof::Profiler p;
  for (int step = 0; step < 3; ++step) {
    p.start("aten::linear");
    p.arg("op_scope", "function");
    p.arg("input_shapes", "[[32, 64], [128, 64], [128]]");
    p.arg("input_dtypes", "[float, float, float]");
    p.arg("seq", std::int64_t{10 + step});
    p.start("aten::addmm");
    p.arg("op_scope", "function");
    p.arg("input_shapes", "[[128], [32, 64], [64, 128], [], []]");
    p.arg("input_dtypes", "[float, float, float, Scalar, Scalar]");
    p.arg("seq", std::int64_t{10 + step});
    p.arg("flops", 524'288.0);
    volatile double sink = 0;
    for (int i = 0; i < 20'000; ++i) sink = sink + i;
    p.stop("aten::addmm");
    p.stop("aten::linear");
    p.start("AddmmBackward0");
    p.arg("op_scope", "backward");
    p.arg("input_shapes", "[[32, 128]]");
    p.arg("seq", std::int64_t{10 + step});
    p.stop("AddmmBackward0");
  }
  return p.snapshot();
}

TEST(OperatorSection, RendersInEveryFormat) {
  const Profile profile = recorded_model();
  const OperatorTable t = nnprof::operator_table(profile);
  ASSERT_EQ(t.groups.size(), 3u);
  EXPECT_EQ(t.calls, 9u);
  EXPECT_EQ(t.recorded_calls, 9u);
  const std::string lead = nnprof::render::text_of(profile, nnprof::analysis::operators_lead(t));
  EXPECT_NE(lead.find("of operator self time"), std::string::npos) << lead;

  const std::string text = rendered(profile, nnprof::ReportFormat::Text);
  EXPECT_NE(text.find("\nOperators\n"), std::string::npos);
  EXPECT_NE(text.find("of operator self time"), std::string::npos);
  EXPECT_NE(text.find("[[128], [32, 64], [64, 128]]"), std::string::npos);
  EXPECT_NE(text.find("From forward"), std::string::npos);
  EXPECT_NE(text.find("GFLOP/s"), std::string::npos);

  const std::string markdown = rendered(profile, nnprof::ReportFormat::Markdown);
  EXPECT_NE(markdown.find("## Operators"), std::string::npos);
  EXPECT_NE(markdown.find("of operator self time"), std::string::npos);

  const std::string html = rendered(profile, nnprof::ReportFormat::Html);
  EXPECT_NE(html.find("operators-table"), std::string::npos);
  EXPECT_NE(html.find("of operator self time"), std::string::npos);

  const auto json = nlohmann::json::parse(rendered(profile, nnprof::ReportFormat::Json));
  ASSERT_TRUE(json.contains("operators"));
  const auto& ops = json["operators"];
  EXPECT_EQ(ops["calls"], 9);
  ASSERT_EQ(ops["groups"].size(), 3u);
  bool linked = false;
  for (const auto& g : ops["groups"]) {
    if (g["name"] != "AddmmBackward0") continue;
    ASSERT_EQ(g["forward"].size(), 1u);
    EXPECT_EQ(ops["groups"][g["forward"][0]["group"].get<std::size_t>()]["name"], "aten::linear");
    EXPECT_EQ(g["forward"][0]["calls"], 3);
    linked = true;
  }
  EXPECT_TRUE(linked);
}

TEST(OperatorSection, RowsAreCutAtTheLimitButTheJsonKeepsEveryGroup) {
  const Profile profile = recorded_model();
  nnprof::ReportOptions options;
  options.rows = 1;
  const std::string text = rendered(profile, nnprof::ReportFormat::Text, options);
  EXPECT_NE(text.find("Top 1 of 3 operator groups."), std::string::npos);
  const auto json = nlohmann::json::parse(rendered(profile, nnprof::ReportFormat::Json, options));
  EXPECT_EQ(json["operators"]["groups"].size(), 3u);
}

TEST(OperatorSection, AProfileWithoutOperatorsHasNoSection) {
  nnprof::Profiler p;
  for (int i = 0; i < 3; ++i) {
    p.start("step");
    p.arg("batch", std::int64_t{32});  // span arguments, but no "op_scope"
    p.stop("step");
  }
  const Profile profile = p.snapshot();
  // (The command line, in every report, names this test, so the checks look for the section's heading.)
  const std::string text = rendered(profile, nnprof::ReportFormat::Text);
  EXPECT_EQ(text.find("\nOperators\n"), std::string::npos);
  EXPECT_EQ(text.find("operator self time"), std::string::npos);
  EXPECT_EQ(rendered(profile, nnprof::ReportFormat::Markdown).find("## Operators"), std::string::npos);
  EXPECT_EQ(rendered(profile, nnprof::ReportFormat::Html).find("operators-table"), std::string::npos);
  EXPECT_FALSE(nlohmann::json::parse(rendered(profile, nnprof::ReportFormat::Json)).contains("operators"));
}

// ---- cost ----------------------------------------------------------------------------------

TEST(OperatorTable, AMillionCallsGroupInLinearTime) {
  // 1,024,000 operator spans on 2 threads: 512,000 pairs of linear > addmm, 64 shapes each.
  constexpr std::uint32_t kPairs = 512'000;
  Profile p;
  p.strings = {"", "aten::linear", "aten::addmm"};
  p.call_tree.emplace_back();
  p.meta.duration_ns = 4ULL * kPairs * 100;
  p.spans.reserve(2 * kPairs);
  p.span_args.reserve(4 * kPairs);
  std::vector<std::string> shapes;
  for (int i = 0; i < 64; ++i) shapes.push_back("[[" + std::to_string(i + 1) + ", 64]]");  // short: no allocation
  auto add_arg = [&](std::uint32_t span, const char* key, const std::string& value) {
    SpanArg a;
    a.span = span;
    a.key = key;
    a.string_value = value;
    p.span_args.push_back(std::move(a));
  };
  for (std::uint32_t thread = 0; thread < 2; ++thread) {
    for (std::uint32_t i = 0; i < kPairs / 2; ++i) {
      const std::uint64_t start = std::uint64_t{i} * 100;
      const std::string& shape = shapes[i % shapes.size()];
      const auto outer = static_cast<std::uint32_t>(p.spans.size());
      p.spans.push_back(Span{thread, 1, 0, 1, start, start + 90});
      add_arg(outer, "op_scope", "function");
      add_arg(outer, "input_shapes", shape);
      p.spans.push_back(Span{thread, 2, 0, 2, start + 10, start + 80});
      add_arg(outer + 1, "op_scope", "function");
      add_arg(outer + 1, "input_shapes", shape);
    }
  }
  const auto begin = std::chrono::steady_clock::now();
  const OperatorTable t = nnprof::operator_table(p);
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - begin).count();
  EXPECT_EQ(t.calls, 2u * kPairs);
  ASSERT_EQ(t.groups.size(), 128u);
  for (const OperatorGroup& g : t.groups) {
    EXPECT_EQ(g.calls, 2u * kPairs / 128);
    EXPECT_EQ(g.self_ns, g.calls * (p.str(g.name) == "aten::linear" ? 20u : 70u));
  }
  EXPECT_EQ(t.operator_ns, std::uint64_t{kPairs} * 90);
  EXPECT_EQ(t.covered_ns, std::uint64_t{kPairs / 2} * 90);
  std::printf("operator_table of %u calls: %.3f s\n", 2 * kPairs, seconds);
  // Far above the linear cost (about 0.1 s here) on a loaded 2-core machine, far below a
  // quadratic one (hours).
  EXPECT_LT(seconds, 30.0);
}

}  // namespace
