// The call tree merged over threads: each node with its children by total time, cut at the
// tree limits, with what was cut counted.
#include "analysis/call_tree.hpp"
#include "report/cells.hpp"
#include "report/sections.hpp"

namespace nnprof::report::sections {

void call_tree(const ReportData& data, std::vector<Section>& out) {
  const Profile& profile = *data.profile;
  Section section{"call-tree", "Call tree", {}};
  if (profile.call_tree.size() <= 1 || data.call_tree.rows.empty()) {
    section.say(Sentence().words("No call tree was recorded."));
    out.push_back(std::move(section));
    return;
  }
  section.say(Sentence().words(
      "Merged over all threads; children by total time; a name's full path is its title; % is of instrumented "
      "time."));
  Table table;
  table.id = "call-tree-table";
  table.style = Table::Style::Tree;
  table.columns = {{"Scope", Align::Left, "scope"}, {"Calls", Align::Right, "calls"},
                   {"Total", Align::Right, "total"}, {"Self", Align::Right, "self"},
                   {"Avg", Align::Right, "mean"},    {"Min", Align::Right, "min"},
                   {"Max", Align::Right, "max"},     {"% of instrumented time", Align::Right, "pct"}};
  for (const analysis::TreeRow& row : data.call_tree.rows) {
    const CallTreeNode& node = profile.call_tree[row.node];
    table.row({scope_cell(profile, node.name, profile.node_path(row.node)), count_cell(node.time.count),
               duration_cell(node.time.sum_ns), duration_cell(node.self_ns), duration_cell(node.time.mean_ns),
               duration_cell(node.time.min_ns), duration_cell(node.time.max_ns),
               share_cell(node.time.sum_ns, data.instrumented_ns)});
    table.depths.push_back(row.depth);
  }
  section.add(std::move(table));
  if (data.call_tree.omitted() > 0) section.say(analysis::omitted_nodes(data.call_tree), true);
  out.push_back(std::move(section));
}

}  // namespace nnprof::report::sections
