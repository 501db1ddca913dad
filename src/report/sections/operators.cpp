// Framework operators (PyTorch's aten::addmm, AddmmBackward0, record_function blocks) grouped by
// operator and input shapes, as torch.profiler's key_averages(group_by_input_shape=True) shows
// them, with the FLOP/s, heap per call and, for backward operators, the forward operator whose
// autograd node they ran. Only profiles with operator calls (spans with "op_scope") have it.
#include <algorithm>
#include <cstddef>
#include <string>
#include <vector>

#include "analysis/operators.hpp"
#include "report/cells.hpp"
#include "report/sections.hpp"

namespace nnprof::report::sections {
namespace {

std::string joined(const std::vector<std::string>& texts, std::string_view separator) {
  std::string out;
  for (const std::string& t : texts) {
    if (!out.empty()) out += separator;
    out += t;
  }
  return out;
}

// "aten::addmm [[128], [32, 64], [64, 128]]": an operator group as one name.
std::string group_label(const Profile& profile, const OperatorGroup& group) {
  std::string label = profile.str(group.name);
  if (!group.input_shapes.empty()) {
    label += ' ';
    label += analysis::readable_shapes(group.input_shapes);
  }
  return label;
}

Cell shapes_cell(const OperatorGroup& group) {
  if (group.input_shapes.empty()) return Cell::words("(not recorded)");
  return name_cell(analysis::readable_shapes(group.input_shapes), group.input_shapes);
}

// The forward operator(s) a backward group's autograd nodes came from: the first shown, the
// others counted, every one with its calls in the title.
Cell forward_cell(const Profile& profile, const OperatorTable& table, const OperatorGroup& group) {
  if (group.forward.empty()) return Cell::words(group.unlinked_calls > 0 ? "(not found)" : "");
  std::string shown = group_label(profile, table.groups[group.forward.front().group]);
  if (group.forward.size() > 1) {
    shown += " (+";
    shown += std::to_string(group.forward.size() - 1);
    shown += " more)";
  }
  std::string full;
  for (const OperatorLink& link : group.forward) {
    if (!full.empty()) full += "; ";
    full += group_label(profile, table.groups[link.group]);
    full += ": ";
    full += format_count(link.calls, "call", "calls");
  }
  return name_cell(shown, full);
}

}  // namespace

void operators(const ReportData& data, std::vector<Section>& out) {
  const OperatorTable& table = data.operators;
  if (table.empty()) return;
  const Profile& profile = *data.profile;
  const std::size_t shown = std::min(table.groups.size(), data.limits.operators);

  bool any_dtypes = false, any_flops = false, any_forward = false;
  for (const OperatorGroup& g : table.groups) {
    any_dtypes = any_dtypes || !g.input_dtypes.empty();
    any_flops = any_flops || g.flops_calls > 0;
    any_forward = any_forward || !g.forward.empty() || g.unlinked_calls > 0;
  }

  Section section{"operators", "Operators", {}};
  section.say(analysis::operators_lead(table));
  section.say(analysis::operators_summary(table));
  if (table.recorded_calls > table.calls) {
    section.say(Sentence()
                    .count(table.recorded_calls - table.calls, "operator call was", "operator calls were")
                    .words(" counted but not kept as spans (memory cap or flight recorder); the table groups the ")
                    .count(table.calls)
                    .words(" kept."),
                true);
  }
  say_top_of(section, shown, table.groups.size(), "operator groups");

  Table t;
  t.id = "operators-table";
  t.style = Table::Style::Sortable;
  t.filter_label = "Filter operators by name";
  t.columns = {right("#", "rank"), left("Operator", "operator"), left("Input shapes", "shapes")};
  if (any_dtypes) t.columns.push_back(left("Dtypes", "dtypes"));
  t.columns.insert(t.columns.end(), {left("Kind", "kind"), right("Calls", "calls"), right("Self", "self"),
                                     right("% of op self", "self-pct"), right("Total", "total"), right("Mean", "mean")});
  if (any_flops) t.columns.push_back(right("GFLOP/s", "gflops"));
  if (table.heap_tracked) t.columns.push_back(right("Heap/call", "heap-per-call"));
  if (any_forward) t.columns.push_back(left("From forward", "forward"));
  for (std::size_t i = 0; i < shown; ++i) {
    const OperatorGroup& g = table.groups[i];
    std::vector<Cell> row{rank_cell(i), scope_cell(profile, g.name), shapes_cell(g)};
    if (any_dtypes) row.push_back(Cell::words(joined(g.input_dtypes, " | ")));
    row.push_back(Cell::words(to_string(g.scope)));
    row.push_back(count_cell(g.calls));
    row.push_back(duration_cell(g.self_ns));
    row.push_back(share_cell(g.self_ns, table.self_ns));
    row.push_back(duration_cell(g.total_ns));
    row.push_back(duration_cell(g.mean_ns()));
    if (any_flops) {
      row.push_back(g.flops_calls > 0 ? Cell::number(format_ratio(g.flops_per_second() / 1e9, ""), g.flops_per_second())
                                      : not_known());
    }
    if (table.heap_tracked) row.push_back(bytes_cell(static_cast<std::uint64_t>(g.heap_bytes_per_call())));
    if (any_forward) row.push_back(forward_cell(profile, table, g));
    t.row(std::move(row));
  }
  section.add(std::move(t));

  // How to read the columns that are not plain timings.
  Sentence notes;
  notes.words("Kind is the op_scope of the calls (function: an operator, in either pass; backward: an autograd node "
              "of the backward pass; user: a record_function block). Self is an "
              "operator's time less the spans directly inside it (the operators it called); % is of the self time "
              "of all operators.");
  if (any_flops) notes.words(" GFLOP/s is the FLOPs of the calls, nested operators included, over their total time.");
  if (table.heap_tracked) {
    notes.words(" Heap/call is the heap allocated while the operator was the innermost scope, per call of its call "
                "paths: heap is attributed per operator path, not per input shape, so shapes that share a path "
                "share the figure.");
  }
  if (any_forward) {
    notes.words(" From forward is the forward operator whose autograd node a backward operator ran (the outermost "
                "forward call with the same sequence number).");
  }
  section.say(notes, true);
  out.push_back(std::move(section));
}

}  // namespace nnprof::report::sections
