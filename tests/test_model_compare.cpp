// Model descriptions (nnprof/model_info.hpp) and the model comparison (nnprof/model_compare.hpp):
// descriptions through save and load, figures and ratios of hand-built profiles whose numbers
// are known exactly, the writers, and `nnprof model-compare` end to end.
#include "analysis/model_compare.hpp"

#include <gtest/gtest.h>
#include <unistd.h>

#include <chrono>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include <nlohmann/json.hpp>

#include "render/sentence_markup.hpp"
#include "nnprof/nnprof.hpp"
#include "report/model_comparison.hpp"
#include "sample_profiles.hpp"

#ifdef NNPROF_CLI_PATH
#include "cli_run.hpp"
#endif

namespace nnprof {
namespace {

namespace fs = std::filesystem;
using testing::kMs;

bool contains(std::string_view text, std::string_view needle) { return text.find(needle) != std::string_view::npos; }

// The demo's two models (examples/transformer): parameter counts as the seed prints them.
ModelInfo small_model() {
  return ModelInfo{"small", 470'528, 128, 2, 4, 64, 256, 4 * 470'528, 2 * 2 * 64 * 128 * 4};
}
ModelInfo medium_model() {
  return ModelInfo{"medium", 3'454'464, 256, 4, 8, 128, 512, 4 * 3'454'464, 2 * 4 * 128 * 256 * 4};
}

void describe(Profile& p, const ModelInfo& m) {
  Profiler scratch(ProfilerOptions{.measure_overhead = false});
  describe_model(scratch, m);
  const Profile s = scratch.snapshot();
  p.annotations.insert(s.annotations.begin(), s.annotations.end());
}

// A call tree built node by node: every figure the comparison reads is set exactly.
class TreeBuilder {
 public:
  explicit TreeBuilder(Profile& p) : p_(p) {
    if (p_.call_tree.empty()) p_.call_tree.push_back(CallTreeNode{});
  }
  /// A node under `parent` with `calls` calls taking `total_ns` (stddev `stddev_ns`), `self_ns`
  /// of it in itself, and `flops` declared in it.
  std::uint32_t add(std::uint32_t parent, const std::string& name, std::uint64_t calls, std::uint64_t total_ns,
                    std::uint64_t self_ns, double flops = 0.0, double stddev_ns = 0.0) {
    CallTreeNode n;
    n.id = static_cast<std::uint32_t>(p_.call_tree.size());
    n.parent = parent;
    n.name = intern(name);
    n.depth = p_.call_tree[parent].depth + 1;
    n.time.count = calls;
    n.time.sum_ns = total_ns;
    n.time.mean_ns = static_cast<double>(total_ns) / static_cast<double>(calls);
    n.time.stddev_ns = stddev_ns;
    n.self_ns = self_ns;
    n.thread_count = 1;
    n.flops = flops;
    p_.call_tree[parent].children.push_back(n.id);
    p_.call_tree.push_back(n);
    return n.id;
  }

