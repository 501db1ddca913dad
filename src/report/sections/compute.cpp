// Scopes with declared work (FLOPs, bytes): the rates they reached and, with the machine's
// peaks, where they sit under its roofs.
#include <string>

#include "analysis/compute.hpp"
#include "report/format.hpp"
#include "report/cells.hpp"
#include "report/charts/roofline_svg.hpp"
#include "report/sections.hpp"

namespace nnprof::report::sections {
namespace {

// "-": nothing was declared to compute the rate from, which 0 would not say.
Cell none() { return Cell::number("-", 0.0); }

Cell si_cell(double value, std::string_view unit) { return Cell::number(report::format_si(value, unit), value); }

Table compute_table(const ReportData& data) {
  const Profile& profile = *data.profile;
  Table table;
  table.id = "compute-table";
  table.columns = {{"Scope", Align::Left, "scope"},     {"Calls", Align::Right, "calls"},
                   {"Total", Align::Right, "total"},    {"FLOPs", Align::Right, "flops"},
                   {"FLOP/s", Align::Right, "flop-rate"}, {"Bytes/s", Align::Right, "byte-rate"},
                   {"FLOPs per byte", Align::Right, "intensity"}};
  const bool roofs = analysis::machine_known(profile);
  if (roofs) {
    table.columns.push_back({"Bound", Align::Left, "bound"});
    table.columns.push_back({"Attainable (roof)", Align::Right, "roof"});
    table.columns.push_back({"% of roof", Align::Right, "roof-pct"});
  }
  for (const analysis::ScopeCompute& c : data.compute) {
    const ScopeStats& s = *c.scope;
    std::vector<Cell> row{scope_cell(profile, s.name),
                          count_cell(s.time.count),
                          duration_cell(s.total_ns),
                          s.flops > 0.0 ? si_cell(s.flops, "") : none(),
                          s.flops > 0.0 ? si_cell(c.flops_per_second, "FLOP/s") : none(),
                          s.bytes > 0 ? si_cell(c.bytes_per_second, "B/s") : none(),
                          s.bytes > 0 && s.flops > 0.0 ? Cell::number(report::format_ratio(c.intensity, ""), c.intensity)
                                                       : none()};
    if (roofs) {
      if (c.roofline) {
        const RooflinePoint& p = *c.roofline;
        row.push_back(Cell::words(std::string(p.bound == RooflineBound::Memory ? "memory" : "compute") +
                                  (c.one_core ? " (1 core)" : " (all cores)")));
        row.push_back(si_cell(p.attainable, "FLOP/s"));
        row.push_back(fraction_cell(p.fraction));
      } else {
        row.push_back(Cell::words("-"));
        row.push_back(none());
        row.push_back(none());
      }
    }
    table.row(std::move(row));
  }
  return table;
}

}  // namespace

void compute(const ReportData& data, std::vector<Section>& out) {
  if (data.compute.empty()) return;
  const Profile& profile = *data.profile;
  Section section{"compute", "Compute and roofline", {}};
  section.say(analysis::compute_note(profile, data.compute));
  section.add(compute_table(data));
  section.say(analysis::machine_known(profile) ? analysis::machine_roofs(profile.machine) : analysis::no_machine_hint(),
              true);
  std::string chart;
  report::html::write_roofline_chart(profile, data.compute, chart);
  // The chart carries its own <style>: nothing to add to the page.
  if (!chart.empty()) section.add(Picture::of("<div class=\"scroll\">" + chart + "</div>"));
  out.push_back(std::move(section));
}

}  // namespace nnprof::report::sections
