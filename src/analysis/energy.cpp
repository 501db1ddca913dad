#include "analysis/energy.hpp"

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <numeric>
#include <unordered_map>
#include <unordered_set>

namespace nnprof::analysis {
namespace {

constexpr double kSecondsPerNs = 1e-9;

// One domain's power track as a running integral: cumulative[i] is the energy (J) from the
// first sample to sample i, so the energy of any [a, b] is two look-ups and two products.
class EnergyTimeline {
 public:
  EnergyTimeline(const std::vector<std::uint64_t>& times, const std::vector<double>& watts, bool measured)
      : times_(times), watts_(watts), measured_(measured), cumulative_(times.size(), 0.0) {
    for (std::size_t i = 1; i < times_.size(); ++i) cumulative_[i] = cumulative_[i - 1] + interval_joules(i);
  }

  // The energy of the interval (t[i-1], t[i]]; 0 where the track was not read (NaN).
  [[nodiscard]] double interval_joules(std::size_t i) const {
    const double w = power(i);
    return w * static_cast<double>(times_[i] - times_[i - 1]) * kSecondsPerNs;
  }
  [[nodiscard]] double total() const { return cumulative_.empty() ? 0.0 : cumulative_.back(); }
  [[nodiscard]] bool measured() const { return measured_; }

  // The energy from the first sample to `t`: nothing before the first sample, nothing more after the last.
  [[nodiscard]] double energy_until(std::uint64_t t) const {
    if (times_.empty() || t <= times_.front()) return 0.0;
    if (t >= times_.back()) return cumulative_.back();
    const auto it = std::lower_bound(times_.begin(), times_.end(), t);
    const auto i = static_cast<std::size_t>(it - times_.begin());  // t in (t[i-1], t[i]], i >= 1
    return cumulative_[i - 1] + power(i) * static_cast<double>(t - times_[i - 1]) * kSecondsPerNs;
  }
  [[nodiscard]] double energy_between(std::uint64_t a, std::uint64_t b) const {
    return b <= a ? 0.0 : energy_until(b) - energy_until(a);
  }

 private:
  [[nodiscard]] double power(std::size_t i) const {
    const double w = i < watts_.size() ? watts_[i] : std::nan("");
    return std::isfinite(w) ? w : 0.0;
  }

