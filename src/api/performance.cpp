// Roofline verdicts from the compute analysis, and several profiles analysed together.
#include "nnprof/performance.hpp"

#include <algorithm>
#include <ostream>
#include <utility>

#include <fmt/format.h>

#include "analysis/compute.hpp"
#include "io/output_file.hpp"
#include "nnprof/error.hpp"
#include "report/html_escape.hpp"

namespace nnprof {

std::vector<RooflineVerdict> roofline_verdicts(const Profile& profile) {
  std::vector<RooflineVerdict> out;
  const double instrumented = static_cast<double>(profile.instrumented_ns());
  for (const analysis::ScopeCompute& c : analysis::compute_scopes(profile)) {
    // As the bottleneck analysis: a wrapper's work is judged in the scopes that did it.
    if (!c.roofline || c.own_flops_share < analysis::kOwnWorkShare) continue;
    const RooflinePoint& p = *c.roofline;
    RooflineVerdict v;
    v.operation = profile.str(c.scope->name);
    v.limitation = p.bound == RooflineBound::Memory ? "memory" : "compute";
    v.utilization = p.fraction;
    v.intensity = p.intensity;
    v.attained_flops = p.attained;
    v.attainable_flops = p.attainable;
    v.one_core = c.one_core;
    v.time_share = instrumented > 0.0 ? static_cast<double>(c.scope->total_ns) / instrumented : 0.0;
    out.push_back(std::move(v));
  }
  return out;
}

PerformanceAnalysis& PerformanceAnalysis::add_profile(Profile profile, std::string label) {
  if (label.empty()) label = fmt::format("profile {}", profiles_.size() + 1);
  profiles_.emplace_back(std::move(label), std::move(profile));
  analyzed_ = false;
  return *this;
}

PerformanceAnalysis& PerformanceAnalysis::analyze() {
  if (profiles_.empty()) throw Error("nothing to analyse: add_profile() at least one profile first");
  results_.clear();
  combined_.clear();
  for (const auto& [label, profile] : profiles_) {
    ProfileAnalysis a;
    a.label = label;
    a.duration_ns = profile.meta.duration_ns;
    a.bottlenecks = analyze_bottlenecks(profile);
    a.recommendations = recommend(profile);
    a.roofline = roofline_verdicts(profile);
    a.hot_functions = function_stats(profile);
    if (a.hot_functions.size() > 10) a.hot_functions.resize(10);
    a.memory = memory_report(profile);
    for (Recommendation r : a.recommendations) {
      r.title = fmt::format("{}: {}", label, r.title);
      combined_.push_back(std::move(r));
    }
    results_.push_back(std::move(a));
  }
  // The advisor's ranking (analysis/advisor.cpp): expected gain, or half the limit when unknown.
  const auto rank = [](const Recommendation& r) {
    return r.part_speedup > 0.0 ? r.expected_speedup : amdahl_speedup(r.time_share, 2.0);
  };
  std::stable_sort(combined_.begin(), combined_.end(),
                   [&](const Recommendation& a, const Recommendation& b) { return rank(a) > rank(b); });
  for (std::size_t i = 0; i < combined_.size(); ++i) combined_[i].priority = static_cast<std::uint32_t>(i + 1);
  analyzed_ = true;
  return *this;
}

namespace {

std::string esc(std::string_view text) { return report::html::escape(text); }

void write_page(std::ostream& out, const std::vector<ProfileAnalysis>& results, const std::vector<Recommendation>& combined) {
  out << "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
         "<title>nnprof performance analysis</title>\n<style>\n"
         "body{font-family:system-ui,sans-serif;margin:2em;max-width:70em;color:#222}"
         "table{border-collapse:collapse;margin:.5em 0}td,th{border:1px solid #ccc;padding:.25em .6em;text-align:left}"
         "th{background:#f3f3f3}td.num{text-align:right}\n</style>\n</head>\n<body>\n"
         "<h1>nnprof performance analysis</h1>\n";
  out << fmt::format("<p>{} profiles analysed together:", results.size());
  for (const ProfileAnalysis& a : results)
    out << fmt::format(" <a href=\"#p-{}\">{}</a>", &a - results.data(), esc(a.label));
  out << ".</p>\n<h2>Recommendations, in order of action</h2>\n";
  if (combined.empty()) {
    out << "<p>No profile had a recommendation.</p>\n";
  } else {
    out << "<table><thead><tr><th>Priority</th><th>Recommendation</th><th>Expected speedup</th><th>Steps</th></tr>"
           "</thead><tbody>\n";
    for (const Recommendation& r : combined) {
      std::string steps;
      for (const std::string& s : r.steps) steps += "<li>" + esc(s) + "</li>";
      out << fmt::format("<tr><td class=\"num\">{}</td><td>{}<br><small>{}</small></td><td class=\"num\">{}</td>"
                         "<td><ol>{}</ol></td></tr>\n",
                         r.priority, esc(r.title), esc(r.evidence),
                         r.expected_speedup > 0.0 ? fmt::format("{:.2f}x", r.expected_speedup) : std::string("unknown"),
                         steps);
    }
    out << "</tbody></table>\n";
  }
  for (const ProfileAnalysis& a : results) {
    out << fmt::format("<h2 id=\"p-{}\">{}</h2>\n<p>Recorded for {:.3f} ms.</p>\n", &a - results.data(), esc(a.label),
                       static_cast<double>(a.duration_ns) / 1e6);
    out << "<h3>Bottlenecks</h3>\n";
    if (a.bottlenecks.empty()) out << "<p>None found.</p>\n";
    for (const Bottleneck& b : a.bottlenecks)
      out << fmt::format("<p><b>[{}] {}</b> {}: {} <i>{}</i></p>\n", to_string(b.severity), to_string(b.type),
                         esc(b.name), esc(b.description), esc(b.suggestion));
    if (!a.roofline.empty()) {
      out << "<h3>Roofline</h3>\n<table><thead><tr><th>Operation</th><th>Bound</th><th>Of the roof</th>"
             "<th>FLOP/byte</th></tr></thead><tbody>\n";
      for (const RooflineVerdict& v : a.roofline)
        out << fmt::format("<tr><td>{}</td><td>{}</td><td class=\"num\">{:.1f}%</td><td class=\"num\">{:.3g}</td></tr>\n",
                           esc(v.operation), v.limitation, v.utilization * 100.0, v.intensity);
      out << "</tbody></table>\n";
    }
    if (!a.hot_functions.empty()) {
      out << "<h3>Hot functions (CPU samples)</h3>\n<table><thead><tr><th>Function</th><th>Self</th><th>Total</th>"
             "</tr></thead><tbody>\n";
      for (const FunctionStats& f : a.hot_functions)
        out << fmt::format("<tr><td>{}</td><td class=\"num\">{:.1f}%</td><td class=\"num\">{:.1f}%</td></tr>\n",
                           esc(f.name), f.self_percentage, f.percentage);
      out << "</tbody></table>\n";
    }
    if (a.memory.num_allocations > 0)
      out << fmt::format("<h3>Heap</h3>\n<p>Peak {:.2f} MiB; {} allocations, the largest {:.2f} MiB; {:.2f} MiB still "
                         "allocated at the end.</p>\n",
                         a.memory.peak_mb, a.memory.num_allocations, a.memory.largest_allocation_mb,
                         static_cast<double>(a.memory.current_bytes) / (1024.0 * 1024.0));
  }
  out << "</body>\n</html>\n";
}

}  // namespace

void PerformanceAnalysis::generate_report(const std::string& path) const {
  if (!analyzed_) throw Error(fmt::format("cannot write '{}': call analyze() after the last add_profile()", path));
  io::write_file_atomically(path, [&](std::ostream& out) { write_page(out, results_, combined_); });
}

}  // namespace nnprof
