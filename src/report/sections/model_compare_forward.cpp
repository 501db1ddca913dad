// Where a forward pass spends its time: per part, the time per pass, its shares of the forward
// passes' time and declared FLOPs, and its growth per pass against the baseline. Components
// are the children of forward (inclusive time); operations every scope inside it (own time).
#include <algorithm>
#include <string>
#include <string_view>

#include <fmt/format.h>

#include "report/format.hpp"
#include "report/cells.hpp"
#include "report/model_comparison_sections.hpp"

namespace nnprof::report::sections {
namespace {

const ForwardPart* find_part(const std::vector<ForwardPart>& parts, const std::string& name) {
  for (const ForwardPart& p : parts)
    if (p.name == name) return &p;
  return nullptr;
}

double per_pass(const ModelRun& m, const ForwardPart& p) {
  return static_cast<double>(p.time_ns) / static_cast<double>(m.forward_calls);
}

// Rows in the order of the largest model that ran a forward pass.
Table forward_table(const ModelComparison& c, std::string id, std::vector<ForwardPart> ModelRun::*parts) {
  Table t;
  t.id = std::move(id);
  t.columns.push_back({"Part", Align::Left, "part"});
  for (const ModelRun& m : c.models) {
    t.columns.push_back({m.info.name + " per pass", Align::Right, {}});
    t.columns.push_back({m.info.name + " % time", Align::Right, {}});
    t.columns.push_back({m.info.name + " % FLOPs", Align::Right, {}});
  }
  for (const ModelRatio& r : c.ratios)
    t.columns.push_back({fmt::format("Ratio ({})", model_cells::ratio_header(r)), Align::Right, {}});
  std::vector<std::string> names;
  for (auto m = c.models.rbegin(); m != c.models.rend(); ++m)
    for (const ForwardPart& p : (*m).*parts)
      if (std::find(names.begin(), names.end(), p.name) == names.end()) names.push_back(p.name);
  const ModelRun& baseline = c.baseline();
  for (const std::string& name : names) {
    std::vector<Cell> cells = {name_cell(name)};
    for (const ModelRun& m : c.models) {
      const ForwardPart* p = m.forward_calls > 0 ? find_part(m.*parts, name) : nullptr;
      if (p == nullptr) {
        cells.insert(cells.end(), {Cell::words("-"), Cell::words("-"), Cell::words("-")});
        continue;
      }
      cells.push_back(duration_cell(per_pass(m, *p)));
      cells.push_back(Cell::share(report::format_percent(p->time_share), p->time_share));
      cells.push_back(p->flops_share ? Cell::share(report::format_percent(*p->flops_share), *p->flops_share)
                                     : Cell::words("n/a"));
    }
    for (const ModelRatio& r : c.ratios) {
      const ModelRun* m = nullptr;
      for (const ModelRun& run : c.models)
        if (run.info.name == r.model) m = &run;
      const ForwardPart* pm = m != nullptr && m->forward_calls > 0 ? find_part(m->*parts, name) : nullptr;
      const ForwardPart* pb = baseline.forward_calls > 0 ? find_part(baseline.*parts, name) : nullptr;
      if (pm != nullptr && pb != nullptr && pb->time_ns > 0) {
        const double ratio = per_pass(*m, *pm) / per_pass(baseline, *pb);
        cells.push_back(Cell::number(report::format_ratio(ratio, "×"), ratio));
      } else {
        cells.push_back(Cell::words("n/a"));
      }
    }
    t.row(std::move(cells));
  }
  return t;
}

}  // namespace

void model_compare_forward(const ModelComparison& c, std::vector<Section>& out) {
  if (std::none_of(c.models.begin(), c.models.end(), [](const ModelRun& m) { return m.forward_calls > 0; })) return;
  Section section{"forward", "Forward Pass Analysis", {}};
  section.say(Sentence().words(
      "Time per forward pass of each part (ratios: time per pass against the baseline's), with its share of the "
      "forward passes' time and declared FLOPs."));
  section.subheading("Forward pass: components (children of forward, inclusive time)");
  section.add(forward_table(c, "forward-components", &ModelRun::components));
  section.subheading("Forward pass: operations (own time of every scope inside forward)");
  section.add(forward_table(c, "forward-operations", &ModelRun::operations));
  out.push_back(std::move(section));
}

}  // namespace nnprof::report::sections
