#include "analysis/compare.hpp"

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include <fmt/format.h>

#include "analysis/energy.hpp"
#include "analysis/rankings.hpp"
#include "analysis/statistics/mann_whitney.hpp"
#include "analysis/statistics/welch.hpp"

namespace nnprof {

const char* to_string(Verdict verdict) noexcept {
  switch (verdict) {
    case Verdict::Stable: return "stable";
    case Verdict::Improved: return "improved";
    case Verdict::Regressed: return "regressed";
    case Verdict::Unreliable: return "unreliable";
  }
  return "unreliable";
}

const char* to_string(CompareTest test) noexcept {
  switch (test) {
    case CompareTest::None: return "none";
    case CompareTest::MannWhitney: return "mann-whitney";
    case CompareTest::Welch: return "welch";
  }
  return "none";
}

namespace {

template <typename Keep, typename Before>
std::vector<const ScopeChange*> select(const std::vector<ScopeChange>& scopes, std::size_t n, Keep keep,
                                       Before before) {
  std::vector<const ScopeChange*> result;
  for (const ScopeChange& s : scopes)
    if (keep(s)) result.push_back(&s);
  std::stable_sort(result.begin(), result.end(), before);
  if (result.size() > n) result.resize(n);
  return result;
}

}  // namespace

std::vector<const ScopeChange*> Comparison::top_improvements(std::size_t n) const {
  return select(
      scopes, n, [](const ScopeChange& s) { return s.verdict == Verdict::Improved; },
      [](const ScopeChange* x, const ScopeChange* y) { return x->total_delta_ns < y->total_delta_ns; });
}

std::vector<const ScopeChange*> Comparison::top_regressions(std::size_t n) const {
  return select(
      scopes, n, [](const ScopeChange& s) { return s.verdict == Verdict::Regressed; },
      [](const ScopeChange* x, const ScopeChange* y) { return x->total_delta_ns > y->total_delta_ns; });
}

const ScopeChange* Comparison::worst_regression() const {
  const ScopeChange* worst = nullptr;
  for (const ScopeChange& s : scopes)
    if (s.verdict == Verdict::Regressed && s.decides && (worst == nullptr || s.change > worst->change)) worst = &s;
  return worst;
}

namespace analysis {
namespace {

using statistics::kWelchMinDf;

// Each scope name's per-call durations, from the spans (every call that kept one).
std::vector<std::vector<double>> durations_by_name(const Profile& p) {
  std::vector<std::vector<double>> by_name(p.strings.size());
  for (const Span& s : p.spans)
    if (s.name < by_name.size() && s.end_ns >= s.start_ns)
      by_name[s.name].push_back(static_cast<double>(s.end_ns - s.start_ns));
  return by_name;
}

const std::vector<double>& durations_of(const std::vector<std::vector<double>>& by_name, StringId name) {
  static const std::vector<double> kNoDurations;
  return name < by_name.size() ? by_name[name] : kNoDurations;
}

bool spans_complete(const CompareSide& side) { return side.calls > 0 && side.spans >= side.calls; }

std::uint64_t exact_median(std::vector<double> values) {
  const std::size_t mid = values.size() / 2;
  std::nth_element(values.begin(), values.begin() + static_cast<std::ptrdiff_t>(mid), values.end());
  double m = values[mid];
  if (values.size() % 2 == 0) {
    const double below = *std::max_element(values.begin(), values.begin() + static_cast<std::ptrdiff_t>(mid));
    m = (m + below) / 2.0;
  }
  return static_cast<std::uint64_t>(std::llround(m));
}

CompareSide side_of(const ScopeStats& s, const std::vector<double>& durations) {
  CompareSide side;
  side.calls = s.time.count;
  side.total_ns = s.total_ns;
  side.self_ns = s.self_ns;
  side.mean_ns = s.time.mean_ns;
  side.stddev_ns = s.time.stddev_ns;
  side.spans = durations.size();
  side.median_ns = spans_complete(side) ? exact_median(durations) : s.time.p50_ns;
  return side;
}

std::string spans_kept(const char* run, const CompareSide& side) {
  return fmt::format("{} kept spans for {} of {} calls", run, side.spans, side.calls);
}

// Runs the test that the data allows and sets test, p_value, prob_b_slower and note.
void run_test(ScopeChange& c, const std::vector<double>& a, const std::vector<double>& b,
              const CompareOptions& options) {
  if (c.a.calls < options.min_calls || c.b.calls < options.min_calls) {
    c.note = fmt::format("too few calls: {} in A, {} in B; a verdict needs {} on each side", c.a.calls, c.b.calls,
                         options.min_calls);
    return;
  }
  if (spans_complete(c.a) && spans_complete(c.b)) {
    const statistics::MannWhitneyResult r = statistics::mann_whitney_u(a, b);
    c.test = CompareTest::MannWhitney;
    c.p_value = r.p_value;
    c.prob_b_slower = r.prob_y_greater();
    return;
  }
  // Some calls kept no span (statistics-only session, memory cap, flight recorder): the
  // spans left are a biased subset (the first or the last calls), while count, mean and
  // standard deviation cover every call. So test the means.
  std::string why;
  if (!spans_complete(c.a)) why = spans_kept("A", c.a);
  if (!spans_complete(c.b)) why += (why.empty() ? "" : ", ") + spans_kept("B", c.b);
  const statistics::WelchResult w =
      statistics::welch_test(c.a.calls, c.a.mean_ns, c.a.stddev_ns, c.b.calls, c.b.mean_ns, c.b.stddev_ns);
  if (!(w.df >= kWelchMinDf)) {
    c.note = fmt::format("{}; Welch's test on the means needs {:.0f} degrees of freedom, these calls give {:.1f}",
                         why, kWelchMinDf, w.df);
    return;
  }
  c.test = CompareTest::Welch;
  c.p_value = w.p_value;
  c.note = why + ": Welch's test on the mean and standard deviation of every call";
}

void judge(ScopeChange& c, const CompareOptions& options) {
  if (c.test == CompareTest::None) {
    c.verdict = Verdict::Unreliable;
    return;
  }
  c.verdict = Verdict::Stable;
  if (!(c.p_value < options.alpha) || !(std::fabs(c.change) >= options.min_change)) return;
  // The rank test says the distributions differ; the mean says by how much. When they point
  // different ways (a few extreme calls pull the mean against the bulk), claim nothing.
  const bool rank_slower = c.test != CompareTest::MannWhitney || c.prob_b_slower > 0.5;
  const bool rank_faster = c.test != CompareTest::MannWhitney || c.prob_b_slower < 0.5;
  if (c.change > 0 && rank_slower) {
    c.verdict = Verdict::Regressed;
  } else if (c.change < 0 && rank_faster) {
    c.verdict = Verdict::Improved;
  } else {
    c.note = fmt::format(
        "the typical call and the mean moved in opposite directions (P(B slower) = {:.2f}, mean {:+.1f}%): "
        "a few outlying calls dominate one of them",
        c.prob_b_slower, c.change * 100.0);
  }
}

// How many times the cost of one empty scope, and the clock's tick, a scope's mean call must
// last to decide the run's verdict: the factor of the "dominated by instrumentation" insight.
constexpr double kDecidingFactor = 10.0;

// The shortest mean per call that decides: below it the profiler's own cost (measured per
// session) or the clock's granularity is a large part of what was timed.
double deciding_mean_ns(const Profile& a, const Profile& b) {
  const double overhead = std::max(a.completeness.overhead_per_scope_ns, b.completeness.overhead_per_scope_ns);
  const double tick = std::max(a.meta.clock.ns_per_tick, b.meta.clock.ns_per_tick);
  return kDecidingFactor * std::max(overhead, tick);
}

// The time `p` spent inside scopes named in `names`, each call counted once, at the outermost
// such scope (a slower child of a slower parent is in the parent's time already).
double time_inside(const Profile& p, const std::unordered_set<std::string_view>& names) {
  const std::vector<CallTreeNode>& nodes = p.call_tree;
  if (names.empty() || nodes.empty()) return 0.0;
  double total = 0.0;
  std::vector<bool> seen(nodes.size(), false);  // a malformed tree's cycle is walked once
  std::vector<std::uint32_t> todo(nodes[0].children.begin(), nodes[0].children.end());
  while (!todo.empty()) {
    const std::uint32_t n = todo.back();
    todo.pop_back();
    if (n >= nodes.size() || seen[n]) continue;
    seen[n] = true;
    if (names.contains(p.str(nodes[n].name))) {
      total += static_cast<double>(nodes[n].time.sum_ns);
    } else {
      todo.insert(todo.end(), nodes[n].children.begin(), nodes[n].children.end());
    }
  }
  return total;
}

// The run as a whole (see Comparison::verdict): its runtime is one measurement, so it changed
// significantly only where deciding scopes with a significant change account for the change.
void judge_run(Comparison& c, const Profile& a, const Profile& b) {
  bool any_verdict = false;
  std::unordered_set<std::string_view> changed;
  for (const ScopeChange& s : c.scopes) {
    if (!s.decides || s.verdict == Verdict::Unreliable) continue;
    any_verdict = true;
    if (s.verdict == Verdict::Improved || s.verdict == Verdict::Regressed) changed.insert(s.name);
  }
  if (c.runtime_a_ns > 0) {
    const auto runtime_a = static_cast<double>(c.runtime_a_ns);
    c.runtime_change = static_cast<double>(c.runtime_b_ns) / runtime_a - 1.0;
    c.significant_change = (time_inside(b, changed) - time_inside(a, changed)) / runtime_a;
  }
  const double min = c.options.min_change;
  if (!any_verdict) {
    c.verdict = Verdict::Unreliable;
  } else if (c.runtime_change >= min && c.significant_change >= min) {
    c.verdict = Verdict::Regressed;
  } else if (c.runtime_change <= -min && c.significant_change <= -min) {
    c.verdict = Verdict::Improved;
  } else {
    c.verdict = Verdict::Stable;
  }
}

// Energy per step (issue 22): the first step of A with energy in B too, each call's joules
// tested as each call's duration is (Mann-Whitney, the same alpha and min_change).
std::optional<EnergyPerStep> energy_per_step(const Profile& a, const Profile& b, const CompareOptions& options) {
  if (!a.system.monitored || !b.system.monitored) return std::nullopt;
  const EnergyAttribution ea = attribute_energy(a);
  const EnergyAttribution eb = attribute_energy(b);
  for (const StepEnergy& sa : ea.steps) {
    const auto sb = std::ranges::find_if(eb.steps, [&](const StepEnergy& s) { return b.str(s.name) == a.str(sa.name); });
    if (sb == eb.steps.end()) continue;
    EnergyPerStep e;
    e.step = a.str(sa.name);
    e.a_joules = sa.joules_per_call;
    e.b_joules = sb->joules_per_call;
    e.a_joules_per_item = sa.joules_per_item;
    e.b_joules_per_item = sb->joules_per_item;
    e.a_measured = sa.measured;
    e.b_measured = sb->measured;
    e.ratio = e.a_joules > 0.0 ? e.b_joules / e.a_joules : 0.0;
    e.change = e.ratio > 0.0 ? e.ratio - 1.0 : 0.0;
    const std::vector<double> calls_a = ea.basis == EnergyBasis::Spans ? call_joules(a, sa.name) : std::vector<double>{};
    const std::vector<double> calls_b = eb.basis == EnergyBasis::Spans ? call_joules(b, sb->name) : std::vector<double>{};
    e.a_calls = calls_a.size();
    e.b_calls = calls_b.size();
    if (calls_a.empty() || calls_b.empty()) {
      e.note = "no spans kept in one run: one value per run, so the ratio is shown without a significance claim";
    } else if (e.a_calls < options.min_calls || e.b_calls < options.min_calls) {
      e.note = fmt::format("too few calls: {} in A, {} in B; a verdict needs {} on each side", e.a_calls, e.b_calls,
                           options.min_calls);
    } else {
      const statistics::MannWhitneyResult r = statistics::mann_whitney_u(calls_a, calls_b);
      e.test = CompareTest::MannWhitney;
      e.p_value = r.p_value;
      e.prob_b_more = r.prob_y_greater();
      e.verdict = Verdict::Stable;
      if (e.p_value < options.alpha && std::fabs(e.change) >= options.min_change) {
        if (e.change > 0 && e.prob_b_more > 0.5) e.verdict = Verdict::Regressed;
        else if (e.change < 0 && e.prob_b_more < 0.5) e.verdict = Verdict::Improved;
      }
    }
    if (e.a_measured != e.b_measured) {
      const std::string methods = fmt::format("A's energy is {}, B's {}: the two were not obtained the same way",
                                              e.a_measured ? "measured" : "partly modelled",
                                              e.b_measured ? "measured" : "partly modelled");
      e.note = e.note.empty() ? methods : e.note + "; " + methods;
    }
    return e;
  }
  return std::nullopt;
}

RunTotals totals_of(const Profile& p) {
  RunTotals t;
  t.command_line = p.meta.command_line;
  t.hostname = p.meta.hostname;
  t.duration_ns = p.meta.duration_ns;
  t.instrumented_ns = p.instrumented_ns();
  t.calls = p.completeness.scopes_recorded;
  if (t.calls == 0)
    for (const ScopeStats& s : p.scopes) t.calls += s.time.count;
  t.spans = p.spans.size();
  t.spans_enabled = p.completeness.spans_enabled;
  t.heap_tracked = p.heap.tracked;
  t.heap_alloc_bytes = p.heap.alloc_bytes;
  t.heap_alloc_count = p.heap.alloc_count;
  t.heap_peak_bytes = p.heap.peak_bytes;
  t.has_memory_counters = !p.memory_counters.empty();
  for (const MemoryCounter& m : p.memory_counters) {
    t.counter_alloc_bytes += m.alloc_bytes;
    t.counter_alloc_count += m.alloc_count;
  }
  t.counter_peak_bytes = p.memory.peak_bytes;
  return t;
}

std::vector<ScopeOnly> only_in(const Profile& p, const std::unordered_map<std::string_view, const ScopeStats*>& other) {
  std::vector<ScopeOnly> result;
  for (const ScopeStats& s : p.scopes)
    if (!other.contains(p.str(s.name))) result.push_back({p.str(s.name), s.time.count, s.total_ns});
  std::sort(result.begin(), result.end(), [](const ScopeOnly& x, const ScopeOnly& y) {
    if (x.total_ns != y.total_ns) return x.total_ns > y.total_ns;
    return x.name < y.name;
  });
  return result;
}

std::unordered_map<std::string_view, const ScopeStats*> index_by_name(const Profile& p) {
  std::unordered_map<std::string_view, const ScopeStats*> index;
  for (const ScopeStats& s : p.scopes) index.emplace(p.str(s.name), &s);
  return index;
}

std::int64_t signed_delta(std::uint64_t a, std::uint64_t b) {
  return b >= a ? static_cast<std::int64_t>(b - a) : -static_cast<std::int64_t>(a - b);
}

void add_notes(const Profile& a, const Profile& b, Comparison& c) {
  const auto missing_spans = [&](const char* run, const Profile& p) {
    const Completeness& k = p.completeness;
    if (!k.spans_enabled) {
      c.notes.push_back(fmt::format(
          "{} was recorded without spans (statistics only): its scopes are compared by Welch's test on each "
          "scope's mean and standard deviation, which needs more calls than the rank test.",
          run));
    } else if (k.spans_dropped + k.spans_overwritten > 0) {
      c.notes.push_back(fmt::format(
          "{} lost {} spans to its memory cap ({}): scopes with calls that kept no span are compared by Welch's "
          "test on their mean and standard deviation.",
          run, k.spans_dropped + k.spans_overwritten,
          k.buffer_policy.empty() ? std::string("buffer policy unknown") : k.buffer_policy));
    }
  };
  missing_spans("A", a);
  missing_spans("B", b);
  if (!a.meta.hostname.empty() && !b.meta.hostname.empty() && a.meta.hostname != b.meta.hostname)
    c.notes.push_back(fmt::format("The runs were on different hosts ({} and {}): part of any change may be the "
                                  "machine's.",
                                  a.meta.hostname, b.meta.hostname));
  else if (!a.meta.cpu_model.empty() && !b.meta.cpu_model.empty() && a.meta.cpu_model != b.meta.cpu_model)
    c.notes.push_back(fmt::format("The runs were on different CPUs ({} and {}).", a.meta.cpu_model, b.meta.cpu_model));
}

}  // namespace

Comparison compare_profiles(const Profile& a, const Profile& b, const CompareOptions& options) {
  Comparison c;
  c.options = options;
  c.a = totals_of(a);
  c.b = totals_of(b);
  if (c.a.duration_ns > 0 && c.b.duration_ns > 0) {
    c.runtime_basis = "session wall time";
    c.runtime_a_ns = c.a.duration_ns;
    c.runtime_b_ns = c.b.duration_ns;
  } else {
    c.runtime_basis = "instrumented time";
    c.runtime_a_ns = c.a.instrumented_ns;
    c.runtime_b_ns = c.b.instrumented_ns;
  }
  c.speedup = c.runtime_b_ns == 0 ? 0.0
                                  : static_cast<double>(c.runtime_a_ns) / static_cast<double>(c.runtime_b_ns);

  const auto in_a = index_by_name(a);
  const auto in_b = index_by_name(b);
  const std::vector<std::vector<double>> durations_a = durations_by_name(a);
  const std::vector<std::vector<double>> durations_b = durations_by_name(b);
  double log_sum = 0.0;
  const double deciding_ns = deciding_mean_ns(a, b);
  std::vector<std::string_view> too_short;
  for (const ScopeStats& sa : a.scopes) {
    const auto it = in_b.find(a.str(sa.name));
    if (it == in_b.end()) continue;
    const ScopeStats& sb = *it->second;
    ScopeChange s;
    s.name = a.str(sa.name);
    const std::vector<double>& da = durations_of(durations_a, sa.name);
    const std::vector<double>& db = durations_of(durations_b, sb.name);
    s.a = side_of(sa, da);
    s.b = side_of(sb, db);
    s.ratio = s.a.mean_ns > 0.0 ? s.b.mean_ns / s.a.mean_ns : 0.0;
    s.change = s.ratio > 0.0 ? s.ratio - 1.0 : 0.0;
    s.total_delta_ns = signed_delta(s.a.total_ns, s.b.total_ns);
    run_test(s, da, db, options);
    judge(s, options);
    s.decides = std::min(s.a.mean_ns, s.b.mean_ns) >= deciding_ns;
    if (!s.decides) {
      too_short.push_back(a.str(sa.name));
      const std::string why = fmt::format(
          "a mean call of {:.0f} ns in A and {:.0f} ns in B, below {:.0f} ns (10x the cost of one scope or the clock's "
          "tick): it does not decide the run's verdict",
          s.a.mean_ns, s.b.mean_ns, deciding_ns);
      s.note = s.note.empty() ? why : s.note + "; " + why;
    }
    switch (s.verdict) {
      case Verdict::Improved: ++c.improved; break;
      case Verdict::Regressed: ++c.regressed; break;
      case Verdict::Stable: ++c.stable; break;
      case Verdict::Unreliable: ++c.unreliable; break;
    }
    if (s.verdict != Verdict::Unreliable && s.ratio > 0.0) {
      log_sum += std::log(s.ratio);
      ++c.geomean_scopes;
    }
    c.scopes.push_back(std::move(s));
  }
  std::sort(c.scopes.begin(), c.scopes.end(), [](const ScopeChange& x, const ScopeChange& y) {
    const auto mx = x.total_delta_ns < 0 ? -static_cast<double>(x.total_delta_ns) : static_cast<double>(x.total_delta_ns);
    const auto my = y.total_delta_ns < 0 ? -static_cast<double>(y.total_delta_ns) : static_cast<double>(y.total_delta_ns);
    if (mx != my) return mx > my;
    return x.name < y.name;
  });
  if (c.geomean_scopes > 0) c.geomean_ratio = std::exp(log_sum / static_cast<double>(c.geomean_scopes));
  c.removed = only_in(a, in_b);
  c.added = only_in(b, in_a);

  judge_run(c, a, b);
  add_notes(a, b, c);
  c.energy_per_step = energy_per_step(a, b, options);
  if (!too_short.empty()) {
    std::sort(too_short.begin(), too_short.end());
    constexpr std::size_t kNamed = 10;
    std::string names;
    for (std::size_t i = 0; i < too_short.size() && i < kNamed; ++i) names += fmt::format("{}{}", i > 0 ? ", " : "", too_short[i]);
    if (too_short.size() > kNamed) names += fmt::format(" and {} more", too_short.size() - kNamed);
    c.notes.push_back(fmt::format(
        "{} of the scopes in both runs are too short to decide the run's verdict (a mean call below {:.0f} ns, 10x the "
        "cost of one scope or the clock's tick: mostly what the profiler itself costs): {}.",
        too_short.size(), deciding_ns, names));
  }
  return c;
}

}  // namespace analysis
}  // namespace nnprof
