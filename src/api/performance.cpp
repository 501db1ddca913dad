// Roofline verdicts from the compute analysis, and several profiles analysed together.
#include "nnprof/performance.hpp"

#include <algorithm>
#include <ostream>
#include <utility>

#include <fmt/format.h>

#include "analysis/compute.hpp"
#include "io/output_file.hpp"
#include "nnprof/error.hpp"
#include "nnprof/report.hpp"
#include "render/render.hpp"
#include "report/documents.hpp"
#include "report/report_data.hpp"

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

// The combined order of action as a Recommendations block: the titles name their profile.
report::Section combined_recommendations(const std::vector<Recommendation>& combined) {
  report::Section section{"combined-recommendations", "Recommendations, in order of action", {}};
  section.say(report::Sentence().words(
      "The recommendations of every profile in one order: the largest expected gain of its own run first "
      "(Amdahl's law from the part's share of that run's time)."));
  report::Recommendations block;
  block.none = report::Sentence().words("No profile had a recommendation.");
  for (const Recommendation& r : combined) {
    report::Recommendation item;
    item.title = report::Sentence().words(r.title);
    if (r.expected_speedup > 0.0) {
      item.gain = report::Sentence().words("expected ").ratio(r.expected_speedup, "×").words(" for its run");
    } else if (r.max_speedup > 1.0) {
      item.gain = report::Sentence().words("gain unknown; at most ").ratio(r.max_speedup, "×");
    } else {
      item.gain = report::Sentence().words("saves memory, not time");
    }
    item.evidence = report::Sentence().words(r.evidence);
    for (const std::string& step : r.steps) item.steps.push_back(report::Sentence().words(step));
    block.items.push_back(std::move(item));
  }
  section.add(std::move(block));
  return section;
}

}  // namespace

void PerformanceAnalysis::generate_report(const std::string& path) const {
  if (!analyzed_) throw Error(fmt::format("cannot write '{}': call analyze() after the last add_profile()", path));
  const FormatInfo* format = find_format_for_path(path, Document::Profile);
  using Render = void (*)(const report::Document&, std::ostream&);
  Render render = nullptr;
  if (format != nullptr && format->format == ReportFormat::Html) render = render::write_html;
  if (format != nullptr && format->format == ReportFormat::Markdown) render = render::write_markdown;
  if (format != nullptr && format->format == ReportFormat::Text) render = render::write_text;
  if (render == nullptr)
    throw Error(fmt::format("cannot write '{}': the combined report is HTML (.html), Markdown (.md) or text (.txt)", path));

  // One document: the combined order of action, then each profile's own report, its sections
  // named after the profile (the same section files as `nnprof report`, so nothing is said
  // differently here).
  report::Document page;
  page.title = "nnprof performance analysis";
  std::string labels;
  for (const auto& [label, profile] : profiles_) labels += (labels.empty() ? "" : ", ") + label;
  page.subtitle = fmt::format("{} profiles: {}", profiles_.size(), labels);
  for (const auto& [label, profile] : profiles_) {
    report::Fact fact;
    fact.label = label;
    fact.value = report::Sentence().duration(profile.meta.duration_ns).words(", ").name(profile.meta.command_line);
    page.about.items.push_back(std::move(fact));
  }
  page.sections.push_back(combined_recommendations(combined_));
  for (std::size_t i = 0; i < profiles_.size(); ++i) {
    const auto& [label, profile] = profiles_[i];
    const report::ReportData data = report::analyse(profile);
    for (report::Section& s :
         report::sections_to_combine(report::profile_document(data), fmt::format("p{}-", i + 1), label + ": "))
      page.sections.push_back(std::move(s));
  }
  io::write_file_atomically(path, [&](std::ostream& out) { render(page, out); });
}

}  // namespace nnprof
