#include "analysis/model_compare.hpp"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include <fmt/format.h>

#include "nnprof/error.hpp"
#include "nnprof/model_info.hpp"

namespace nnprof::analysis {

namespace {

// The scope names of the convention in nnprof/model_info.hpp.
constexpr std::string_view kInference = "inference";
constexpr std::string_view kToken = "generate_token";
constexpr std::string_view kForward = "forward";

// The operation that grew most is named only when it holds at least this share of the larger
// model's forward time: a tiny part that grew a lot explains nothing.
constexpr double kGrowthShare = 0.05;

// Walks of the merged call tree. A child is followed only when its id is above its parent's
// (always so in a built or loaded profile), so a malformed hand-made tree cannot loop.
class Tree {
 public:
  explicit Tree(const Profile& profile) : p_(profile) {}

  [[nodiscard]] const CallTreeNode& node(std::uint32_t id) const { return p_.call_tree[id]; }

  [[nodiscard]] bool named(std::uint32_t id, std::string_view name) const {
    const StringId s = p_.call_tree[id].name;
    return s < p_.strings.size() && p_.strings[s] == name;
  }

  [[nodiscard]] std::string name_of(std::uint32_t id) const {
    const StringId s = p_.call_tree[id].name;
    return s < p_.strings.size() ? p_.strings[s] : std::string("[unknown]");
  }

  template <class F>
  void for_children(std::uint32_t id, F&& f) const {
    for (const std::uint32_t c : p_.call_tree[id].children)
      if (c > id && c < p_.call_tree.size()) f(c);
  }

  /// The outermost nodes named `name` strictly below `roots` (a match's own subtree is not searched).
  [[nodiscard]] std::vector<std::uint32_t> find(const std::vector<std::uint32_t>& roots, std::string_view name) const {
    std::vector<std::uint32_t> found, stack;
    for (const std::uint32_t r : roots) for_children(r, [&](std::uint32_t c) { stack.push_back(c); });
    while (!stack.empty()) {
      const std::uint32_t id = stack.back();
      stack.pop_back();
      if (named(id, name))
        found.push_back(id);
      else
        for_children(id, [&](std::uint32_t c) { stack.push_back(c); });
    }
    std::sort(found.begin(), found.end());
    return found;
  }

  /// Every node of the subtrees of `roots`, roots included.
  [[nodiscard]] std::vector<std::uint32_t> subtree(const std::vector<std::uint32_t>& roots) const {
    std::vector<std::uint32_t> all, stack(roots.begin(), roots.end());
    while (!stack.empty()) {
      const std::uint32_t id = stack.back();
      stack.pop_back();
      all.push_back(id);
      for_children(id, [&](std::uint32_t c) { stack.push_back(c); });
    }
    return all;
  }

  [[nodiscard]] double flops(const std::vector<std::uint32_t>& roots) const {
    double sum = 0.0;
    for (const std::uint32_t id : subtree(roots)) sum += p_.call_tree[id].flops;
    return sum;
  }