 private:
  StringId intern(const std::string& s) {
    for (StringId i = 0; i < p_.strings.size(); ++i)
      if (p_.strings[i] == s) return i;
    p_.strings.push_back(s);
    return static_cast<StringId>(p_.strings.size() - 1);
  }
  Profile& p_;
};

// One model's run: 2 inferences of 10 tokens each, every forward = blocks (matmul inside) +
// lm_head. `scale` multiplies every time, `work` every FLOP count.
void add_model_run(TreeBuilder& t, std::uint32_t parent, const std::string& name, std::uint64_t scale, double work,
                   std::uint32_t layers) {
  const std::uint32_t model = t.add(parent, model_scope_name(name), 1, 500 * kMs * scale, 100 * kMs * scale);
  const std::uint32_t inference = t.add(model, "inference", 2, 400 * kMs * scale, 20 * kMs * scale, 0.0,
                                        10.0 * kMs * static_cast<double>(scale));
  const std::uint32_t token = t.add(inference, "generate_token", 20, 380 * kMs * scale, 20 * kMs * scale);
  const std::uint32_t forward = t.add(token, "forward", 20, 360 * kMs * scale, 60 * kMs * scale);
  const std::uint32_t block = t.add(forward, "block", 20 * layers, 240 * kMs * scale, 40 * kMs * scale);
  t.add(block, "matmul", 40 * layers, 200 * kMs * scale, 200 * kMs * scale, 1.6e9 * work);
  t.add(forward, "lm_head", 20, 60 * kMs * scale, 60 * kMs * scale, 0.4e9 * work);
}

// small and medium, medium `time_scale` times slower and doing 9x the FLOPs per token.
Profile two_models(std::uint64_t time_scale) {
  Profile p;
  p.meta.hostname = "test";
  describe(p, small_model());
  describe(p, medium_model());
  TreeBuilder t(p);
  add_model_run(t, 0, "medium", time_scale, 9.0, 4);
  add_model_run(t, 0, "small", 1, 1.0, 2);
  return p;
}

std::string written(const ModelComparison& c, ReportFormat format) {
  std::ostringstream out;
  write_model_comparison(c, out, format);
  return out.str();
}

// ---- reading a document -------------------------------------------------------------

std::string plain(const analysis::Sentence& s) { return render::text_of(Profile{}, s); }

const report::Section* find_section(const report::Document& d, std::string_view id) {
  for (const report::Section& s : d.sections)
    if (s.id == id) return &s;
  return nullptr;
}

template <typename B>
std::vector<const B*> blocks(const report::Section& s) {
  std::vector<const B*> found;
  for (const auto& block : s.blocks)
    if (const auto* b = std::get_if<B>(&block)) found.push_back(b);
  return found;
}

std::vector<std::string> headers(const report::Table& t) {
  std::vector<std::string> h;
  for (const report::Column& c : t.columns) h.push_back(c.header);
  return h;
}

// The row of `t` whose first cell reads `label`.
const std::vector<report::Cell>& row(const report::Table& t, std::string_view label) {
  for (const auto& r : t.rows)
    if (!r.empty() && r[0].text == label) return r;
  throw std::runtime_error("no row " + std::string(label));
}

// ---- descriptions -------------------------------------------------------------------

TEST(ModelInfo, DescriptionsRoundTripThroughSaveAndLoad) {
  Profiler profiler;
  describe_model(profiler, medium_model());
  describe_model(profiler, small_model());
  { NNPROF_SCOPE_IN(profiler, "work"); }
  const Profile p = profiler.snapshot();
  EXPECT_EQ(p.annotations.at("model.small.parameters"), "470528");
  EXPECT_EQ(p.annotations.at("model.medium.parameters"), "3454464");
  EXPECT_EQ(p.annotations.at("model.small.d_model"), "128");
  EXPECT_EQ(p.annotations.at("model.medium.kv_cache_bytes"), std::to_string(medium_model().kv_cache_bytes));
  const fs::path file = fs::temp_directory_path() / ("nnprof_model_info_" + std::to_string(::getpid()) + ".nnprof");
  p.save(file.string());
  const Profile loaded = Profile::load(file.string());
  fs::remove(file);
  const std::vector<ModelInfo> models = described_models(loaded);
  ASSERT_EQ(models.size(), 2u);
  EXPECT_EQ(models[0], medium_model()) << "ordered by name";
  EXPECT_EQ(models[1], small_model());
}

TEST(ModelInfo, DescribingAgainReplacesTheFields) {
  Profiler profiler;
  ModelInfo m = small_model();
  describe_model(profiler, m);
  m.parameters = 1000;
  describe_model(profiler, m);
  const std::vector<ModelInfo> models = described_models(profiler.snapshot());
  ASSERT_EQ(models.size(), 1u);
  EXPECT_EQ(models[0].parameters, 1000u);
}

TEST(ModelInfo, NamesAreChecked) {
  Profiler profiler;
  for (const char* bad : {"", "a.b", "a b", "model:x", "caf\xc3\xa9"}) {
    ModelInfo m = small_model();
    m.name = bad;
    EXPECT_THROW(describe_model(profiler, m), std::invalid_argument) << bad;
  }
  ModelInfo ok = small_model();
  ok.name = "GPT-2_small";
  EXPECT_NO_THROW(describe_model(profiler, ok));
  EXPECT_EQ(model_scope_name("small"), "model:small");
}

TEST(ModelInfo, MalformedValuesNameTheirKey) {
  const auto error_of = [](std::map<std::string, std::string> annotations) {
    Profile p;
    p.annotations = std::move(annotations);
    try {
      (void)described_models(p);
    } catch (const Error& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  EXPECT_TRUE(contains(error_of({{"model.x.parameters", "12a"}}), "'model.x.parameters'"));
  EXPECT_TRUE(contains(error_of({{"model.x.parameters", ""}}), "'model.x.parameters'"));
  EXPECT_TRUE(contains(error_of({{"model.x.parameters", "-5"}}), "'model.x.parameters'"));
  EXPECT_TRUE(contains(error_of({{"model.x.parameters", "5"}, {"model.x.heads", "4294967296"}}), "'model.x.heads'"));
  EXPECT_TRUE(contains(error_of({{"model.x.layers", "2"}}), "model.x.parameters")) << "parameters are required";
  // Keys of other fields (a later nnprof) and other annotations are not descriptions.
  Profile p;
  p.annotations = {{"model.x.parameters", "5"}, {"model.x.flavour", "vanilla"}, {"model.y", "?"}, {"models", "2"}};
  const std::vector<ModelInfo> models = described_models(p);
  ASSERT_EQ(models.size(), 1u);
  EXPECT_EQ(models[0].name, "x");
  EXPECT_EQ(models[0].parameters, 5u);
}

// ---- the comparison -----------------------------------------------------------------

TEST(ModelCompare, FiguresOfEachModelAreExact) {
  const ModelComparison c = compare_models(two_models(7));
  ASSERT_EQ(c.models.size(), 2u);
  EXPECT_EQ(c.baseline().info.name, "small") << "the smallest by parameters comes first";
  const ModelRun& s = c.models[0];
  EXPECT_EQ(s.scope_nodes, 1u);
  EXPECT_EQ(s.scope_ns, 500 * kMs);
  EXPECT_EQ(s.inferences, 2u);
  EXPECT_EQ(s.inference_ns, 400 * kMs);
  EXPECT_DOUBLE_EQ(s.inference_mean_ns.value(), 200.0 * kMs);
  EXPECT_DOUBLE_EQ(s.inference_stddev_ns.value(), 10.0 * kMs);
  EXPECT_EQ(s.tokens, 20u);
  EXPECT_TRUE(s.timed_inferences);
  EXPECT_DOUBLE_EQ(s.tokens_per_second.value(), 50.0);
  EXPECT_DOUBLE_EQ(s.ns_per_token.value(), 20.0 * kMs);
  EXPECT_DOUBLE_EQ(s.flops, 2e9);
  EXPECT_DOUBLE_EQ(s.flops_per_token.value(), 1e8);
  EXPECT_DOUBLE_EQ(s.flops_per_second.value(), 5e9);
  EXPECT_FALSE(s.heap_tracked);
  EXPECT_EQ(s.forward_calls, 20u);
  EXPECT_EQ(s.forward_ns, 360 * kMs);
  ASSERT_EQ(s.components.size(), 2u);
  EXPECT_EQ(s.components[0].name, "block");
  EXPECT_EQ(s.components[0].time_ns, 240 * kMs);
  EXPECT_DOUBLE_EQ(s.components[0].time_share, 240.0 / 360.0);
  EXPECT_DOUBLE_EQ(s.components[0].flops_share.value(), 0.8);
  EXPECT_EQ(s.components[1].name, "lm_head");
  // Own times: matmul 200, forward 60, lm_head 60, block 40 ms: all of forward's 360 ms.
  ASSERT_EQ(s.operations.size(), 4u);
  EXPECT_EQ(s.operations[0].name, "matmul");
  EXPECT_EQ(s.operations[0].time_ns, 200 * kMs);
  double shares = 0.0;
  for (const ForwardPart& part : s.operations) shares += part.time_share;
  EXPECT_DOUBLE_EQ(shares, 1.0);
  const ModelRun& m = c.models[1];
  EXPECT_DOUBLE_EQ(m.ns_per_token.value(), 140.0 * kMs);
  EXPECT_DOUBLE_EQ(m.flops_per_token.value(), 9e8);
  EXPECT_EQ(m.info.parameters, 3'454'464u);
}

TEST(ModelCompare, RatiosAndEfficiencyAgainstTheSmallest) {
  const ModelComparison c = compare_models(two_models(7));
  ASSERT_EQ(c.ratios.size(), 1u);
  const ModelRatio& r = c.ratios[0];
  EXPECT_EQ(r.model, "medium");
  EXPECT_EQ(r.baseline, "small");
  EXPECT_DOUBLE_EQ(r.parameters.value(), 3'454'464.0 / 470'528.0);
  EXPECT_DOUBLE_EQ(r.total_time.value(), 7.0);
  EXPECT_DOUBLE_EQ(r.time_per_token.value(), 7.0);
  EXPECT_DOUBLE_EQ(r.flops_per_token.value(), 9.0);
  EXPECT_DOUBLE_EQ(r.tokens_per_second.value(), 1.0 / 7.0);
  EXPECT_DOUBLE_EQ(r.model_bytes.value(), static_cast<double>(medium_model().weight_bytes + medium_model().kv_cache_bytes) /
                                              static_cast<double>(small_model().weight_bytes + small_model().kv_cache_bytes));
  EXPECT_FALSE(r.heap_alloc_bytes) << "no heap tracking: no heap ratio";
  EXPECT_DOUBLE_EQ(r.efficiency_flops.value(), 9.0 / 7.0);
  EXPECT_DOUBLE_EQ(r.efficiency_parameters.value(), 3'454'464.0 / 470'528.0 / 7.0);
  EXPECT_EQ(r.verdict, ScalingVerdict::Linear);
  EXPECT_EQ(r.basis, "FLOPs per token");
  EXPECT_TRUE(contains(r.reason, "9× the FLOPs per token of small")) << r.reason;
  EXPECT_TRUE(contains(r.reason, "7.34× the parameters")) << r.reason;
  EXPECT_TRUE(contains(r.reason, "7× the time per token")) << r.reason;
  EXPECT_TRUE(contains(r.reason, "efficiency 1.29")) << r.reason;
  EXPECT_TRUE(contains(r.reason, "linear or better")) << r.reason;
}

TEST(ModelCompare, VerdictThresholds) {
  // 9x the work per token in 12x the time: 0.75; in 20x: 0.45.
  const ModelRatio sub = compare_models(two_models(12)).ratios.at(0);
  EXPECT_EQ(sub.verdict, ScalingVerdict::SubLinear);
  EXPECT_DOUBLE_EQ(sub.efficiency_flops.value(), 0.75);
  EXPECT_TRUE(contains(sub.reason, "sub-linear")) << sub.reason;
  const ModelRatio poor = compare_models(two_models(20)).ratios.at(0);
  EXPECT_EQ(poor.verdict, ScalingVerdict::Poor);
  EXPECT_DOUBLE_EQ(poor.efficiency_flops.value(), 0.45);
  EXPECT_TRUE(contains(poor.reason, "efficiency 0.45 (below 0.6): poor")) << poor.reason;
  // Every part grew 20x per forward pass; the largest of them is named.
  EXPECT_TRUE(contains(poor.reason, "grew most is matmul (20×)")) << poor.reason;
  EXPECT_STREQ(to_string(poor.verdict), "poor");
  EXPECT_STREQ(to_string(sub.verdict), "sub-linear");
}

TEST(ModelCompare, WithoutFlopsTheParametersJudge) {
  Profile p = two_models(7);
  for (CallTreeNode& n : p.call_tree) n.flops = 0.0;
  const ModelComparison c = compare_models(p);
  const ModelRatio& r = c.ratios.at(0);
  EXPECT_FALSE(r.flops_per_token);
  EXPECT_FALSE(r.efficiency_flops);
  EXPECT_EQ(r.basis, "parameters");
  EXPECT_EQ(r.verdict, ScalingVerdict::Linear) << "7.34x the parameters in 7x the time";
  EXPECT_FALSE(c.models[0].flops_per_token);
  EXPECT_TRUE(contains(c.models[0].notes.at(0), "No FLOPs were declared")) << c.models[0].notes.at(0);
  const std::string text = written(c, ReportFormat::Text);
  EXPECT_TRUE(contains(text, "n/a"));
  EXPECT_TRUE(contains(text, "No FLOPs were declared inside model:small"));
}

TEST(ModelCompare, PoolsSeveralScopesOfOneModel) {
  // model:small run twice, under two parents: inferences of 200 ms and 300 ms mean, 10 ms std each.
  Profile p;
  describe(p, small_model());
  TreeBuilder t(p);
  for (const std::uint64_t mean : {200 * kMs, 300 * kMs}) {
    const std::uint32_t phase = t.add(0, mean == 200 * kMs ? "warm" : "cold", 1, 2 * mean, 0);
    const std::uint32_t model = t.add(phase, "model:small", 1, 2 * mean, 0);
    const std::uint32_t inference = t.add(model, "inference", 2, 2 * mean, 0, 0.0, 10.0 * kMs);
    t.add(inference, "generate_token", 5, 2 * mean, 2 * mean);
  }
  const ModelComparison comparison = compare_models(p);
  const ModelRun& s = comparison.models.at(0);
  EXPECT_EQ(s.scope_nodes, 2u);
  EXPECT_EQ(s.inferences, 4u);
  EXPECT_EQ(s.tokens, 10u);
  EXPECT_DOUBLE_EQ(s.inference_mean_ns.value(), 250.0 * kMs);
  // Pooled: M2 = 2 x 10^2 (within) + 100^2 x 2 x 2 / 4 (between) = 10,200 ms^2 over 3.
  EXPECT_NEAR(s.inference_stddev_ns.value(), std::sqrt(10'200.0 / 3.0) * kMs, 1.0);
  EXPECT_DOUBLE_EQ(s.tokens_per_second.value(), 10.0 / 1.0);
}

TEST(ModelCompare, HeapFiguresWhenTracked) {
  Profile p = two_models(7);
  p.heap.tracked = true;
  for (CallTreeNode& n : p.call_tree) {
    const std::string& name = n.name == kNone ? std::string() : p.strings[n.name];
    if (name.starts_with("model:")) n.heap = HeapAttribution{name == "model:small" ? 4 * testing::kMiB : 32 * testing::kMiB, 3, 0, 0, 0, 0, 2 * testing::kMiB};
    if (name == "forward") n.heap = HeapAttribution{testing::kMiB, 10, testing::kMiB, 10, 0, 0, 1024};
  }
  const ModelComparison c = compare_models(p);
  const ModelRun& s = c.models[0];
  EXPECT_TRUE(s.heap_tracked);
  EXPECT_EQ(s.heap_alloc_bytes, 5 * testing::kMiB);
  EXPECT_EQ(s.heap_alloc_count, 13u);
  EXPECT_EQ(s.heap_peak_bound_bytes, 2 * testing::kMiB + 1024);
  EXPECT_DOUBLE_EQ(c.ratios[0].heap_alloc_bytes.value(), 33.0 / 5.0);
  EXPECT_TRUE(contains(written(c, ReportFormat::Text), "5.00 MiB in 13 allocations"));
}

TEST(ModelCompare, HumanFormatsCutHugeNamesAndJsonKeepsThem) {
  // A crafted profile's 1 MB name must not make a report of megabytes per mention.
  ModelComparison c = compare_models(two_models(7));
  const std::string huge(1 << 20, 'm');
  c.models.at(0).info.name = huge;
  c.ratios.at(0).baseline = huge;
  for (const ReportFormat f : {ReportFormat::Text, ReportFormat::Markdown, ReportFormat::Html}) {
    const std::string out = written(c, f);
    EXPECT_LT(out.size(), 64u * 1024) << to_string(f);
    EXPECT_TRUE(contains(out, "more bytes")) << to_string(f);
  }
  const nlohmann::json j = nlohmann::json::parse(written(c, ReportFormat::Json));
  EXPECT_EQ(j.dump().find(huge) != std::string::npos, true);
}

TEST(ModelCompare, OneModelIsReportedWithoutRatios) {
  Profile p;
  describe(p, small_model());
  TreeBuilder t(p);
  add_model_run(t, 0, "small", 1, 1.0, 2);
  const ModelComparison c = compare_models(p);
  EXPECT_EQ(c.models.size(), 1u);
  EXPECT_TRUE(c.ratios.empty());
  ASSERT_FALSE(c.notes.empty());
  EXPECT_TRUE(contains(c.notes[0], "ratios and scaling efficiency need two")) << c.notes[0];
  const std::string text = written(c, ReportFormat::Text);
  EXPECT_TRUE(contains(text, "470,528"));
  EXPECT_TRUE(contains(text, "need two"));
  EXPECT_FALSE(contains(text, "Scaling Efficiency"));
  const report::Document d = report::model_comparison_document(c);
  EXPECT_EQ(find_section(d, "scaling"), nullptr) << "no ratios: no scaling section";
  const report::Section* spec = find_section(d, "specifications");
  ASSERT_NE(spec, nullptr);
  EXPECT_EQ(row(*blocks<report::Table>(*spec).at(0), "small")[4].text, "470,528");
  const report::Section* notes = find_section(d, "notes");
  ASSERT_NE(notes, nullptr);
  bool said = false;
  for (const analysis::Sentence& note : blocks<report::Bullets>(*notes).at(0)->items) said |= contains(plain(note), "need two");
  EXPECT_TRUE(said) << "the comparison's notes are listed";
}

TEST(ModelCompare, AModelThatNeverRanSaysSo) {
  Profile p = two_models(7);
  ModelInfo large = medium_model();
  large.name = "large";
  large.parameters = 10'000'000;
  describe(p, large);
  const ModelComparison c = compare_models(p);
  ASSERT_EQ(c.models.size(), 3u);
  const ModelRun& l = c.models[2];
  EXPECT_EQ(l.info.name, "large");
  EXPECT_EQ(l.scope_nodes, 0u);
  EXPECT_FALSE(l.tokens_per_second);
  EXPECT_TRUE(contains(l.notes.at(0), "No scope 'model:large' was recorded")) << l.notes[0];
  EXPECT_EQ(c.ratios.at(1).verdict, ScalingVerdict::Unknown);
  EXPECT_TRUE(contains(c.ratios[1].reason, "Not judged")) << c.ratios[1].reason;
  const nlohmann::json j = nlohmann::json::parse(written(c, ReportFormat::Json));
  EXPECT_FALSE(j["models"][2]["recorded"].get<bool>());
  EXPECT_TRUE(j["models"][2]["tokens_per_second"].is_null());
  EXPECT_TRUE(j["ratios"][1]["time_per_token"].is_null());
  EXPECT_EQ(j["ratios"][1]["verdict"], "unknown");
}

TEST(ModelCompare, AProfileWithoutDescriptionsIsAnError) {
  try {
    (void)compare_models(testing::export_profile());
    FAIL();
  } catch (const Error& e) {
    EXPECT_TRUE(contains(e.what(), "no model descriptions")) << e.what();
    EXPECT_TRUE(contains(e.what(), "nnprof::describe_model")) << e.what();
  }
}

// ---- writers ------------------------------------------------------------------------

TEST(ModelCompareReport, MarkdownHasTheSeedsTables) {
  const std::string md = written(compare_models(two_models(7)), ReportFormat::Markdown);
  for (const char* heading : {"## Model Specifications", "## Performance Metrics", "## Scaling Efficiency",
                              "## Forward Pass Analysis"})
    EXPECT_TRUE(contains(md, heading)) << heading;
  EXPECT_TRUE(contains(md, "| small  |        128 |      2 |     4 |    470,528 |      64 |")) << md;
  EXPECT_TRUE(contains(md, "| medium |        256 |      4 |     8 |  3,454,464 |     128 |")) << md;
  EXPECT_TRUE(contains(md, "Ratio (medium/small)"));
  EXPECT_TRUE(contains(md, "| Tokens per second"));
  EXPECT_TRUE(contains(md, "50 tokens/s"));
  EXPECT_TRUE(contains(md, "7.14 tokens/s"));
  EXPECT_TRUE(contains(md, "### medium vs small: 1.29 by FLOPs per token"));
  EXPECT_TRUE(contains(md, "✅ Linear or better. "));
  EXPECT_TRUE(md.starts_with("# nnprof model comparison\n")) << md;
  EXPECT_TRUE(contains(md, "| Models  | **small**, **medium** (ratios to **small**, the smallest by parameters) |")) << md;
}

TEST(ModelCompareDocument, SectionsTablesAndVerdicts) {
  const ModelComparison c = compare_models(two_models(7));
  const report::Document d = report::model_comparison_document(c);
  EXPECT_EQ(d.title, "nnprof model comparison");
  std::vector<std::string> ids;
  for (const report::Section& s : d.sections) ids.push_back(s.id);
  EXPECT_EQ(ids, (std::vector<std::string>{"specifications", "performance", "scaling", "forward", "notes"}));
  ASSERT_EQ(d.about.items.size(), 1u);
  EXPECT_EQ(plain(d.about.items[0].value), "small, medium (ratios to small, the smallest by parameters)");

  const report::Table& spec = *blocks<report::Table>(*find_section(d, "specifications")).at(0);
  EXPECT_EQ(headers(spec), (std::vector<std::string>{"Model", "Dimensions", "Layers", "Heads", "Parameters", "Context",
                                                      "Vocabulary", "Weights", "KV cache"}));
  const auto& small = row(spec, "small");
  EXPECT_EQ(small[1].text, "128");
  EXPECT_EQ(small[2].text, "2");
  EXPECT_EQ(small[3].text, "4");
  EXPECT_EQ(small[4].text, "470,528");
  EXPECT_EQ(small[4].value, 470'528.0);
  EXPECT_EQ(small[5].text, "64");
  EXPECT_EQ(small[6].text, "256");
  EXPECT_EQ(small[7].value, 4.0 * 470'528);
  EXPECT_EQ(small[8].value, 2.0 * 2 * 64 * 128 * 4);
  EXPECT_EQ(row(spec, "medium")[4].text, "3,454,464");

  const report::Table& perf = *blocks<report::Table>(*find_section(d, "performance")).at(0);
  EXPECT_EQ(headers(perf), (std::vector<std::string>{"Metric", "small", "medium", "Ratio (medium/small)"}));
  const auto& tps = row(perf, "Tokens per second");
  EXPECT_EQ(tps[1].text, "50 tokens/s");
  EXPECT_DOUBLE_EQ(tps[1].value, 50.0);
  EXPECT_EQ(tps[2].text, "7.14 tokens/s");
  EXPECT_NEAR(tps[3].value, 1.0 / 7.0, 1e-12);
  EXPECT_EQ(row(perf, "Inferences")[1].text, "2");
  EXPECT_EQ(row(perf, "Tokens generated")[2].text, "20");
  EXPECT_EQ(row(perf, "Total inference time")[1].value, 400.0 * kMs);
  EXPECT_NEAR(row(perf, "Total inference time")[3].value, 7.0, 1e-12);
  EXPECT_EQ(row(perf, "Mean inference time")[1].value, 200.0 * kMs);
  EXPECT_TRUE(contains(row(perf, "Mean inference time")[1].text, " ± "));
  EXPECT_NEAR(row(perf, "Time per token")[3].value, 7.0, 1e-12);
  EXPECT_NEAR(row(perf, "FLOPs per token")[3].value, 9.0, 1e-12);
  EXPECT_DOUBLE_EQ(row(perf, "Weights + KV cache")[1].value,
                   static_cast<double>(small_model().weight_bytes + small_model().kv_cache_bytes));
  EXPECT_THROW((void)row(perf, "Heap allocated"), std::runtime_error) << "no heap tracking: no heap rows";

  const report::Section& scaling = *find_section(d, "scaling");
  EXPECT_TRUE(contains(plain(blocks<report::Paragraph>(scaling).at(0)->text),
                       "At least 0.9 is linear or better, 0.6 to 0.9 sub-linear, below 0.6 poor."));
  const report::Table& eff = *blocks<report::Table>(scaling).at(0);
  const auto& medium = row(eff, "medium");
  EXPECT_EQ(medium[1].text, "small");
  EXPECT_NEAR(medium[3].value, 9.0, 1e-12);
  EXPECT_NEAR(medium[4].value, 7.0, 1e-12);
  EXPECT_NEAR(medium[5].value, 9.0 / 7.0, 1e-12);
  EXPECT_EQ(medium[5].text, "1.29");
  EXPECT_EQ(medium[7].text, "Linear or better (by FLOPs per token)");
  ASSERT_EQ(blocks<report::Subheading>(scaling).size(), 1u);
  EXPECT_EQ(blocks<report::Subheading>(scaling)[0]->title, "medium vs small: 1.29 by FLOPs per token");
  const std::string verdict = plain(blocks<report::Paragraph>(scaling).at(1)->text);
  EXPECT_TRUE(verdict.starts_with("✅ Linear or better. ")) << verdict;
  EXPECT_TRUE(contains(verdict, c.ratios[0].reason)) << verdict;

  const report::Section& forward = *find_section(d, "forward");
  const auto tables = blocks<report::Table>(forward);
  ASSERT_EQ(tables.size(), 2u);
  EXPECT_EQ(tables[0]->rows.at(0)[0].text, "block");
  EXPECT_EQ(tables[1]->rows.at(0)[0].text, "matmul");
  // small: 240 ms of block over 20 passes; medium (7x the time) per pass against it: 7x.
  EXPECT_DOUBLE_EQ(row(*tables[0], "block")[1].value, 12.0 * kMs);
  EXPECT_NEAR(row(*tables[0], "block").back().value, 7.0, 1e-12);

  // Every note of the comparison, in its words.
  const auto notes = blocks<report::Bullets>(*find_section(d, "notes"));
  ASSERT_EQ(notes.size(), 1u);
  ASSERT_EQ(notes[0]->items.size(), c.notes.size());
  for (std::size_t i = 0; i < c.notes.size(); ++i) EXPECT_EQ(plain(notes[0]->items[i]), c.notes[i]);
}

TEST(ModelCompareReport, JsonHasEveryFigure) {
  const std::string text = written(compare_models(two_models(7)), ReportFormat::Json);
  const nlohmann::json j = nlohmann::json::parse(text);
  EXPECT_EQ(j["schema"], "nnprof-model-comparison");
  EXPECT_EQ(j["schema_version"], 1);
  EXPECT_EQ(j["baseline"], "small");
  EXPECT_DOUBLE_EQ(j["thresholds"]["linear"].get<double>(), kLinearScaling);
  ASSERT_EQ(j["models"].size(), 2u);
  const auto& s = j["models"][0];
  EXPECT_EQ(s["name"], "small");
  EXPECT_EQ(s["parameters"].get<std::uint64_t>(), 470'528u);
  EXPECT_EQ(j["models"][1]["parameters"].get<std::uint64_t>(), 3'454'464u);
  EXPECT_EQ(s["inference_ns"].get<std::uint64_t>(), 400 * kMs);
  EXPECT_EQ(s["tokens"], 20);
  EXPECT_EQ(s["time_basis"], "inference");
  EXPECT_DOUBLE_EQ(s["tokens_per_second"].get<double>(), 50.0);
  EXPECT_DOUBLE_EQ(s["inference_std_ns"].get<double>(), 10.0 * kMs);
  EXPECT_TRUE(s["heap"].is_null());
  EXPECT_EQ(s["forward"]["components"][0]["name"], "block");
  EXPECT_EQ(s["forward"]["operations"][0]["name"], "matmul");
  const auto& r = j["ratios"][0];
  EXPECT_EQ(r["model"], "medium");
  EXPECT_DOUBLE_EQ(r["efficiency_flops"].get<double>(), 9.0 / 7.0);
  EXPECT_EQ(r["verdict"], "linear");
  EXPECT_EQ(r["basis"], "FLOPs per token");
  EXPECT_TRUE(r["heap_alloc_bytes"].is_null());
}

TEST(ModelCompareReport, HtmlIsAPageOfTheSameDocument) {
  ModelComparison c = compare_models(two_models(7));
  c.models.at(1).info.name = "<script>alert(1)</script>";
  c.ratios.at(0).model = c.models[1].info.name;
  const std::string html = written(c, ReportFormat::Html);
  EXPECT_EQ(html.rfind("<!DOCTYPE html>", 0), 0u);
  EXPECT_TRUE(contains(html, "<section id=\"specifications\"><h2>Model Specifications</h2>"));
  EXPECT_TRUE(contains(html, "<section id=\"scaling\"><h2>Scaling Efficiency</h2>"));
  EXPECT_TRUE(contains(html, "<section id=\"forward\"><h2>Forward Pass Analysis</h2>"));
  EXPECT_TRUE(contains(html, "data-v=\"470528\">470,528</td>")) << "numbers carry their raw value";
  EXPECT_TRUE(contains(html, "50 tokens/s"));
  EXPECT_TRUE(contains(html, "&lt;script&gt;alert(1)&lt;/script&gt;"));
  EXPECT_FALSE(contains(html, "<script>alert"));
  EXPECT_TRUE(contains(html, "</html>"));
}

TEST(ModelCompareReport, OtherFormatsAreRefused) {
  const ModelComparison c = compare_models(two_models(7));
  std::ostringstream out;
  EXPECT_THROW(write_model_comparison(c, out, ReportFormat::Csv), Error);
  EXPECT_THROW(export_model_comparison(c, "/tmp/x.unknown"), Error);
  EXPECT_THROW(export_model_comparison(c, "/tmp/x.csv", ReportFormat::Csv), Error);
}

// ---- recorded -----------------------------------------------------------------------

// The convention with a real Profiler: counts and FLOPs are exact, whatever the timings.
TEST(ModelCompare, RecordedRunFollowsTheConvention) {
  Profiler profiler;
  describe_model(profiler, small_model());
  describe_model(profiler, medium_model());
  for (const ModelInfo& m : {small_model(), medium_model()}) {
    ProfileGuard model(profiler, model_scope_name(m.name));
    for (int i = 0; i < 3; ++i) {
      NNPROF_SCOPE_IN(profiler, "inference");
      for (int token = 0; token < 4; ++token) {
        NNPROF_SCOPE_IN(profiler, "generate_token");
        NNPROF_SCOPE_IN(profiler, "forward");
        for (std::uint32_t layer = 0; layer < m.layers; ++layer) {
          NNPROF_SCOPE_IN(profiler, "block");
          NNPROF_SCOPE_FLOPS_IN(profiler, "matmul", 2.0 * static_cast<double>(m.parameters), 4 * m.parameters);
          const auto until = std::chrono::steady_clock::now() + std::chrono::microseconds(20);
          while (std::chrono::steady_clock::now() < until) {
          }
        }
      }
    }
  }
  const ModelComparison c = compare_models(profiler.snapshot());
  ASSERT_EQ(c.models.size(), 2u);
  for (const ModelRun& m : c.models) {
    EXPECT_EQ(m.scope_nodes, 1u) << m.info.name;
    EXPECT_EQ(m.inferences, 3u) << m.info.name;
    EXPECT_EQ(m.tokens, 12u) << m.info.name;
    EXPECT_EQ(m.forward_calls, 12u) << m.info.name;
    EXPECT_DOUBLE_EQ(m.flops, 12.0 * m.info.layers * 2.0 * static_cast<double>(m.info.parameters)) << m.info.name;
    EXPECT_DOUBLE_EQ(m.flops_per_token.value(), m.info.layers * 2.0 * static_cast<double>(m.info.parameters));
    EXPECT_TRUE(m.tokens_per_second.has_value());
  }
  EXPECT_DOUBLE_EQ(c.ratios.at(0).flops_per_token.value(), 2.0 * 3'454'464.0 / 470'528.0);
  EXPECT_NE(c.ratios[0].verdict, ScalingVerdict::Unknown);
}

// ---- the CLI ------------------------------------------------------------------------

#ifdef NNPROF_CLI_PATH

class ModelCompareCli : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("nnprof_model_compare_cli_" + std::to_string(::getpid()));
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }
  std::string path(const std::string& name) const { return (dir_ / name).string(); }
  static std::string slurp(const std::string& p) {
    std::ifstream in(p, std::ios::binary);
    return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
  }
  fs::path dir_;
};

TEST_F(ModelCompareCli, WritesMarkdownJsonAndText) {
  two_models(7).save(path("run.nnprof"));
  const CliRun md = run_cli("model-compare " + path("run.nnprof") + " -o " + path("models.md"));
  ASSERT_EQ(md.status, 0) << md.output;
  const std::string doc = slurp(path("models.md"));
  EXPECT_TRUE(doc.starts_with("# nnprof model comparison"));
  EXPECT_TRUE(contains(doc, "470,528"));
  EXPECT_TRUE(contains(doc, "3,454,464"));
  EXPECT_TRUE(contains(doc, "## Scaling Efficiency"));

  const CliRun js = run_cli("model-compare " + path("run.nnprof") + " -o " + path("models.json"));
  ASSERT_EQ(js.status, 0) << js.output;
  const nlohmann::json j = nlohmann::json::parse(slurp(path("models.json")));
  EXPECT_EQ(j["models"][1]["parameters"].get<std::uint64_t>(), 3'454'464u);
  EXPECT_EQ(j["ratios"][0]["verdict"], "linear");

  const CliRun stdout_json = run_cli("model-compare " + path("run.nnprof") + " --format json");
  ASSERT_EQ(stdout_json.status, 0) << stdout_json.output;
  EXPECT_TRUE(nlohmann::json::accept(stdout_json.output)) << stdout_json.output;

  const CliRun text = run_cli("model-compare " + path("run.nnprof"));
  ASSERT_EQ(text.status, 0) << text.output;
  EXPECT_TRUE(text.output.starts_with("nnprof model comparison")) << text.output;
  EXPECT_TRUE(contains(text.output, "medium vs small: 1.29 by FLOPs per token")) << text.output;
  EXPECT_TRUE(contains(text.output, "Linear or better. ")) << text.output;
  EXPECT_TRUE(contains(text.output, "470,528")) << text.output;

  const CliRun txt = run_cli("model-compare " + path("run.nnprof") + " -o " + path("models.txt"));
  ASSERT_EQ(txt.status, 0) << txt.output;
  EXPECT_EQ(slurp(path("models.txt")), text.output) << "a .txt file holds what standard output shows";

  // The seed's form: the output file second.
  const CliRun positional = run_cli("model-compare " + path("run.nnprof") + " " + path("positional.md"));
  ASSERT_EQ(positional.status, 0) << positional.output;
  EXPECT_EQ(slurp(path("positional.md")), doc);
}

TEST_F(ModelCompareCli, WritesHtml) {
  two_models(7).save(path("run.nnprof"));
  const CliRun html = run_cli("model-compare " + path("run.nnprof") + " -o " + path("models.html"));
  ASSERT_EQ(html.status, 0) << html.output;
  EXPECT_TRUE(contains(html.output, "wrote")) << html.output;
  const std::string page = slurp(path("models.html"));
  EXPECT_EQ(page.rfind("<!DOCTYPE html>", 0), 0u);
  for (const char* expected : {"Model Specifications", "Performance Metrics", "Scaling Efficiency",
                               "Forward Pass Analysis", "470,528", "3,454,464", "50 tokens/s",
                               "medium vs small: 1.29 by FLOPs per token", "</html>"})
    EXPECT_TRUE(contains(page, expected)) << expected;
  const CliRun stdout_html = run_cli("model-compare " + path("run.nnprof") + " --format html");
  ASSERT_EQ(stdout_html.status, 0) << stdout_html.output;
  EXPECT_EQ(stdout_html.output.rfind("<!DOCTYPE html>", 0), 0u);
}

TEST_F(ModelCompareCli, AProfileWithoutModelsExitsWith2) {
  testing::export_profile().save(path("plain.nnprof"));
  const CliRun r = run_cli("model-compare " + path("plain.nnprof"));
  EXPECT_EQ(r.status, 2) << r.output;
  EXPECT_TRUE(contains(r.output, path("plain.nnprof") +
                                     " has no model descriptions: record models with nnprof::describe_model "
                                     "(nnprof demo does)"))
      << r.output;
}

TEST_F(ModelCompareCli, BadOutputsExitWith2) {
  two_models(7).save(path("run.nnprof"));
  const CliRun csv = run_cli("model-compare " + path("run.nnprof") + " -o " + path("models.csv"));
  EXPECT_EQ(csv.status, 2) << csv.output;
  EXPECT_TRUE(contains(csv.output, "a model comparison is written as text, markdown, json or html, not csv")) << csv.output;
  EXPECT_TRUE(contains(csv.output, "use a .txt, .md, .markdown, .json, .html or .htm file name")) << csv.output;
  EXPECT_FALSE(fs::exists(path("models.csv")));
  const CliRun unknown = run_cli("model-compare " + path("run.nnprof") + " -o " + path("models.unknown"));
  EXPECT_EQ(unknown.status, 2) << unknown.output;
  EXPECT_TRUE(contains(unknown.output, "cannot tell the model comparison's format")) << unknown.output;
  EXPECT_TRUE(contains(unknown.output, ".html")) << "HTML is a model comparison's format too: " << unknown.output;
  EXPECT_FALSE(fs::exists(path("models.unknown")));
  const CliRun format = run_cli("model-compare " + path("run.nnprof") + " --format csv");
  EXPECT_EQ(format.status, 2) << format.output;
  EXPECT_TRUE(contains(format.output, "--format")) << format.output;
  const CliRun missing = run_cli("model-compare " + path("missing.nnprof"));
  EXPECT_EQ(missing.status, 2) << missing.output;
  EXPECT_TRUE(contains(missing.output, "no such file")) << missing.output;
}

#endif

}  // namespace
}  // namespace nnprof
