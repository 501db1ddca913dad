// CPU profile analyses (functions, call graph, lines, scopes, flame tree, findings) on the
// hand-built cpu_profile(), whose every number is known (see cpu_profile_fixture.hpp).
#include "analysis/cpu_profile.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include "analysis/function_name.hpp"
#include "cpu_profile_fixture.hpp"
#include "render/sentence_markup.hpp"
#include "nnprof/profile.hpp"

namespace nnprof {
namespace {

using analysis::CpuFilter;
using analysis::CpuFunction;
using analysis::FlameNode;
using analysis::FlameTree;
using testing::cpu_profile;

constexpr std::uint64_t kMsNs = 1'000'000;

const CpuFunction* find(const std::vector<CpuFunction>& fns, const std::string& name) {
  for (const CpuFunction& f : fns) {
    if (f.name == name) return &f;
  }
  return nullptr;
}

// The child of `node` named `name`, or nullptr.
const FlameNode* child(const FlameTree& tree, const FlameNode& node, const std::string& name) {
  for (const std::uint32_t c : node.children) {
    if (tree.nodes[c].name == name) return &tree.nodes[c];
  }
  return nullptr;
}

std::vector<std::string> names(const FlameTree& tree, const FlameNode& node) {
  std::vector<std::string> out;
  for (const std::uint32_t c : node.children) out.push_back(tree.nodes[c].name);
  return out;
}

// ---- functions --------------------------------------------------------------------------

TEST(ReadableFunction, DropsReturnTypeParametersQualifiersAndCloneSuffixes) {
  using nnprof::analysis::readable_function;
  EXPECT_EQ(readable_function("void ns::gemm<ns::Avx512, 1, 16>(int, float const*) [clone .constprop.0]"),
            "ns::gemm<ns::Avx512, 1, 16>");
  EXPECT_EQ(readable_function("ns::(anonymous namespace)::Model::forward(int, int) const"),
            "ns::(anonymous namespace)::Model::forward");
  EXPECT_EQ(readable_function("std::vector<int, std::allocator<int> > f<int>(std::vector<int, std::allocator<int> >&&)"),
            "f<int>");
  EXPECT_EQ(readable_function("unsigned long ns::count()"), "ns::count");
  EXPECT_EQ(readable_function("nnprof::f()::{lambda(int)#1}::operator()(int) const"),
            "nnprof::f()::{lambda(int)#1}::operator()");
  // Unchanged: C names, unknown frames, operators made of brackets.
  EXPECT_EQ(readable_function("memcpy"), "memcpy");
  EXPECT_EQ(readable_function("[unknown]"), "[unknown]");
  EXPECT_EQ(readable_function("bool operator<(A const&, A const&)"), "bool operator<(A const&, A const&)");
  // Still long without the parameters: the template arguments are elided.
  const std::string shortened = readable_function(
      "void nnprof::transformer::kernels::simd::direct_block<nnprof::transformer::kernels::detail::(anonymous "
      "namespace)::Avx512, 1, 16, false>(int, float const*, int, float const*, int, float*, int, int, bool)");
  EXPECT_EQ(shortened, "nnprof::transformer::kernels::simd::direct_block<…>");
}

TEST(CpuFunctions, SelfAndTotalSortedBySelfThenTotalThenName) {
  const Profile p = cpu_profile();
  const auto fns = analysis::cpu_functions(p);
  std::vector<std::string> order;
  for (const CpuFunction& f : fns) order.push_back(f.name);
  EXPECT_EQ(order, (std::vector<std::string>{"matmul", "dot", "recurse", "[unknown]", "libfoo.so+0x7000", "memcpy",
                                             "main", "run_step"}));
  const CpuFunction& matmul = fns[0];
  EXPECT_EQ(matmul.self.samples, 4u);
  EXPECT_EQ(matmul.self.ns, 6 * kMsNs);  // 2 x 1 ms on main, 2 x 2 ms on the worker
  EXPECT_EQ(matmul.total.samples, 9u);
  EXPECT_EQ(matmul.total.ns, 11 * kMsNs);
  EXPECT_DOUBLE_EQ(matmul.self_share, 4.0 / 14.0);  // of every sample, the one without a stack included
  EXPECT_DOUBLE_EQ(matmul.total_share, 9.0 / 14.0);
  EXPECT_EQ(matmul.module, "train");
  EXPECT_EQ(matmul.function, testing::kCpuMatmul);

  const CpuFunction* main = find(fns, "main");
  ASSERT_NE(main, nullptr);
  EXPECT_EQ(main->self.samples, 0u);
  EXPECT_EQ(main->total.samples, 13u);
  EXPECT_EQ(main->total.ns, 15 * kMsNs);
  EXPECT_EQ(find(fns, "run_step")->total.samples, 12u);
}

TEST(CpuFunctions, RecursiveFunctionCountedOncePerSample) {
  const auto fns = analysis::cpu_functions(cpu_profile());
  const CpuFunction* recurse = find(fns, "recurse");
  ASSERT_NE(recurse, nullptr);
  EXPECT_EQ(recurse->self.samples, 2u);
  EXPECT_EQ(recurse->total.samples, 2u);  // three frames per stack, two samples
  EXPECT_EQ(recurse->total.ns, 2 * kMsNs);
}

TEST(CpuFunctions, InlinedFrameIsItsOwnFunctionAndTakesTheSelfSample) {
  const auto fns = analysis::cpu_functions(cpu_profile());
  const CpuFunction* dot = find(fns, "dot");
  ASSERT_NE(dot, nullptr);
  EXPECT_EQ(dot->self.samples, 4u);
  EXPECT_EQ(dot->total.samples, 4u);
  // matmul, which dot was inlined into at the same address, is still on those stacks.
  EXPECT_EQ(find(fns, "matmul")->total.samples, 9u);
}

TEST(CpuFunctions, UnsymbolizedFramesByModuleAndAddressOrUnknown) {
  const auto fns = analysis::cpu_functions(cpu_profile());
  const CpuFunction* foo = find(fns, "libfoo.so+0x7000");
  ASSERT_NE(foo, nullptr);
  EXPECT_EQ(foo->function, kNone);
  EXPECT_EQ(foo->address, 0x7000u);
  EXPECT_EQ(foo->module, "libfoo.so");
  EXPECT_EQ(foo->self.samples, 1u);
  const CpuFunction* unknown = find(fns, "[unknown]");
  ASSERT_NE(unknown, nullptr);
  EXPECT_EQ(unknown->module, "");
  EXPECT_EQ(unknown->self.samples, 1u);
}

TEST(CpuFunctions, UnsymbolizedFramesNamedByModuleOffsetWhenKnown) {
  Profile p = cpu_profile();
  p.frames[8].module_offset = 0x700;
  const auto fns = analysis::cpu_functions(p);
  const CpuFunction* foo = find(fns, "libfoo.so+0x700");
  ASSERT_NE(foo, nullptr);
  EXPECT_EQ(foo->address, 0x7000u);
  EXPECT_EQ(analysis::cpu_frame_function(p, 8), "libfoo.so+0x700");
  EXPECT_EQ(analysis::cpu_frame_function(p, 9), "[unknown]");
  EXPECT_EQ(analysis::cpu_frame_function(p, 99), "[unknown]");
}

TEST(CpuFunctions, FilterByThreadAndScope) {
  const Profile p = cpu_profile();
  const auto worker = analysis::cpu_functions(p, CpuFilter{1, 0});
  ASSERT_EQ(worker.size(), 3u);  // matmul, main, run_step
  EXPECT_EQ(worker[0].name, "matmul");
  EXPECT_EQ(worker[0].self.samples, 2u);
  EXPECT_EQ(worker[0].self.ns, 4 * kMsNs);
  EXPECT_DOUBLE_EQ(worker[0].self_share, 1.0);

  const auto backward = analysis::cpu_functions(p, CpuFilter{kNone, 3});
  ASSERT_EQ(backward.size(), 3u);
  EXPECT_EQ(backward[0].name, "recurse");
  EXPECT_DOUBLE_EQ(backward[0].self_share, 1.0);

  // train_step (node 1) holds everything below it: 12 samples.
  EXPECT_EQ(analysis::cpu_sample_total(p, CpuFilter{kNone, 1}).samples, 12u);
  EXPECT_EQ(analysis::cpu_sample_total(p).samples, 14u);
  EXPECT_EQ(analysis::cpu_sample_total(p).ns, 16 * kMsNs);
}

TEST(CpuFunctions, EmptyWithoutSamples) {
  Profile p;
  EXPECT_TRUE(analysis::cpu_functions(p).empty());
  EXPECT_TRUE(analysis::cpu_hot_lines(p, 10).empty());
  EXPECT_TRUE(analysis::cpu_scopes(p, 3).empty());
  EXPECT_TRUE(analysis::cpu_facts(p).empty());
  EXPECT_TRUE(analysis::cpu_bottlenecks(p).empty());
  const FlameTree tree = analysis::flame_tree(p);
  ASSERT_EQ(tree.nodes.size(), 1u);
  EXPECT_EQ(tree.nodes[0].total.samples, 0u);
}

// ---- call graph -------------------------------------------------------------------------

TEST(CpuCallers, CallersAndCalleesWithSampleCounts) {
  const auto matmul = analysis::cpu_callers(cpu_profile(), "matmul");
  EXPECT_EQ(matmul.self.samples, 4u);
  EXPECT_EQ(matmul.total.samples, 9u);
  EXPECT_EQ(matmul.outermost.samples, 0u);
  ASSERT_EQ(matmul.callers.size(), 1u);
  EXPECT_EQ(matmul.callers[0].function, "run_step");
  EXPECT_EQ(matmul.callers[0].weight.samples, 9u);
  EXPECT_DOUBLE_EQ(matmul.callers[0].share, 1.0);
  ASSERT_EQ(matmul.callees.size(), 2u);
  EXPECT_EQ(matmul.callees[0].function, "dot");  // inlined calls are calls
  EXPECT_EQ(matmul.callees[0].weight.samples, 4u);
  EXPECT_EQ(matmul.callees[1].function, "memcpy");
  EXPECT_EQ(matmul.callees[1].weight.samples, 1u);
  EXPECT_DOUBLE_EQ(matmul.callees[1].share, 1.0 / 9.0);
}

TEST(CpuCallers, RecursionIsNoEdgeAndOutermostIsCounted) {
  const Profile p = cpu_profile();
  const auto recurse = analysis::cpu_callers(p, "recurse");
  ASSERT_EQ(recurse.callers.size(), 1u);
  EXPECT_EQ(recurse.callers[0].function, "run_step");
  EXPECT_EQ(recurse.callers[0].weight.samples, 2u);  // once per sample, not once per frame
  EXPECT_TRUE(recurse.callees.empty());

  const auto main = analysis::cpu_callers(p, "main");
  EXPECT_EQ(main.outermost.samples, 13u);
  EXPECT_TRUE(main.callers.empty());
  ASSERT_EQ(main.callees.size(), 2u);
  EXPECT_EQ(main.callees[0].function, "run_step");
  EXPECT_EQ(main.callees[0].weight.samples, 12u);
  EXPECT_EQ(main.callees[1].function, "[unknown]");

  const auto none = analysis::cpu_callers(p, "no_such_function");
  EXPECT_EQ(none.total.samples, 0u);
  EXPECT_TRUE(none.callers.empty());
}

// ---- lines ------------------------------------------------------------------------------

TEST(CpuLines, HotLinesOverallWithTheirFunction) {
  const auto lines = analysis::cpu_hot_lines(cpu_profile(), 10);
  ASSERT_EQ(lines.size(), 3u);  // memcpy, libfoo and [unknown] have no line
  EXPECT_EQ(lines[0].function, "matmul");
  EXPECT_EQ(lines[0].file, "model.cpp");
  EXPECT_EQ(lines[0].line, 31u);
  EXPECT_EQ(lines[0].self.samples, 4u);
  EXPECT_EQ(lines[0].self.ns, 6 * kMsNs);
  EXPECT_DOUBLE_EQ(lines[0].share, 4.0 / 14.0);
  EXPECT_EQ(lines[1].function, "dot");  // the inlined function's own line, not matmul:30
  EXPECT_EQ(lines[1].line, 42u);
  EXPECT_EQ(lines[1].self.samples, 4u);
  EXPECT_EQ(lines[2].function, "recurse");
  EXPECT_EQ(lines[2].line, 50u);
  EXPECT_EQ(lines[2].self.samples, 2u);
  EXPECT_EQ(analysis::cpu_hot_lines(cpu_profile(), 1).size(), 1u);
}

TEST(CpuLines, LineProfileOfOneFunction) {
  const auto lines = analysis::cpu_function_lines(cpu_profile(), "recurse");
  ASSERT_EQ(lines.size(), 1u);
  EXPECT_EQ(lines[0].line, 50u);
  EXPECT_EQ(lines[0].self.samples, 2u);
  EXPECT_TRUE(analysis::cpu_function_lines(cpu_profile(), "memcpy").empty());
}

// ---- per scope --------------------------------------------------------------------------

TEST(CpuScopes, DescendantsAggregatedToTheNodePathWithTheirOwnTopFunctions) {
  const auto scopes = analysis::cpu_scopes(cpu_profile(), 2);
  ASSERT_EQ(scopes.size(), 4u);
  EXPECT_EQ(scopes[0].path, "train_step");
  EXPECT_EQ(scopes[0].node, 1u);
  EXPECT_EQ(scopes[0].samples.samples, 12u);
  EXPECT_EQ(scopes[0].self.samples, 1u);
  EXPECT_DOUBLE_EQ(scopes[0].share, 12.0 / 14.0);
  ASSERT_EQ(scopes[0].top.size(), 2u);
  EXPECT_EQ(scopes[0].top[0].name, "matmul");
  EXPECT_EQ(scopes[0].top[1].name, "dot");
  EXPECT_DOUBLE_EQ(scopes[0].top[0].self_share, 4.0 / 12.0);  // of the scope's samples

  EXPECT_EQ(scopes[1].path, "train_step > forward");
  EXPECT_EQ(scopes[1].samples.samples, 9u);
  EXPECT_EQ(scopes[1].samples.ns, 11 * kMsNs);
  EXPECT_EQ(scopes[1].top[0].name, "matmul");
  EXPECT_EQ(scopes[1].top[0].total.samples, 9u);

  EXPECT_EQ(scopes[2].path, "[outside any scope]");  // 2 samples, as backward: by path
  EXPECT_EQ(scopes[2].node, 0u);
  EXPECT_EQ(scopes[2].samples.samples, 2u);
  ASSERT_EQ(scopes[2].top.size(), 2u);  // the sample without a stack has no function
  EXPECT_EQ(scopes[2].top[0].name, "[unknown]");
  EXPECT_EQ(scopes[2].top[1].name, "main");  // no self sample, but on the stack
  EXPECT_EQ(scopes[2].top[1].total.samples, 1u);

  EXPECT_EQ(scopes[3].path, "train_step > backward");
  EXPECT_EQ(scopes[3].top[0].name, "recurse");
  EXPECT_DOUBLE_EQ(scopes[3].top[0].self_share, 1.0);
}

// ---- flame tree -------------------------------------------------------------------------

TEST(FlameTree, StacksMergedRootFirstWithChildrenByName) {
  const FlameTree tree = analysis::flame_tree(cpu_profile());
  ASSERT_EQ(tree.nodes.size(), 12u);
  const FlameNode& root = tree.nodes[0];
  EXPECT_EQ(root.name, "all");
  EXPECT_EQ(root.total.samples, 14u);
  EXPECT_EQ(root.total.ns, 16 * kMsNs);
  EXPECT_EQ(names(tree, root), (std::vector<std::string>{"[no stack]", "main"}));
  const FlameNode* main = child(tree, root, "main");
  ASSERT_NE(main, nullptr);
  EXPECT_EQ(main->total.samples, 13u);
  EXPECT_EQ(main->depth, 1u);
  EXPECT_EQ(names(tree, *main), (std::vector<std::string>{"[unknown]", "run_step"}));
  const FlameNode* run = child(tree, *main, "run_step");
  EXPECT_EQ(names(tree, *run), (std::vector<std::string>{"libfoo.so+0x7000", "matmul", "recurse"}));
  const FlameNode* matmul = child(tree, *run, "matmul");
  EXPECT_EQ(matmul->total.samples, 9u);
  EXPECT_EQ(matmul->self.samples, 4u);
  EXPECT_EQ(matmul->module, "train");
  EXPECT_EQ(child(tree, *matmul, "dot")->self.samples, 4u);
  EXPECT_EQ(child(tree, *matmul, "memcpy")->module, "libc.so.6");
  // Recursion keeps its frames: a flame graph shows the depth.
  const FlameNode* r1 = child(tree, *run, "recurse");
  const FlameNode* r2 = child(tree, *r1, "recurse");
  const FlameNode* r3 = child(tree, *r2, "recurse");
  ASSERT_NE(r3, nullptr);
  EXPECT_EQ(r3->self.samples, 2u);
  EXPECT_EQ(r3->depth, 5u);
  EXPECT_EQ(tree.max_depth, 5u);
  // Every parent comes before its children, and totals add up.
  for (std::uint32_t i = 0; i < tree.nodes.size(); ++i) {
    std::uint64_t sum = tree.nodes[i].self.samples;
    for (const std::uint32_t c : tree.nodes[i].children) {
      EXPECT_GT(c, i);
      EXPECT_EQ(tree.nodes[c].parent, i);
      sum += tree.nodes[c].total.samples;
    }
    EXPECT_EQ(sum, tree.nodes[i].total.samples) << tree.nodes[i].name;
  }
}

TEST(FlameTree, FilteredByThreadOrScope) {
  const Profile p = cpu_profile();
  const FlameTree worker = analysis::flame_tree(p, CpuFilter{1, 0});
  ASSERT_EQ(worker.nodes.size(), 4u);  // all > main > run_step > matmul
  EXPECT_EQ(worker.nodes[0].total.samples, 2u);
  EXPECT_EQ(worker.nodes[3].name, "matmul");
  EXPECT_EQ(worker.nodes[3].self.ns, 4 * kMsNs);

  const FlameTree backward = analysis::flame_tree(p, CpuFilter{kNone, 3});
  EXPECT_EQ(backward.nodes[0].total.samples, 2u);
  EXPECT_EQ(backward.max_depth, 5u);
}

TEST(FlameTree, ScopesAboveTheFrames) {
  const FlameTree tree = analysis::flame_tree(cpu_profile(), {}, true);
  const FlameNode& root = tree.nodes[0];
  EXPECT_EQ(names(tree, root), (std::vector<std::string>{"train_step", "[no stack]", "main"}));
  const FlameNode* train = child(tree, root, "train_step");
  EXPECT_TRUE(train->scope);
  EXPECT_EQ(train->total.samples, 12u);
  EXPECT_EQ(names(tree, *train), (std::vector<std::string>{"backward", "forward", "main"}));
  const FlameNode* forward = child(tree, *train, "forward");
  EXPECT_EQ(forward->total.samples, 9u);
  EXPECT_EQ(child(tree, *forward, "main")->total.samples, 9u);
  EXPECT_EQ(child(tree, root, "main")->total.samples, 1u);  // the [unknown] sample outside scopes
}

// ---- summary and findings ---------------------------------------------------------------

TEST(CpuFacts, SummaryOfHowSamplingRan) {
  const Profile p = cpu_profile();
  const auto facts = analysis::cpu_facts(p);
  ASSERT_EQ(facts.size(), 3u);
  EXPECT_EQ(facts[0].label, "Sampling");
  EXPECT_EQ(render::text_of(p, facts[0].value),
            "CPU time of each thread, 1000 Hz requested (one sample every 1.00 ms), by perf_event; call stacks by "
            "libunwind");
  EXPECT_EQ(render::text_of(p, facts[1].value), "14 samples (16.0 ms of CPU time) on 2 threads");
  EXPECT_EQ(render::text_of(p, facts[2].value),
            "3 dropped (the sample buffer was full), 1 stack cut at the depth limit, 1 without a stack");
}

TEST(CpuBottlenecks, FunctionPastTheThresholdWithItsLineAndCaller) {
  const Profile p = cpu_profile();
  EXPECT_TRUE(analysis::cpu_bottlenecks(p).empty());  // 4 of 14 = 28.6% < 40%
  const auto found = analysis::cpu_bottlenecks(p, {0.25, 10});
  ASSERT_EQ(found.size(), 2u);
  EXPECT_EQ(found[0].kind, analysis::BottleneckKind::CpuHotspot);
  EXPECT_EQ(found[0].severity, analysis::BottleneckSeverity::Medium);
  EXPECT_DOUBLE_EQ(found[0].value, 4.0 / 14.0);
  EXPECT_EQ(render::text_of(p, found[0].description),
            "matmul (train) was running in 28.6% of the 14 CPU samples (6.00 ms of its own; threshold 25.0%).");
  const std::string suggestion = render::text_of(p, found[0].suggestion);
  EXPECT_NE(suggestion.find("model.cpp:31 (100.0% of its own samples)"), std::string::npos) << suggestion;
  EXPECT_NE(suggestion.find("through run_step (100.0%)"), std::string::npos) << suggestion;
  EXPECT_TRUE(analysis::cpu_bottlenecks(p, {0.25, 15}).empty());  // too few samples to judge
}

TEST(CpuBottlenecks, AllocatorHotspotSuggestsAllocatingLess) {
  Profile p = cpu_profile();
  p.strings[testing::kCpuMatmul] = "malloc";
  const auto found = analysis::cpu_bottlenecks(p, {0.25, 10});
  ASSERT_FALSE(found.empty());
  EXPECT_NE(render::text_of(p, found[0].suggestion).find("heap allocator"), std::string::npos);
}

}  // namespace
}  // namespace nnprof
