// The comparison's summary: the run's verdict and why first, the scopes' verdicts, then runtime, calls and allocations of both runs
// with their deltas, then the speedup and the geometric mean of the per-call time ratios.
#include <cmath>
#include <optional>
#include <string>

#include <fmt/format.h>

#include "report/format.hpp"
#include "report/comparison_sections.hpp"

namespace nnprof::report::sections {
namespace {

using namespace compare_cells;

std::string upper(const char* s) {
  std::string r(s);
  for (char& c : r) c = static_cast<char>(c >= 'a' && c <= 'z' ? c - 'a' + 'A' : c);
  return r;
}

// The run as a whole first, with why: the runtime's change, and whether the scopes whose change
// is significant account for it (see Comparison::verdict).
Sentence verdict_sentence(const Comparison& c) {
  Sentence s;
  s.words(fmt::format("Verdict: {}: ", upper(to_string(c.verdict))));
  if (c.verdict == Verdict::Unreliable)
    return s.words("no scope long enough to decide had enough calls in both runs for a verdict.");
  const double min = c.options.min_change;
  const auto runtime = [&] {
    if (c.runtime_change >= 0.0) {
      s.words("the run took ").share(c.runtime_change).words(" more time");
    } else {
      s.words("the run took ").share(-c.runtime_change).words(" less time");
    }
    s.words(fmt::format(" ({})", c.runtime_basis));
  };
  runtime();
  if (c.verdict != Verdict::Stable)
    return s.words(", and the scopes whose change is significant account for ")
        .share(std::fabs(c.significant_change))
        .words(" of A's runtime.");
  if (std::fabs(c.runtime_change) < min) return s.words(", less than the ").share(min).words(" that counts as a change.");
  // Signed: the significant changes may even point the other way.
  return s.words(fmt::format(", but that is not significant: the scopes whose change is significant add {:+.1f}% "
                             "to A's runtime, where {:+.1f}% would be needed. The difference lies in noise, the "
                             "machine, or code outside the profiled scopes.",
                             c.significant_change * 100.0, (c.runtime_change > 0 ? min : -min) * 100.0));
}

Sentence scope_verdicts_sentence(const Comparison& c) {
  return Sentence()
      .words("Scopes: ")
      .count(c.regressed)
      .words(" regressed, ")
      .count(c.improved)
      .words(" improved, ")
      .count(c.stable)
      .words(" stable, ")
      .count(c.unreliable)
      .words(" unreliable")
      .words(c.worst_regression() == nullptr && c.regressed > 0 ? " (no regressed scope is long enough to decide)"
                                                                 : "")
      .words(".");
}

// Ratios keep their fixed decimals ("2.000x"): a reader compares them digit by digit.
Sentence speedup_sentence(const Comparison& c) {
  if (c.speedup <= 0.0) return Sentence().words(fmt::format("Speedup: n/a (B's {} is 0)", c.runtime_basis));
  const std::string how = c.speedup >= 1.0 ? fmt::format("B is {:.2f}x as fast", c.speedup)
                                           : fmt::format("B is {:.2f}x as slow", 1.0 / c.speedup);
  return Sentence()
      .words("Speedup: ")
      .words(fmt::format("{:.3f}x", c.speedup))
      .words(fmt::format(" ({}; A's {} / B's)", how, c.runtime_basis));
}

Sentence geomean_sentence(const Comparison& c) {
  if (c.geomean_scopes == 0)
    return Sentence().words("Geometric mean of per-call time ratios: n/a (no scope had a verdict)");
  return Sentence()
      .words(fmt::format("Geometric mean of per-call time ratios (B/A): {:.3f}x over ", c.geomean_ratio))
      .count(c.geomean_scopes, "scope", "scopes");
}

Table summary_table(const Comparison& c) {
  Table t;
  t.id = "compare-summary";
  t.columns = {{"Metric", Align::Left, "metric"},
               {"A", Align::Right, "a"},
               {"B", Align::Right, "b"},
               {"Delta", Align::Right, "delta"},
               {"Change", Align::Right, "change"}};
  const auto value = [](std::uint64_t v) { return static_cast<double>(v); };
  const auto time_row = [&](std::string label, std::uint64_t a, std::uint64_t b) {
    const std::int64_t d = signed_delta(a, b);
    t.row({Cell::words(std::move(label)), Cell::number(report::format_duration(a), value(a)),
           Cell::number(report::format_duration(b), value(b)), Cell::number(signed_duration(d), static_cast<double>(d)),
           change(value(a), value(b))});
  };
  const auto count_row = [&](std::string label, std::uint64_t a, std::uint64_t b) {
    const std::int64_t d = signed_delta(a, b);
    t.row({Cell::words(std::move(label)), Cell::number(report::format_count(a), value(a)),
           Cell::number(report::format_count(b), value(b)), Cell::number(signed_count(d), static_cast<double>(d)),
           change(value(a), value(b))});
  };
  // A side without the data says n/a, never 0: "no heap tracking" is not "no allocations".
  const auto na = [] { return Cell::words("n/a"); };
  const auto bytes_row = [&](std::string label, std::optional<std::uint64_t> a, std::optional<std::uint64_t> b) {
    std::vector<Cell> cells = {Cell::words(std::move(label)),
                               a ? Cell::number(report::format_bytes(*a), value(*a)) : na(),
                               b ? Cell::number(report::format_bytes(*b), value(*b)) : na()};
    if (a && b) {
      const std::int64_t d = signed_delta(*a, *b);
      cells.push_back(Cell::number(signed_bytes(d), static_cast<double>(d)));
      cells.push_back(change(value(*a), value(*b)));
    } else {
      cells.push_back(na());
      cells.push_back(na());
    }
    t.row(std::move(cells));
  };
  const auto opt = [](bool has, std::uint64_t v) { return has ? std::optional<std::uint64_t>(v) : std::nullopt; };
  time_row(fmt::format("Runtime ({})", c.runtime_basis), c.runtime_a_ns, c.runtime_b_ns);
  if (c.runtime_basis != "instrumented time") time_row("Instrumented time", c.a.instrumented_ns, c.b.instrumented_ns);
  count_row("Scope calls", c.a.calls, c.b.calls);
  if (c.a.heap_tracked || c.b.heap_tracked) {
    bytes_row("Heap allocated", opt(c.a.heap_tracked, c.a.heap_alloc_bytes), opt(c.b.heap_tracked, c.b.heap_alloc_bytes));
    if (c.a.heap_tracked && c.b.heap_tracked) {
      count_row("Heap allocations", c.a.heap_alloc_count, c.b.heap_alloc_count);
    } else {
      t.row({Cell::words("Heap allocations"),
             c.a.heap_tracked ? Cell::number(report::format_count(c.a.heap_alloc_count), value(c.a.heap_alloc_count)) : na(),
             c.b.heap_tracked ? Cell::number(report::format_count(c.b.heap_alloc_count), value(c.b.heap_alloc_count)) : na(),
             na(), na()});
    }
    bytes_row("Heap peak", opt(c.a.heap_tracked, c.a.heap_peak_bytes), opt(c.b.heap_tracked, c.b.heap_peak_bytes));
  }
  if (c.a.has_memory_counters || c.b.has_memory_counters) {
    bytes_row("Allocated (memory counters)", opt(c.a.has_memory_counters, c.a.counter_alloc_bytes),
              opt(c.b.has_memory_counters, c.b.counter_alloc_bytes));
    bytes_row("Peak (memory counters)", opt(c.a.has_memory_counters, c.a.counter_peak_bytes),
              opt(c.b.has_memory_counters, c.b.counter_peak_bytes));
  }
  if (c.energy_per_step) {
    const EnergyPerStep& e = *c.energy_per_step;
    const auto joules = [](double j, bool measured) {
      return Cell::number(report::format_si(j, "J") + (measured ? "" : " (partly modelled)"), j);
    };
    t.row({Cell::words(fmt::format("Energy per step ({})", report::capped_name(e.step))), joules(e.a_joules, e.a_measured),
           joules(e.b_joules, e.b_measured), Cell::number(report::format_si(e.b_joules - e.a_joules, "J"), e.b_joules - e.a_joules),
           change(e.a_joules, e.b_joules)});
  }
  return t;
}

// Energy per step judged like a scope's time: each call's joules under the same test, or, with
// one value per run, the ratio alone and why.
Sentence energy_sentence(const EnergyPerStep& e) {
  Sentence s;
  s.words("Energy per step (").name(report::capped_name(e.step)).words(fmt::format("): B/A {:.3f}x", e.ratio));
  if (e.test == CompareTest::MannWhitney) {
    s.words(fmt::format(", {} (Mann-Whitney on each call's energy, p = {:.3g})", to_string(e.verdict), e.p_value));
  } else {
    s.words(", no verdict");
  }
  if (!e.note.empty()) s.words(": " + e.note);
  return s.words(".");
}

}  // namespace

void compare_summary(const Comparison& c, std::vector<Section>& out) {
  Section section{"summary", "Summary", {}};
  section.say(verdict_sentence(c));
  section.say(scope_verdicts_sentence(c));
  section.add(summary_table(c));
  section.say(speedup_sentence(c));
  section.say(geomean_sentence(c));
  if (c.energy_per_step) section.say(energy_sentence(*c.energy_per_step));
  out.push_back(std::move(section));
}

}  // namespace nnprof::report::sections