  const std::vector<std::uint64_t>& times_;
  const std::vector<double>& watts_;
  bool measured_;
  std::vector<double> cumulative_;
};

struct Accumulated {
  double joules = 0.0;
  double seconds = 0.0;
  bool includes_modelled = false;
};

// Adds the energy of each domain over [a, b] (or one sample interval) to `into`.
void add_energy(const std::vector<double>& joules_by_domain, const std::vector<EnergyTimeline>& timelines,
                double seconds, Accumulated& into) {
  into.seconds += seconds;
  for (std::size_t d = 0; d < timelines.size(); ++d) {
    if (joules_by_domain[d] <= 0.0) continue;
    into.joules += joules_by_domain[d];
    if (!timelines[d].measured()) into.includes_modelled = true;
  }
}

// The names all of whose call-tree nodes lie at or below a node named `step`: the samples whose
// innermost scope has such a name were taken inside a call of `step`.
std::unordered_set<StringId> names_inside(const Profile& profile, StringId step) {
  std::unordered_map<StringId, bool> all_inside;
  // Parents come before children in the call tree (node ids grow with depth-first creation),
  // but walk up explicitly so that no order is assumed.
  for (const CallTreeNode& node : profile.call_tree) {
    if (node.name == kNone) continue;
    bool below = false;
    for (std::uint32_t n = node.id; n != kNone && n < profile.call_tree.size(); n = profile.call_tree[n].parent) {
      if (profile.call_tree[n].name == step) {
        below = true;
        break;
      }
    }
    auto [it, fresh] = all_inside.try_emplace(node.name, below);
    if (!fresh) it->second = it->second && below;
  }
  std::unordered_set<StringId> names;
  for (const auto& [name, below] : all_inside)
    if (below) names.insert(name);
  names.insert(step);
  return names;
}

}  // namespace

bool counts_towards_total(const EnergyDomain& domain) noexcept { return domain.kind != "psys"; }

namespace {

// The power timeline of every domain that counts and has a power track.
std::vector<EnergyTimeline> timelines_of(const SystemProfile& system, EnergyAttribution* result) {
  std::vector<EnergyTimeline> timelines;
  for (const EnergyDomain& domain : system.energy) {
    if (!counts_towards_total(domain)) continue;
    if (result != nullptr && domain.method == EnergyMethod::Modelled) result->total_measured = false;
    const SystemTrack* track = system.track(domain.track);
    if (track == nullptr) {
      if (result != nullptr) result->domains_without_track.push_back(domain.name);
      continue;
    }
    timelines.emplace_back(system.sample_ns, track->values, domain.method != EnergyMethod::Modelled);
  }
  return timelines;
}

std::uint32_t scope_thread_of(const SystemProfile& system) noexcept {
  return system.scope_thread == kNone ? 0 : system.scope_thread;
}

// The spans of `thread`, parents before their children at the same start time, whatever order
// the spans came in.
std::vector<const Span*> spans_of(const Profile& profile, std::uint32_t thread) {
  std::vector<const Span*> spans;
  for (const Span& span : profile.spans)
    if (span.thread == thread) spans.push_back(&span);
  std::ranges::stable_sort(spans, [](const Span* a, const Span* b) {
    return a->start_ns != b->start_ns ? a->start_ns < b->start_ns : a->depth < b->depth;
  });
  return spans;
}

// Calls `visit(span, top_level, topmost_of_name)` for each span in order, tracking which spans
// are open by their depth.
template <typename Visit>
void walk_spans(const std::vector<const Span*>& spans, Visit visit) {
  std::vector<const Span*> open;
  std::unordered_map<StringId, std::uint32_t> open_names;
  for (const Span* span : spans) {
    while (!open.empty() && open.back()->depth >= span->depth) {
      --open_names[open.back()->name];
      open.pop_back();
    }
    const bool topmost_of_name = open_names[span->name] == 0;
    const bool top_level = open.empty();
    open.push_back(span);
    ++open_names[span->name];
    visit(*span, top_level, topmost_of_name);
  }
}

}  // namespace

EnergyAttribution attribute_energy(const Profile& profile) {
  const SystemProfile& system = profile.system;
  EnergyAttribution result;
  const std::vector<EnergyTimeline> timelines = timelines_of(system, &result);
  for (const EnergyTimeline& t : timelines) result.total_joules += t.total();
  if (timelines.empty() || system.sample_ns.size() < 2) return result;

  const std::uint32_t thread = scope_thread_of(system);
  result.thread = thread;
  std::unordered_map<StringId, Accumulated> by_name;
  std::vector<double> joules(timelines.size());
  const std::vector<const Span*> spans = spans_of(profile, thread);

  if (!spans.empty()) {
    result.basis = EnergyBasis::Spans;
    walk_spans(spans, [&](const Span& span, bool top_level, bool topmost_of_name) {
      if (!topmost_of_name && !top_level) return;
      for (std::size_t d = 0; d < timelines.size(); ++d) joules[d] = timelines[d].energy_between(span.start_ns, span.end_ns);
      if (top_level) result.attributed_joules += std::accumulate(joules.begin(), joules.end(), 0.0);
      if (topmost_of_name) {
        const double seconds = static_cast<double>(span.end_ns - span.start_ns) * kSecondsPerNs;
        add_energy(joules, timelines, seconds, by_name[span.name]);
      }
    });
  } else if (!system.sample_scope.empty()) {
    result.basis = EnergyBasis::Samples;
    for (std::size_t i = 1; i < system.sample_ns.size() && i < system.sample_scope.size(); ++i) {
      if (system.sample_scope[i] == kNone) continue;
      for (std::size_t d = 0; d < timelines.size(); ++d) joules[d] = timelines[d].interval_joules(i);
      const double seconds = static_cast<double>(system.sample_ns[i] - system.sample_ns[i - 1]) * kSecondsPerNs;
      result.attributed_joules += std::accumulate(joules.begin(), joules.end(), 0.0);
      add_energy(joules, timelines, seconds, by_name[system.sample_scope[i]]);
    }
  } else {
    return result;
  }

  for (const auto& [name, acc] : by_name) {
    ScopeEnergy scope;
    scope.name = name;
    scope.joules = acc.joules;
    scope.share = result.total_joules > 0.0 ? acc.joules / result.total_joules : 0.0;
    scope.seconds = acc.seconds;
    scope.mean_watts = acc.seconds > 0.0 ? acc.joules / acc.seconds : 0.0;
    scope.measured = !acc.includes_modelled;
    result.scopes.push_back(scope);
  }
  std::ranges::sort(result.scopes, [](const ScopeEnergy& a, const ScopeEnergy& b) {
    return a.joules != b.joules ? a.joules > b.joules : a.name < b.name;
  });

  for (const ScopeStats& stats : profile.scopes) {
    if (stats.items == 0 || stats.time.count == 0) continue;
    StepEnergy step;
    step.name = stats.name;
    step.calls = stats.time.count;
    step.items = stats.items;
    if (result.basis == EnergyBasis::Spans) {
      const auto it = by_name.find(stats.name);
      if (it == by_name.end()) continue;  // the step ran on another thread than the scope thread
      step.joules = it->second.joules;
      step.measured = !it->second.includes_modelled;
    } else {
      // Sample scopes are innermost: a step's energy is that of every sample taken inside it.
      const std::unordered_set<StringId> inside = names_inside(profile, stats.name);
      bool any = false;
      for (const auto& [name, acc] : by_name) {
        if (!inside.contains(name)) continue;
        any = true;
        step.joules += acc.joules;
        if (acc.includes_modelled) step.measured = false;
      }
      if (!any) continue;
    }
    step.joules_per_call = step.joules / static_cast<double>(step.calls);
    step.joules_per_item = step.joules / static_cast<double>(step.items);
    result.steps.push_back(step);
  }
  return result;
}

std::vector<double> call_joules(const Profile& profile, StringId name) {
  std::vector<double> calls;
  const std::vector<EnergyTimeline> timelines = timelines_of(profile.system, nullptr);
  if (timelines.empty() || profile.system.sample_ns.size() < 2) return calls;
  walk_spans(spans_of(profile, scope_thread_of(profile.system)), [&](const Span& span, bool, bool topmost_of_name) {
    if (span.name != name || !topmost_of_name) return;
    double joules = 0.0;
    for (const EnergyTimeline& t : timelines) joules += t.energy_between(span.start_ns, span.end_ns);
    calls.push_back(joules);
  });
  return calls;
}

const StepEnergy* main_step(const EnergyAttribution& energy) noexcept {
  return energy.steps.empty() ? nullptr : &energy.steps.front();
}

}  // namespace nnprof::analysis
