#include "report/comparison.hpp"

#include <string>

#include <fmt/format.h>

#include "report/format.hpp"
#include "report/cells.hpp"
#include "report/comparison_sections.hpp"

namespace nnprof::report {
namespace {

// The comparison, in reading order: the verdict and totals, what got worse, what got better,
// everything matched, what exists in one run only, then how it was judged.
constexpr ComparisonSection kComparisonSections[] = {
    sections::compare_summary, sections::compare_regressions, sections::compare_improvements,
    sections::compare_scopes,  sections::compare_only,        sections::compare_method,
};

// A run as one line: its command line and host, cut for display (JSON keeps them whole).
Sentence run_line(const RunTotals& run) {
  Sentence s;
  if (run.command_line.empty()) s.words("(command line unknown)");
  else s.name(report::capped_name(run.command_line, report::kTextDisplayLimit));
  if (!run.hostname.empty()) s.words(" on ").name(report::capped_name(run.hostname));
  return s;
}

}  // namespace

std::int64_t signed_delta(std::uint64_t a, std::uint64_t b) {
  return b >= a ? static_cast<std::int64_t>(b - a) : -static_cast<std::int64_t>(a - b);
}

namespace compare_cells {

std::string signed_duration(std::int64_t ns) {
  if (ns == 0) return "0 ns";
  // fmt, not "+" + string: GCC 12 warns (-Wrestrict) on that inlined concatenation.
  return ns > 0 ? fmt::format("+{}", report::format_duration(static_cast<double>(ns)))
                : report::format_duration(static_cast<double>(ns));
}

std::string signed_bytes(std::int64_t bytes) {
  if (bytes == 0) return "0 B";
  return bytes > 0 ? fmt::format("+{}", report::format_bytes(bytes)) : report::format_bytes(bytes);
}

std::string signed_count(std::int64_t n) {
  if (n == 0) return "0";
  return fmt::format("{}{}", n > 0 ? '+' : '-', report::format_count(static_cast<std::uint64_t>(n < 0 ? -n : n)));
}

Cell change(double a, double b) {
  if (a == 0.0) return b == 0.0 ? Cell::number("0.0%", 0.0) : Cell::words("n/a");
  const double fraction = (b - a) / a;
  return Cell::number(fmt::format("{:+.1f}%", fraction * 100.0), fraction);
}

namespace {

const char* test_label(CompareTest t) {
  switch (t) {
    case CompareTest::MannWhitney: return "U";
    case CompareTest::Welch: return "Welch";
    case CompareTest::None: break;
  }
  return "-";
}

Cell p_cell(const ScopeChange& s) {
  if (s.test == CompareTest::None) return Cell::words("n/a");
  return Cell::number(s.p_value < 0.0001 ? std::string("<0.0001") : fmt::format("{:.4f}", s.p_value), s.p_value);
}

}  // namespace

Table change_table(std::string id, const std::vector<const ScopeChange*>& rows) {
  Table t;
  t.id = std::move(id);
  t.style = Table::Style::Sortable;
  t.filter_label = "Filter scopes by name";
  t.columns = {{"Scope", Align::Left, "scope"},     {"Calls A", Align::Right, "calls_a"},
               {"Calls B", Align::Right, "calls_b"}, {"Mean A", Align::Right, "mean_a"},
               {"Mean B", Align::Right, "mean_b"},   {"Ratio", Align::Right, "ratio"},
               {"Change", Align::Right, "change"},   {"Total delta", Align::Right, "total_delta"},
               {"Test", Align::Left, "test"},        {"p", Align::Right, "p"},
               {"Verdict", Align::Left, "verdict"}};
  for (const ScopeChange* s : rows) {
    const bool has_ratio = s->ratio > 0.0;
    t.row({name_cell(s->name),
           count_cell(s->a.calls),
           count_cell(s->b.calls),
           duration_cell(s->a.mean_ns),
           duration_cell(s->b.mean_ns),
           has_ratio ? Cell::number(fmt::format("{:.2f}x", s->ratio), s->ratio) : Cell::words("n/a"),
           has_ratio ? Cell::number(fmt::format("{:+.1f}%", s->change * 100.0), s->change) : Cell::words("n/a"),
           Cell::number(signed_duration(s->total_delta_ns), static_cast<double>(s->total_delta_ns)),
           Cell::words(test_label(s->test)),
           p_cell(*s),
           Cell::words(to_string(s->verdict))});
  }
  return t;
}

Section top_changes(std::string id, std::string_view title_noun, std::string_view verdict, std::string_view effect,
                    const std::vector<const ScopeChange*>& rows, std::size_t total) {
  Section section{id, fmt::format("Top {} {}", kComparisonTop, title_noun), {}};
  if (rows.empty()) {
    section.say(Sentence().words(fmt::format("No scope {}.", verdict)));
    return section;
  }
  section.say(total > rows.size() ? Sentence()
                                        .count(rows.size())
                                        .words(" of ")
                                        .count(total)
                                        .words(fmt::format(" {} scopes, by the time they {}.", verdict, effect))
                                  : Sentence().words(fmt::format("By the time they {}.", effect)));
  section.add(change_table(id + "-table", rows));
  return section;
}

Table only_table(std::string id, const std::vector<ScopeOnly>& rows) {
  Table t;
  t.id = std::move(id);
  t.columns = {{"Scope", Align::Left, "scope"}, {"Calls", Align::Right, "calls"}, {"Total", Align::Right, "total"}};
  for (const ScopeOnly& s : rows)
    t.row({name_cell(s.name), count_cell(s.calls),
           duration_cell(s.total_ns)});
  return t;
}

}  // namespace compare_cells

Document comparison_document(const Comparison& comparison) {
  Document document;
  document.title = "nnprof comparison";
  document.about.items.push_back({"A (baseline)", run_line(comparison.a)});
  document.about.items.push_back({"B", run_line(comparison.b)});
  document.footer = "Generated by nnprof compare.";
  for (const ComparisonSection build : kComparisonSections) build(comparison, document.sections);
  return document;
}

}  // namespace nnprof::report