 private:
  const Profile& p_;
};

// Count, total, mean and sample standard deviation of the calls of several nodes together:
// the exact pooled figures (Chan et al.), not an average of averages.
struct Pooled {
  std::uint64_t count = 0;
  std::uint64_t sum_ns = 0;
  double mean = 0.0;
  double m2 = 0.0;
};

Pooled pool(const Tree& tree, const std::vector<std::uint32_t>& nodes) {
  Pooled p;
  for (const std::uint32_t id : nodes) {
    const DurationStats& t = tree.node(id).time;
    if (t.count == 0) continue;
    const double n_a = static_cast<double>(p.count), n_b = static_cast<double>(t.count);
    const double n = n_a + n_b;
    const double delta = t.mean_ns - p.mean;
    const double m2_b = t.count > 1 ? t.stddev_ns * t.stddev_ns * (n_b - 1.0) : 0.0;
    p.m2 += m2_b + delta * delta * n_a * n_b / n;
    p.mean += delta * n_b / n;
    p.count += t.count;
    p.sum_ns += t.sum_ns;
  }
  return p;
}

std::string x(double v) { return fmt::format("{:.3g}×", v); }

// Forward parts by name: time and FLOPs, shares of the forward passes' totals, longest first.
std::vector<ForwardPart> finish_parts(std::map<std::string, ForwardPart>& by_name, std::uint64_t total_ns,
                                      double total_flops) {
  std::vector<ForwardPart> parts;
  for (auto& [name, part] : by_name) {
    part.name = name;
    part.time_share = total_ns == 0 ? 0.0 : static_cast<double>(part.time_ns) / static_cast<double>(total_ns);
    if (total_flops > 0.0) part.flops_share = part.flops / total_flops;
    parts.push_back(std::move(part));
  }
  std::stable_sort(parts.begin(), parts.end(),
                   [](const ForwardPart& a, const ForwardPart& b) { return a.time_ns > b.time_ns; });
  return parts;
}

void measure_forward(const Tree& tree, const std::vector<std::uint32_t>& forwards, ModelRun& r) {
  const Pooled f = pool(tree, forwards);
  r.forward_calls = f.count;
  r.forward_ns = f.sum_ns;
  r.forward_flops = tree.flops(forwards);
  std::map<std::string, ForwardPart> components, operations;
  for (const std::uint32_t id : forwards) {
    tree.for_children(id, [&](std::uint32_t c) {
      ForwardPart& part = components[tree.name_of(c)];
      part.calls += tree.node(c).time.count;
      part.time_ns += tree.node(c).time.sum_ns;
      part.flops += tree.flops({c});
    });
  }
  for (const std::uint32_t id : tree.subtree(forwards)) {
    ForwardPart& part = operations[tree.name_of(id)];
    part.calls += tree.node(id).time.count;
    part.time_ns += tree.node(id).self_ns;
    part.flops += tree.node(id).flops;
  }
  r.components = finish_parts(components, r.forward_ns, r.forward_flops);
  r.operations = finish_parts(operations, r.forward_ns, r.forward_flops);
}

ModelRun measure(const Tree& tree, const Profile& profile, const ModelInfo& info) {
  ModelRun r;
  r.info = info;
  const std::string scope = model_scope_name(info.name);
  const std::vector<std::uint32_t> models = tree.find({0}, scope);
  r.scope_nodes = static_cast<std::uint32_t>(models.size());
  if (models.empty()) {
    r.notes.push_back(fmt::format("No scope '{}' was recorded, so nothing was measured for {}: run the model inside "
                                  "a scope named nnprof::model_scope_name(\"{}\").",
                                  scope, info.name, info.name));
    return r;
  }
  r.scope_ns = pool(tree, models).sum_ns;

  const std::vector<std::uint32_t> inferences = tree.find(models, kInference);
  const Pooled inf = pool(tree, inferences);
  r.inferences = inf.count;
  r.inference_ns = inf.sum_ns;
  if (inf.count > 0) r.inference_mean_ns = inf.mean;
  if (inf.count > 1) r.inference_stddev_ns = std::sqrt(std::max(0.0, inf.m2 / static_cast<double>(inf.count - 1)));
  for (const std::uint32_t id : tree.find(models, kToken)) r.tokens += tree.node(id).time.count;

  r.timed_inferences = inf.count > 0;
  const std::vector<std::uint32_t>& timed = r.timed_inferences ? inferences : models;
  r.timed_ns = r.timed_inferences ? r.inference_ns : r.scope_ns;
  if (!r.timed_inferences)
    r.notes.push_back(fmt::format("No '{}' scope inside {}: times and rates are over {} itself.", kInference, scope,
                                  scope));
  if (r.tokens == 0)
    r.notes.push_back(fmt::format("No '{}' scope inside {}: tokens and every rate per token are unknown.", kToken,
                                  scope));
  if (r.tokens > 0 && r.timed_ns > 0) {
    r.tokens_per_second = static_cast<double>(r.tokens) * 1e9 / static_cast<double>(r.timed_ns);
    r.ns_per_token = static_cast<double>(r.timed_ns) / static_cast<double>(r.tokens);
  }
  for (const std::uint32_t id : tree.subtree(timed)) {
    r.flops += tree.node(id).flops;
    r.bytes += tree.node(id).bytes;
  }
  if (r.flops > 0.0) {
    if (r.tokens > 0) r.flops_per_token = r.flops / static_cast<double>(r.tokens);
    if (r.timed_ns > 0) r.flops_per_second = r.flops * 1e9 / static_cast<double>(r.timed_ns);
  } else {
    r.notes.push_back(fmt::format("No FLOPs were declared inside {} (NNPROF_SCOPE_FLOPS, add_flops): FLOPs per "
                                  "token, FLOP/s and the FLOP-based scaling efficiency are unknown.",
                                  scope));
  }

  r.heap_tracked = profile.heap.tracked;
  if (r.heap_tracked) {
    for (const std::uint32_t id : tree.subtree(models)) {
      const HeapAttribution& h = tree.node(id).heap;
      r.heap_alloc_bytes += h.alloc_bytes;
      r.heap_alloc_count += h.alloc_count;
      r.heap_retained_bytes += h.retained_bytes;
      r.heap_peak_bound_bytes += h.peak_live_bytes;
    }
  }

  const std::vector<std::uint32_t> forwards = tree.find(models, kForward);
  if (forwards.empty())
    r.notes.push_back(fmt::format("No '{}' scope inside {}: no forward-pass breakdown.", kForward, scope));
  else
    measure_forward(tree, forwards, r);
  return r;
}

std::optional<double> ratio(std::optional<double> model, std::optional<double> baseline) {
  if (!model || !baseline || !(*baseline > 0.0)) return std::nullopt;
  return *model / *baseline;
}

std::optional<double> positive(double v) { return v > 0.0 ? std::optional<double>(v) : std::nullopt; }

// The operation whose time per forward pass grew most from `b` to `m`, among those with a
// real share of m's forward time: "; the part that grew most per forward pass is softmax (12.3×)".
std::string largest_growth(const ModelRun& m, const ModelRun& b) {
  if (m.forward_calls == 0 || b.forward_calls == 0) return "";
  const std::string* name = nullptr;
  double most = 0.0;
  for (const ForwardPart& part : m.operations) {
    if (part.time_share < kGrowthShare) continue;
    const auto base = std::find_if(b.operations.begin(), b.operations.end(),
                                   [&](const ForwardPart& o) { return o.name == part.name; });
    if (base == b.operations.end() || base->time_ns == 0) continue;
    const double g = (static_cast<double>(part.time_ns) / static_cast<double>(m.forward_calls)) /
                     (static_cast<double>(base->time_ns) / static_cast<double>(b.forward_calls));
    if (g > most) {
      most = g;
      name = &part.name;
    }
  }
  if (name == nullptr) return "";
  return fmt::format("; the part whose own time per forward pass grew most is {} ({})", *name, x(most));
}

ScalingVerdict judge(double efficiency) {
  if (efficiency >= kLinearScaling) return ScalingVerdict::Linear;
  if (efficiency >= kSubLinearScaling) return ScalingVerdict::SubLinear;
  return ScalingVerdict::Poor;
}

std::string verdict_words(ScalingVerdict v, double efficiency) {
  switch (v) {
    case ScalingVerdict::Linear:
      return fmt::format("efficiency {:.3g} (at least {}): linear or better, the larger model uses the machine at "
                         "least as well",
                         efficiency, kLinearScaling);
    case ScalingVerdict::SubLinear:
      return fmt::format("efficiency {:.3g} ({} to {}): sub-linear, each unit of work costs the larger model more",
                         efficiency, kSubLinearScaling, kLinearScaling);
    case ScalingVerdict::Poor:
      return fmt::format("efficiency {:.3g} (below {}): poor, time grows much faster than work; look at the forward "
                         "breakdown",
                         efficiency, kSubLinearScaling);
    case ScalingVerdict::Unknown: break;
  }
  return "";
}

ModelRatio against(const ModelRun& m, const ModelRun& b) {
  ModelRatio r;
  r.model = m.info.name;
  r.baseline = b.info.name;
  r.parameters = ratio(positive(static_cast<double>(m.info.parameters)), positive(static_cast<double>(b.info.parameters)));
  r.total_time = ratio(positive(static_cast<double>(m.timed_ns)), positive(static_cast<double>(b.timed_ns)));
  r.flops_per_token = ratio(m.flops_per_token, b.flops_per_token);
  r.time_per_token = ratio(m.ns_per_token, b.ns_per_token);
  r.tokens_per_second = ratio(m.tokens_per_second, b.tokens_per_second);
  r.model_bytes = ratio(static_cast<double>(m.model_bytes()), static_cast<double>(b.model_bytes()));
  if (m.heap_tracked && b.heap_tracked)
    r.heap_alloc_bytes = ratio(static_cast<double>(m.heap_alloc_bytes), static_cast<double>(b.heap_alloc_bytes));
  if (r.time_per_token && *r.time_per_token > 0.0) {
    if (r.flops_per_token) r.efficiency_flops = *r.flops_per_token / *r.time_per_token;
    if (r.parameters) r.efficiency_parameters = *r.parameters / *r.time_per_token;
  }
  const std::string params = r.parameters ? fmt::format("{} the parameters", x(*r.parameters)) : "";
  if (r.efficiency_flops) {
    r.verdict = judge(*r.efficiency_flops);
    r.basis = "FLOPs per token";
    r.reason = fmt::format("{} does {} the FLOPs per token of {}{} in {} the time per token: {}", m.info.name,
                           x(*r.flops_per_token), b.info.name, params.empty() ? "" : " (" + params + ")",
                           x(*r.time_per_token), verdict_words(r.verdict, *r.efficiency_flops));
  } else if (r.efficiency_parameters) {
    r.verdict = judge(*r.efficiency_parameters);
    r.basis = "parameters";
    r.reason = fmt::format("{} has {} of {} and takes {} the time per token (no FLOPs declared, so judged by "
                           "parameters): {}",
                           m.info.name, params, b.info.name, x(*r.time_per_token),
                           verdict_words(r.verdict, *r.efficiency_parameters));
  } else {
    std::string missing;
    if (!r.time_per_token)
      missing = fmt::format("the time per token of {} or {} is unknown (no '{}' calls, or no time recorded)",
                            m.info.name, b.info.name, kToken);
    else
      missing = fmt::format("neither FLOPs per token nor parameter counts are known for both {} and {}",
                            m.info.name, b.info.name);
    r.reason = "Not judged: " + missing + ".";
    return r;
  }
  if (r.verdict != ScalingVerdict::Linear) r.reason += largest_growth(m, b);
  r.reason += ".";
  return r;
}

}  // namespace

ModelComparison compare_models(const Profile& profile) {
  std::vector<ModelInfo> infos = described_models(profile);
  if (infos.empty())
    throw Error("the profile has no model descriptions: record models with nnprof::describe_model (nnprof demo does)");
  std::stable_sort(infos.begin(), infos.end(),
                   [](const ModelInfo& a, const ModelInfo& b) { return a.parameters < b.parameters; });
  ModelComparison c;
  const Tree tree(profile);
  for (const ModelInfo& info : infos) c.models.push_back(measure(tree, profile, info));
  for (std::size_t i = 1; i < c.models.size(); ++i) c.ratios.push_back(against(c.models[i], c.models[0]));
  if (c.models.size() == 1)
    c.notes.push_back(fmt::format("Only one model is described ({}): ratios and scaling efficiency need two; describe "
                                  "another with nnprof::describe_model.",
                                  c.models[0].info.name));
  else
    c.notes.push_back(fmt::format("Ratios are of each model to {}, the smallest by parameters.", c.models[0].info.name));
  if (!profile.heap.tracked)
    c.notes.push_back("Heap tracking did not run (nnprof::MemoryTracking, nnprof record --memory): heap figures are "
                      "unknown; memory is the weights and KV cache the descriptions state.");
  return c;
}

}  // namespace nnprof::analysis
