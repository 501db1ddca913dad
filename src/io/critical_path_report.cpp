#include "io/critical_path_report.hpp"

#include <algorithm>
#include <optional>
#include <ostream>
#include <string_view>
#include <vector>

#include <fmt/format.h>

#include "analysis/critical_path.hpp"
#include "analysis/memory_findings.hpp"
#include "io/html_escape.hpp"
#include "io/markdown_report.hpp"
#include "io/sentence_markup.hpp"

namespace nnprof::io {

namespace {

// Steps and scopes shown: a path of thousands of steps is read by its longest ones.
constexpr std::size_t kTextScopes = 10, kTextSteps = 15;
constexpr std::size_t kDocumentScopes = 15, kDocumentSteps = 30;

std::string step_label(const Profile& p, const CriticalPathStep& s) {
  return analysis::critical_step_label(p, s.kind, s.name);
}

std::string steps_note(const CriticalPath& path, std::size_t shown) {
  if (path.steps.size() <= shown) return "Steps in time order:";
  return fmt::format("The {} longest of {} steps, in time order:", shown, path.steps.size());
}

std::string strong(std::string_view name) { return fmt::format("**{}**", markdown_escape(name)); }
std::string code_span(std::string_view code) { return fmt::format("`{}`", code); }
const Markup kMarkdown{markdown_escape, strong, code_span, unmarked};

std::string html_code(std::string_view text) { return fmt::format("<code>{}</code>", html::escape(text)); }
std::string html_bold(std::string_view marked_up) { return fmt::format("<b>{}</b>", marked_up); }
const Markup kHtml{html::escape, html_code, html_code, html_bold};

void append_html_table(const TextTable& table, std::string_view id, std::string& out) {
  out += fmt::format("<div class=\"scroll\"><table id=\"{}\"><thead><tr>", id);
  for (const TableColumn& c : table.columns())
    out += fmt::format("<th{}>{}</th>", c.align == Align::Right ? " class=\"num\"" : "", html::escape(c.header));
  out += "</tr></thead><tbody>\n";
  for (const auto& row : table.rows()) {
    out += "<tr>";
    for (std::size_t i = 0; i < row.size(); ++i)
      out += fmt::format("<td{}>{}</td>", table.columns()[i].align == Align::Right ? " class=\"num\"" : "",
                         html::escape(row[i]));
    out += "</tr>\n";
  }
  out += "</tbody></table></div>";
}

}  // namespace

TextTable critical_path_scopes_table(const Profile& profile, const CriticalPath& path, std::size_t max_rows,
                                     Headers headers) {
  const bool doc = headers == Headers::Document;
  TextTable table({{"#", Align::Right},
                   {"Scope", Align::Left},
                   {doc ? "Time on the path" : "On path", Align::Right},
                   {doc ? "% of the path" : "% path", Align::Right},
                   {"Steps", Align::Right},
                   {"Threads", Align::Right}});
  for (std::size_t i = 0; i < path.by_scope.size() && i < max_rows; ++i) {
    const CriticalPathScope& e = path.by_scope[i];
    table.add_row({std::to_string(i + 1), analysis::critical_step_label(profile, e.kind, e.name),
                   format_duration(e.duration_ns), format_percent(e.share), format_count(e.steps),
                   format_count(e.threads)});
  }
  return table;
}

TextTable critical_path_steps_table(const Profile& profile, const CriticalPath& path, std::size_t max_rows,
                                    Headers headers) {
  const bool doc = headers == Headers::Document;
  std::vector<std::size_t> shown(path.steps.size());
  for (std::size_t i = 0; i < shown.size(); ++i) shown[i] = i;
  if (shown.size() > max_rows) {
    std::stable_sort(shown.begin(), shown.end(), [&](std::size_t a, std::size_t b) {
      return path.steps[a].duration_ns() > path.steps[b].duration_ns();
    });
    shown.resize(max_rows);
    std::sort(shown.begin(), shown.end());
  }
  TextTable table({{"#", Align::Right},
                   {doc ? "Start (since session start)" : "Start", Align::Right},
                   {"Step", Align::Left},
                   {"Thread", Align::Left},
                   {"Duration", Align::Right},
                   {doc ? "% of the path" : "% path", Align::Right}});
  for (const std::size_t i : shown) {
    const CriticalPathStep& s = path.steps[i];
    table.add_row({std::to_string(i + 1), format_duration(s.start_ns), step_label(profile, s),
                   analysis::thread_label(profile, s.thread), format_duration(s.duration_ns()),
                   format_percent(s.share)});
  }
  return table;
}

void write_critical_path_text(const Profile& profile, std::ostream& out) {
  write_critical_path_text(profile, critical_path(profile), out);
}

void write_critical_path_text(const Profile& whole, const CriticalPath& path, std::ostream& out) {
  std::optional<Profile> storage;
  const Profile& profile = with_capped_names(whole, storage);
  const std::string_view title = "Critical path";
  out << '\n' << title << '\n' << std::string(title.size(), '-') << '\n';
  out << "  " << render(profile, analysis::critical_path_summary(profile, path)) << '\n';
  if (path.empty()) return;
  out << "\n  Time on the path by scope (waits on another thread count as that thread's work):\n";
  critical_path_scopes_table(profile, path, kTextScopes, Headers::Terminal).write(out);
  out << "\n  " << steps_note(path, kTextSteps) << '\n';
  critical_path_steps_table(profile, path, kTextSteps, Headers::Terminal).write(out);
}

void write_critical_path_markdown(const Profile& profile, std::ostream& out) {
  const CriticalPath path = critical_path(profile);
  out << "\n## Critical path\n\n" << render(profile, analysis::critical_path_summary(profile, path), kMarkdown)
      << '\n';
  if (path.empty()) return;
  out << "\nTime on the path by scope (waits on another thread count as that thread's work):\n\n";
  write_markdown_table(critical_path_scopes_table(profile, path, kDocumentScopes, Headers::Document), out);
  out << '\n' << steps_note(path, kDocumentSteps) << "\n\n";
  write_markdown_table(critical_path_steps_table(profile, path, kDocumentSteps, Headers::Document), out);
}

void write_critical_path_html(const Profile& profile, std::string& out) {
  const CriticalPath path = critical_path(profile);
  out += "<section id=\"critical-path\"><h2>Critical path</h2>";
  out += fmt::format("<p class=\"lead\">{}</p>", render(profile, analysis::critical_path_summary(profile, path), kHtml));
  if (!path.empty()) {
    out += "<h3>Time on the path by scope</h3><p>Waits on another thread count as that thread's work.</p>";
    append_html_table(critical_path_scopes_table(profile, path, kDocumentScopes, Headers::Document),
                      "critical-path-scopes", out);
    out += fmt::format("<h3>Steps</h3><p>{}</p>", html::escape(steps_note(path, kDocumentSteps)));
    append_html_table(critical_path_steps_table(profile, path, kDocumentSteps, Headers::Document),
                      "critical-path-steps", out);
  }
  out += "</section>\n";
}

nlohmann::ordered_json critical_path_json(const Profile& profile, const CriticalPath& path) {
  using Json = nlohmann::ordered_json;
  Json j = Json::object();
  j["root"] = path.root == kNone ? Json(nullptr) : Json(profile.str(path.root));
  j["start_ns"] = path.start_ns;
  j["end_ns"] = path.end_ns;
  j["duration_ns"] = path.duration_ns();
  j["threads"] = path.threads;
  j["flows_followed"] = path.flows_followed;
  j["flows"] = profile.flows.size();
  Json scopes = Json::array();
  for (const CriticalPathScope& e : path.by_scope)
    scopes.push_back(Json{{"kind", to_string(e.kind)},
                          {"name", e.kind == CriticalStepKind::Scope ? Json(profile.str(e.name)) : Json(nullptr)},
                          {"duration_ns", e.duration_ns},
                          {"share", e.share},
                          {"steps", e.steps},
                          {"threads", e.threads}});
  j["by_scope"] = std::move(scopes);
  Json steps = Json::array();
  for (const CriticalPathStep& s : path.steps)
    steps.push_back(Json{{"kind", to_string(s.kind)},
                         {"name", s.kind == CriticalStepKind::Scope ? Json(profile.str(s.name)) : Json(nullptr)},
                         {"path", s.kind == CriticalStepKind::Scope ? Json(profile.node_path(s.node)) : Json(nullptr)},
                         {"thread", s.thread},
                         {"start_ns", s.start_ns},
                         {"duration_ns", s.duration_ns()},
                         {"share", s.share}});
  j["steps"] = std::move(steps);
  return j;
}

}  // namespace nnprof::io
