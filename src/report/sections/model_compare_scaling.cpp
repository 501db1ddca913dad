// How time grows with size: each model's work and time ratios to the baseline, the efficiency
// they give, and the verdict with the sentence that explains it.
#include <optional>
#include <string>

#include <fmt/format.h>

#include "report/format.hpp"
#include "report/cells.hpp"
#include "report/model_comparison_sections.hpp"

namespace nnprof::report::sections {
namespace {

using model_cells::verdict_label;

// The efficiency the verdict rests on.
std::optional<double> judged_efficiency(const ModelRatio& r) {
  return r.basis == "parameters" ? r.efficiency_parameters : r.efficiency_flops;
}

// A mark that says the verdict at a glance.
const char* verdict_mark(ScalingVerdict v) {
  switch (v) {
    case ScalingVerdict::Linear: return "✅";
    case ScalingVerdict::SubLinear: return "⚠️";
    case ScalingVerdict::Poor: return "❌";
    case ScalingVerdict::Unknown: break;
  }
  return "❔";
}

Cell efficiency(const std::optional<double>& e) {
  return e ? Cell::number(report::format_ratio(*e, ""), *e) : Cell::words("n/a");
}

}  // namespace

void model_compare_scaling(const ModelComparison& c, std::vector<Section>& out) {
  if (c.ratios.empty()) return;
  Section section{"scaling", "Scaling Efficiency", {}};
  section.say(Sentence()
                  .words("Efficiency is the work ratio over the time-per-token ratio: FLOPs per token where kernels "
                         "declared them, else parameters. At least ")
                  .ratio(kLinearScaling, "")
                  .words(" is linear or better, ")
                  .ratio(kSubLinearScaling, "")
                  .words(" to ")
                  .ratio(kLinearScaling, "")
                  .words(" sub-linear, below ")
                  .ratio(kSubLinearScaling, "")
                  .words(" poor."));
  Table t;
  t.id = "model-scaling";
  t.columns = {{"Model", Align::Left, "model"},
               {"Baseline", Align::Left, "baseline"},
               {"Parameter ratio", Align::Right, "parameters"},
               {"FLOPs/token ratio", Align::Right, "flops_per_token"},
               {"Time/token ratio", Align::Right, "time_per_token"},
               {"Efficiency (FLOPs)", Align::Right, "efficiency_flops"},
               {"Efficiency (parameters)", Align::Right, "efficiency_parameters"},
               {"Verdict", Align::Left, "verdict"}};
  for (const ModelRatio& r : c.ratios) {
    t.row({name_cell(r.model), name_cell(r.baseline), model_cells::ratio(r.parameters),
           model_cells::ratio(r.flops_per_token), model_cells::ratio(r.time_per_token), efficiency(r.efficiency_flops),
           efficiency(r.efficiency_parameters),
           Cell::words(r.basis.empty() ? std::string(verdict_label(r.verdict))
                                       : fmt::format("{} (by {})", verdict_label(r.verdict), r.basis))});
  }
  section.add(std::move(t));
  // Each model against the baseline: the efficiency judged, the verdict and its reason.
  for (const ModelRatio& r : c.ratios) {
    std::string heading = r.model + " vs " + r.baseline;
    if (const std::optional<double> e = judged_efficiency(r)) heading += fmt::format(": {} by {}", report::format_ratio(*e, ""), r.basis);
    section.subheading(std::move(heading));
    section.say(Sentence().words(fmt::format("{} {}. ", verdict_mark(r.verdict), verdict_label(r.verdict))).words(r.reason));
  }
  out.push_back(std::move(section));
}

}  // namespace nnprof::report::sections
