#include "io/compare_report.hpp"

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <ostream>
#include <string>
#include <string_view>
#include <vector>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "io/format.hpp"
#include "io/html_escape.hpp"
#include "io/markdown_report.hpp"
#include "nnprof/error.hpp"

namespace nnprof::io {
namespace {

constexpr std::size_t kTop = 10;         // improvements and regressions, as the issue asks
constexpr std::size_t kTextScopes = 30;  // a terminal screen; the other formats list every scope

// ---- numbers ------------------------------------------------------------------------

std::int64_t delta(std::uint64_t a, std::uint64_t b) {
  return b >= a ? static_cast<std::int64_t>(b - a) : -static_cast<std::int64_t>(a - b);
}

std::string signed_duration(std::int64_t ns) {
  if (ns == 0) return "0 ns";
  return ns > 0 ? "+" + format_duration(static_cast<double>(ns)) : format_duration(static_cast<double>(ns));
}

std::string signed_bytes(std::int64_t bytes) {
  if (bytes == 0) return "0 B";
  return bytes > 0 ? "+" + format_bytes(bytes) : format_bytes(bytes);
}

std::string signed_count(std::int64_t n) {
  if (n == 0) return "0";
  const std::string magnitude = format_count(static_cast<std::uint64_t>(n < 0 ? -n : n));
  return (n > 0 ? "+" : "-") + magnitude;
}

// The relative change from a to b; "n/a" from nothing.
std::string change_percent(double a, double b) {
  if (a == 0.0) return b == 0.0 ? "0.0%" : "n/a";
  return fmt::format("{:+.1f}%", (b - a) / a * 100.0);
}

std::string ratio_text(double ratio) { return ratio > 0.0 ? fmt::format("{:.2f}x", ratio) : "n/a"; }

std::string p_text(const ScopeChange& s) {
  if (s.test == CompareTest::None) return "n/a";
  if (s.p_value < 0.0001) return "<0.0001";
  return fmt::format("{:.4f}", s.p_value);
}

const char* test_label(CompareTest t) {
  switch (t) {
    case CompareTest::MannWhitney: return "U";
    case CompareTest::Welch: return "Welch";
    case CompareTest::None: break;
  }
  return "-";
}

std::string upper(const char* s) {
  std::string r(s);
  for (char& c : r) c = static_cast<char>(c >= 'a' && c <= 'z' ? c - 'a' + 'A' : c);
  return r;
}

// ---- what every format says ---------------------------------------------------------

std::string speedup_sentence(const Comparison& c) {
  if (c.speedup <= 0.0) return fmt::format("Speedup: n/a (B's {} is 0)", c.runtime_basis);
  const std::string how = c.speedup >= 1.0 ? fmt::format("B is {:.2f}x as fast", c.speedup)
                                           : fmt::format("B is {:.2f}x as slow", 1.0 / c.speedup);
  return fmt::format("Speedup: {:.3f}x ({}; A's {} / B's)", c.speedup, how, c.runtime_basis);
}

std::string geomean_sentence(const Comparison& c) {
  if (c.geomean_scopes == 0) return "Geometric mean of per-call time ratios: n/a (no scope had a verdict)";
  return fmt::format("Geometric mean of per-call time ratios (B/A): {:.3f}x over {}", c.geomean_ratio,
                     format_count(c.geomean_scopes, "scope", "scopes"));
}

std::string verdict_sentence(const Comparison& c) {
  return fmt::format("Verdict: {} ({} regressed, {} improved, {} stable, {} unreliable)", upper(to_string(c.verdict)),
                     c.regressed, c.improved, c.stable, c.unreliable);
}

std::string method_sentence(const Comparison& c) {
  const CompareOptions& o = c.options;
  return fmt::format(
      "Each scope's per-call durations are compared with a two-sided Mann-Whitney U test (Welch's test on "
      "mean and standard deviation where spans are missing), alpha {}; a verdict needs {} calls on each side, "
      "and a significant change of the mean time per call below {:.1f}% counts as stable.",
      o.alpha, o.min_calls, o.min_change * 100.0);
}

// Human formats cut names and the command line (capped_name); JSON keeps them whole.
std::string run_line(const RunTotals& r) {
  std::string s = r.command_line.empty() ? std::string("(command line unknown)")
                                         : capped_name(r.command_line, kTextDisplayLimit);
  if (!r.hostname.empty()) s += " on " + capped_name(r.hostname);
  return s;
}

TextTable summary_table(const Comparison& c) {
  TextTable t({{"Metric", Align::Left},
               {"A", Align::Right},
               {"B", Align::Right},
               {"Delta", Align::Right},
               {"Change", Align::Right}});
  const auto time_row = [&](std::string label, std::uint64_t a, std::uint64_t b) {
    t.add_row({std::move(label), format_duration(a), format_duration(b), signed_duration(delta(a, b)),
               change_percent(static_cast<double>(a), static_cast<double>(b))});
  };
  const auto count_row = [&](std::string label, std::uint64_t a, std::uint64_t b) {
    t.add_row({std::move(label), format_count(a), format_count(b), signed_count(delta(a, b)),
               change_percent(static_cast<double>(a), static_cast<double>(b))});
  };
  // A side without the data prints n/a, never 0: "no heap tracking" is not "no allocations".
  const auto bytes_row = [&](std::string label, std::optional<std::uint64_t> a, std::optional<std::uint64_t> b) {
    const bool both = a && b;
    t.add_row({std::move(label), a ? format_bytes(*a) : "n/a", b ? format_bytes(*b) : "n/a",
               both ? signed_bytes(delta(*a, *b)) : "n/a",
               both ? change_percent(static_cast<double>(*a), static_cast<double>(*b)) : "n/a"});
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
      t.add_row({"Heap allocations", c.a.heap_tracked ? format_count(c.a.heap_alloc_count) : "n/a",
                 c.b.heap_tracked ? format_count(c.b.heap_alloc_count) : "n/a", "n/a", "n/a"});
    }
    bytes_row("Heap peak", opt(c.a.heap_tracked, c.a.heap_peak_bytes), opt(c.b.heap_tracked, c.b.heap_peak_bytes));
  }
  if (c.a.has_memory_counters || c.b.has_memory_counters) {
    bytes_row("Allocated (memory counters)", opt(c.a.has_memory_counters, c.a.counter_alloc_bytes),
              opt(c.b.has_memory_counters, c.b.counter_alloc_bytes));
    bytes_row("Peak (memory counters)", opt(c.a.has_memory_counters, c.a.counter_peak_bytes),
              opt(c.b.has_memory_counters, c.b.counter_peak_bytes));
  }
  return t;
}

TextTable change_table(const std::vector<const ScopeChange*>& rows, bool with_note) {
  std::vector<TableColumn> columns = {{"Scope", Align::Left},       {"Calls A", Align::Right},
                                      {"Calls B", Align::Right},    {"Mean A", Align::Right},
                                      {"Mean B", Align::Right},     {"Ratio", Align::Right},
                                      {"Change", Align::Right},     {"Total delta", Align::Right},
                                      {"Test", Align::Left},        {"p", Align::Right},
                                      {"Verdict", Align::Left}};
  if (with_note) columns.push_back({"Note", Align::Left});
  TextTable t(std::move(columns));
  for (const ScopeChange* s : rows) {
    std::vector<std::string> cells = {capped_name(s->name),
                                      format_count(s->a.calls),
                                      format_count(s->b.calls),
                                      format_duration(s->a.mean_ns),
                                      format_duration(s->b.mean_ns),
                                      ratio_text(s->ratio),
                                      s->ratio > 0.0 ? fmt::format("{:+.1f}%", s->change * 100.0) : "n/a",
                                      signed_duration(s->total_delta_ns),
                                      test_label(s->test),
                                      p_text(*s),
                                      to_string(s->verdict)};
    if (with_note) cells.push_back(capped_name(s->note, kTextDisplayLimit));
    t.add_row(std::move(cells));
  }
  return t;
}

TextTable only_table(const std::vector<ScopeOnly>& rows) {
  TextTable t({{"Scope", Align::Left}, {"Calls", Align::Right}, {"Total", Align::Right}});
  for (const ScopeOnly& s : rows) t.add_row({capped_name(s.name), format_count(s.calls), format_duration(s.total_ns)});
  return t;
}

std::vector<const ScopeChange*> all_scopes(const Comparison& c, std::size_t n) {
  std::vector<const ScopeChange*> rows;
  for (const ScopeChange& s : c.scopes) {
    if (rows.size() == n) break;
    rows.push_back(&s);
  }
  return rows;
}

// One section of the report, the same in every human format.
struct Section {
  std::string title;
  std::string lead;  // a sentence before the table, or empty
  TextTable table;
  std::string empty;  // said instead of an empty table
};

std::vector<Section> sections(const Comparison& c, std::size_t scope_rows, bool with_note) {
  std::vector<Section> s;
  const auto regressions = c.top_regressions(kTop);
  const auto improvements = c.top_improvements(kTop);
  s.push_back({fmt::format("Top {} regressions", kTop),
               c.regressed > regressions.size()
                   ? fmt::format("{} of {} regressed scopes, by the time they added.", regressions.size(), c.regressed)
                   : std::string("By the time they added."),
               change_table(regressions, false), "No scope regressed."});
  s.push_back({fmt::format("Top {} improvements", kTop),
               c.improved > improvements.size()
                   ? fmt::format("{} of {} improved scopes, by the time they saved.", improvements.size(), c.improved)
                   : std::string("By the time they saved."),
               change_table(improvements, false), "No scope improved."});
  const auto rows = all_scopes(c, scope_rows);
  s.push_back({"All scopes in both runs",
               rows.size() < c.scopes.size()
                   ? fmt::format("The {} largest changes of total time of {} scopes (--format json lists all).",
                                 rows.size(), c.scopes.size())
                   : std::string("Matched by name; largest change of total time first. Ratio and change are of "
                                 "the mean time per call."),
               change_table(rows, with_note), "The runs have no scope in common."});
  s.push_back({"Only in A (removed)", "", only_table(c.removed), "None."});
  s.push_back({"Only in B (added)", "", only_table(c.added), "None."});
  return s;
}

// ---- HTML ---------------------------------------------------------------------------

constexpr std::string_view kStyle = R"CSS(
body{margin:0;background:#f4f6f9;color:#1c2330;font:14px/1.45 system-ui,-apple-system,"Segoe UI",Roboto,Arial,sans-serif}
.wrap{max-width:1320px;margin:0 auto;padding:12px 24px}
h1{font-size:22px;margin:8px 0}
h2{font-size:16px;margin:0 0 6px}
section{background:#fff;border:1px solid #e1e5eb;border-radius:10px;padding:16px 20px;margin:16px 0}
.runs{margin:0;color:#5f6b7a}.runs dt{font-weight:600;float:left;width:110px}.runs dd{margin:0 0 4px 110px;color:#1c2330}
.verdict{font-size:18px;font-weight:650;padding:10px 14px;border-radius:8px;margin:10px 0}
.v-regressed{background:#fde8e7;color:#b42318}.v-improved{background:#e5f6ea;color:#146c2e}
.v-stable{background:#eef1f5;color:#374151}.v-unreliable{background:#fff7e6;color:#7a5200}
.lead{margin:0 0 10px;color:#5f6b7a;font-size:13px}
.scroll{overflow-x:auto}
table{border-collapse:collapse;width:100%;font-size:13px;font-variant-numeric:tabular-nums}
th,td{padding:5px 9px;border-bottom:1px solid #eef1f5;text-align:left;white-space:nowrap}
th{background:#f7f8fa;font-weight:600}
th.num,td.num{text-align:right}
td.note{white-space:normal;color:#5f6b7a}
td.regressed{color:#b42318;font-weight:600}td.improved{color:#146c2e;font-weight:600}td.unreliable{color:#7a5200}
ul.notes li{margin:4px 0}
.empty{color:#5f6b7a;font-style:italic}
)CSS";

void html_table(std::string& out, const TextTable& table) {
  const auto& columns = table.columns();
  out += "<div class=\"scroll\"><table>\n<thead><tr>";
  for (const TableColumn& column : columns) {
    out += column.align == Align::Right ? "<th class=\"num\">" : "<th>";
    html::append_escaped(out, column.header);
    out += "</th>";
  }
  out += "</tr></thead>\n<tbody>\n";
  for (const auto& row : table.rows()) {
    out += "<tr>";
    for (std::size_t i = 0; i < row.size(); ++i) {
      std::string cls;
      if (columns[i].align == Align::Right) cls = "num";
      if (columns[i].header == "Verdict") cls = row[i];  // one of four fixed words
      if (columns[i].header == "Note") cls = "note";
      out += cls.empty() ? std::string("<td>") : fmt::format("<td class=\"{}\">", cls);
      html::append_escaped(out, row[i]);
      out += "</td>";
    }
    out += "</tr>\n";
  }
  out += "</tbody></table></div>\n";
}

// ---- JSON ---------------------------------------------------------------------------

using Json = nlohmann::ordered_json;

Json side_json(const CompareSide& s) {
  Json j = Json::object();
  j["calls"] = s.calls;
  j["total_ns"] = s.total_ns;
  j["self_ns"] = s.self_ns;
  j["mean_ns"] = s.mean_ns;
  j["stddev_ns"] = s.stddev_ns;
  j["median_ns"] = s.median_ns;
  j["spans"] = s.spans;
  return j;
}

Json run_json(const RunTotals& r) {
  Json j = Json::object();
  j["command_line"] = r.command_line;
  j["hostname"] = r.hostname;
  j["duration_ns"] = r.duration_ns;
  j["instrumented_ns"] = r.instrumented_ns;
  j["calls"] = r.calls;
  j["spans"] = r.spans;
  j["spans_enabled"] = r.spans_enabled;
  Json heap = nullptr;
  if (r.heap_tracked) {
    heap = Json::object();
    heap["alloc_bytes"] = r.heap_alloc_bytes;
    heap["alloc_count"] = r.heap_alloc_count;
    heap["peak_bytes"] = r.heap_peak_bytes;
  }
  j["heap"] = heap;
  Json counters = nullptr;
  if (r.has_memory_counters) {
    counters = Json::object();
    counters["alloc_bytes"] = r.counter_alloc_bytes;
    counters["alloc_count"] = r.counter_alloc_count;
    counters["peak_bytes"] = r.counter_peak_bytes;
  }
  j["memory_counters"] = counters;
  return j;
}

// A ratio that does not exist (0 in the model) is null, not 0: 0 would read as infinitely fast.
Json ratio_json(double ratio) { return ratio > 0.0 && std::isfinite(ratio) ? Json(ratio) : Json(nullptr); }

Json names(const std::vector<const ScopeChange*>& rows) {
  Json j = Json::array();
  for (const ScopeChange* s : rows) j.push_back(s->name);
  return j;
}

Json only_json(const std::vector<ScopeOnly>& rows) {
  Json j = Json::array();
  for (const ScopeOnly& s : rows) j.push_back({{"name", s.name}, {"calls", s.calls}, {"total_ns", s.total_ns}});
  return j;
}

void check(std::ostream& out) {
  if (!out) throw Error("could not write the comparison: the output stream failed (disk full, or a closed pipe?)");
}

}  // namespace

void write_comparison_text(const Comparison& c, std::ostream& out) {
  out << "nnprof comparison\n=================\n";
  out << "  A (baseline): " << plain_text(run_line(c.a)) << '\n';
  out << "  B:            " << plain_text(run_line(c.b)) << '\n';
  write_text_heading(out, "Summary");
  summary_table(c).write(out);
  out << '\n';
  for (const std::string& line : {speedup_sentence(c), geomean_sentence(c), verdict_sentence(c)})
    out << "  " << plain_text(line) << '\n';
  for (const Section& s : sections(c, kTextScopes, false)) {
    write_text_heading(out, s.title);
    if (s.table.empty()) {
      out << "  " << plain_text(s.empty) << '\n';
      continue;
    }
    if (!s.lead.empty()) out << "  " << plain_text(s.lead) << '\n';
    s.table.write(out);
  }
  write_text_heading(out, "Method and notes");
  out << "  " << method_sentence(c) << '\n';
  for (const std::string& note : c.notes) out << "  - " << plain_text(capped_name(note, kTextDisplayLimit)) << '\n';
  // The tables above have no room for per-scope notes: say here why a figure has the verdict
  // it has. Scopes with too few calls are many and alike, so they are named in one line.
  std::vector<std::string> too_few;
  for (const ScopeChange& s : c.scopes) {
    if (s.note.empty()) continue;
    if (s.test == CompareTest::None && s.note.starts_with("too few calls")) {
      too_few.push_back(plain_text(capped_name(s.name)));
    } else {
      out << "  - " << plain_text(capped_name(s.name)) << ": " << plain_text(capped_name(s.note, kTextDisplayLimit))
          << '\n';
    }
  }
  if (!too_few.empty()) {
    std::string names;
    for (const std::string& name : too_few) names += (names.empty() ? "" : ", ") + name;
    out << fmt::format("  - Too few calls for a verdict (fewer than {} in a run): {}\n", c.options.min_calls, names);
  }
  out.flush();
  check(out);
}

void write_comparison_markdown(const Comparison& c, std::ostream& out) {
  out << "# nnprof comparison\n\n";
  out << "- **A (baseline):** " << markdown_escape(run_line(c.a)) << '\n';
  out << "- **B:** " << markdown_escape(run_line(c.b)) << '\n';
  out << "\n## Summary\n\n";
  write_markdown_table(summary_table(c), out);
  out << "\n**" << markdown_escape(verdict_sentence(c)) << "**\n\n";
  out << "- " << markdown_escape(speedup_sentence(c)) << '\n';
  out << "- " << markdown_escape(geomean_sentence(c)) << '\n';
  for (const Section& s : sections(c, c.scopes.size(), true)) {
    out << "\n## " << markdown_escape(s.title) << "\n\n";
    if (s.table.empty()) {
      out << s.empty << '\n';
      continue;
    }
    if (!s.lead.empty()) out << markdown_escape(s.lead) << "\n\n";
    write_markdown_table(s.table, out);
  }
  out << "\n## Method and notes\n\n" << markdown_escape(method_sentence(c)) << '\n';
  if (!c.notes.empty()) out << '\n';
  for (const std::string& note : c.notes) out << "- " << markdown_escape(capped_name(note, kTextDisplayLimit)) << '\n';
  out.flush();
  check(out);
}

void write_comparison_html(const Comparison& c, std::ostream& out) {
  std::string h;
  h +=
      "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
      "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n"
      // Nothing may be fetched: the page must open the same offline, in CI artefacts, anywhere.
      "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; style-src 'unsafe-inline'\">\n"
      "<meta name=\"generator\" content=\"nnprof\">\n<title>nnprof comparison</title>\n<style>";
  h += kStyle;
  h += "</style>\n</head>\n<body>\n<div class=\"wrap\">\n<h1>nnprof comparison</h1>\n<dl class=\"runs\">";
  html::append(h, "<dt>A (baseline)</dt><dd><code>{}</code></dd>", html::escape(run_line(c.a)));
  html::append(h, "<dt>B</dt><dd><code>{}</code></dd></dl>\n", html::escape(run_line(c.b)));
  html::append(h, "<div class=\"verdict v-{}\">{}</div>\n", to_string(c.verdict), html::escape(verdict_sentence(c)));
  h += "<section id=\"summary\"><h2>Summary</h2>\n";
  html_table(h, summary_table(c));
  html::append(h, "<p>{}</p>\n<p>{}</p>\n</section>\n", html::escape(speedup_sentence(c)),
               html::escape(geomean_sentence(c)));
  for (const Section& s : sections(c, c.scopes.size(), true)) {
    h += "<section>\n<h2>";
    html::append_escaped(h, s.title);
    h += "</h2>\n";
    if (s.table.empty()) {
      html::append(h, "<p class=\"empty\">{}</p>\n</section>\n", html::escape(s.empty));
      continue;
    }
    if (!s.lead.empty()) html::append(h, "<p class=\"lead\">{}</p>\n", html::escape(s.lead));
    html_table(h, s.table);
    h += "</section>\n";
  }
  html::append(h, "<section id=\"method\"><h2>Method and notes</h2>\n<p>{}</p>\n", html::escape(method_sentence(c)));
  if (!c.notes.empty()) {
    h += "<ul class=\"notes\">\n";
    for (const std::string& note : c.notes)
      html::append(h, "<li>{}</li>\n", html::escape(capped_name(note, kTextDisplayLimit)));
    h += "</ul>\n";
  }
  h += "</section>\n</div>\n</body>\n</html>\n";
  out << h;
  out.flush();
  check(out);
}

void write_comparison_json(const Comparison& c, std::ostream& out) {
  Json j = Json::object();
  j["schema"] = kComparisonSchemaName;
  j["schema_version"] = kComparisonSchemaVersion;
  j["options"] = {{"alpha", c.options.alpha}, {"min_calls", c.options.min_calls}, {"min_change", c.options.min_change}};
  j["a"] = run_json(c.a);
  j["b"] = run_json(c.b);
  Json s = Json::object();
  s["verdict"] = to_string(c.verdict);
  s["runtime_basis"] = c.runtime_basis;
  s["runtime_a_ns"] = c.runtime_a_ns;
  s["runtime_b_ns"] = c.runtime_b_ns;
  s["runtime_delta_ns"] = delta(c.runtime_a_ns, c.runtime_b_ns);
  s["speedup"] = ratio_json(c.speedup);
  s["geomean_ratio"] = ratio_json(c.geomean_ratio);
  s["geomean_scopes"] = c.geomean_scopes;
  s["improved"] = c.improved;
  s["regressed"] = c.regressed;
  s["stable"] = c.stable;
  s["unreliable"] = c.unreliable;
  j["summary"] = s;
  j["top_regressions"] = names(c.top_regressions(kTop));
  j["top_improvements"] = names(c.top_improvements(kTop));
  Json scopes = Json::array();
  for (const ScopeChange& sc : c.scopes) {
    Json e = Json::object();
    e["name"] = sc.name;
    e["a"] = side_json(sc.a);
    e["b"] = side_json(sc.b);
    e["ratio"] = ratio_json(sc.ratio);
    e["change"] = sc.ratio > 0.0 ? Json(sc.change) : Json(nullptr);
    e["total_delta_ns"] = sc.total_delta_ns;
    e["test"] = to_string(sc.test);
    e["p_value"] = sc.test == CompareTest::None ? Json(nullptr) : Json(sc.p_value);
    e["prob_b_slower"] = sc.test == CompareTest::MannWhitney ? Json(sc.prob_b_slower) : Json(nullptr);
    e["verdict"] = to_string(sc.verdict);
    e["note"] = sc.note;
    scopes.push_back(std::move(e));
  }
  j["scopes"] = std::move(scopes);
  j["removed"] = only_json(c.removed);
  j["added"] = only_json(c.added);
  j["notes"] = c.notes;
  out << j.dump(2, ' ', false, Json::error_handler_t::replace) << '\n';
  out.flush();
  check(out);
}

}  // namespace nnprof::io
