// Speed, work and memory of each model, then each model's ratio to the baseline where the
// figure has one. A model that never ran says "not run" where a run's figure would be.
#include <optional>
#include <string>

#include <fmt/format.h>

#include "report/cells.hpp"
#include "report/format.hpp"
#include "report/model_comparison_sections.hpp"

namespace nnprof::report::sections {
namespace {

Cell na() { return Cell::words("n/a"); }

// A figure that may be missing: its text by `format`, its value raw.
template <class F>
Cell optional_cell(const std::optional<double>& v, F&& format) {
  return v ? Cell::number(format(*v), *v) : na();
}

bool any_heap(const ModelComparison& c) {
  for (const ModelRun& m : c.models)
    if (m.heap_tracked) return true;
  return false;
}

}  // namespace

void model_compare_performance(const ModelComparison& c, std::vector<Section>& out) {
  Table t;
  t.id = "model-performance";
  t.columns.push_back({"Metric", Align::Left, "metric"});
  for (const ModelRun& m : c.models) t.columns.push_back({m.info.name, Align::Right, {}});
  for (const ModelRatio& r : c.ratios)
    t.columns.push_back({fmt::format("Ratio ({})", model_cells::ratio_header(r)), Align::Right, {}});
  // One row: a cell per model (or "not run"), then a ratio per non-baseline model.
  const auto row = [&](std::string label, auto&& value, auto&& ratio) {
    std::vector<Cell> cells = {Cell::words(std::move(label))};
    for (const ModelRun& m : c.models) cells.push_back(m.scope_nodes == 0 ? Cell::words("not run") : value(m));
    for (const ModelRatio& r : c.ratios) cells.push_back(ratio(r));
    t.row(std::move(cells));
  };
  const auto none = [](const ModelRatio&) { return Cell::words(""); };
  row("Inferences",
      [](const ModelRun& m) { return count_cell(m.inferences); },
      none);
  row("Total inference time",
      [](const ModelRun& m) {
        return Cell::number(report::format_duration(m.timed_ns) + (m.timed_inferences ? "" : " (whole model scope)"),
                            static_cast<double>(m.timed_ns));
      },
      [](const ModelRatio& r) { return model_cells::ratio(r.total_time); });
  row("Mean inference time",
      [](const ModelRun& m) {
        if (!m.inference_mean_ns) return na();
        std::string s = report::format_duration(*m.inference_mean_ns);
        if (m.inference_stddev_ns) s += fmt::format(" ± {}", report::format_duration(*m.inference_stddev_ns));
        return Cell::number(std::move(s), *m.inference_mean_ns);
      },
      none);
  row("Tokens generated",
      [](const ModelRun& m) { return count_cell(m.tokens); }, none);
  row("Tokens per second",
      [](const ModelRun& m) {
        return optional_cell(m.tokens_per_second, [](double v) { return report::format_rate(v, "tokens/s"); });
      },
      [](const ModelRatio& r) { return model_cells::ratio(r.tokens_per_second); });
  row("Time per token",
      [](const ModelRun& m) { return optional_cell(m.ns_per_token, [](double v) { return report::format_duration(v); }); },
      [](const ModelRatio& r) { return model_cells::ratio(r.time_per_token); });
  row("FLOPs per token",
      [](const ModelRun& m) {
        return optional_cell(m.flops_per_token, [](double v) { return report::format_si(v, "FLOP"); });
      },
      [](const ModelRatio& r) { return model_cells::ratio(r.flops_per_token); });
  row("Achieved FLOP/s",
      [](const ModelRun& m) {
        return optional_cell(m.flops_per_second, [](double v) { return report::format_si(v, "FLOP/s"); });
      },
      none);
  // From the descriptions: known whether or not the model ran.
  std::vector<Cell> memory = {Cell::words("Weights + KV cache")};
  for (const ModelRun& m : c.models)
    memory.push_back(bytes_cell(m.model_bytes()));
  for (const ModelRatio& r : c.ratios) memory.push_back(model_cells::ratio(r.model_bytes));
  t.row(std::move(memory));
  if (any_heap(c)) {
    row("Heap allocated",
        [](const ModelRun& m) {
          return m.heap_tracked
                     ? Cell::number(fmt::format("{} in {}", report::format_bytes(m.heap_alloc_bytes),
                                                report::format_count(m.heap_alloc_count, "allocation", "allocations")),
                                    static_cast<double>(m.heap_alloc_bytes))
                     : na();
        },
        [](const ModelRatio& r) { return model_cells::ratio(r.heap_alloc_bytes); });
    row("Heap live at once (at most)",
        [](const ModelRun& m) {
          return m.heap_tracked ? Cell::number(fmt::format("≤ {}", report::format_bytes(m.heap_peak_bound_bytes)),
                                               static_cast<double>(m.heap_peak_bound_bytes))
                                : na();
        },
        none);
    row("Heap retained at the end",
        [](const ModelRun& m) {
          return m.heap_tracked ? Cell::number(report::format_bytes(m.heap_retained_bytes),
                                               static_cast<double>(m.heap_retained_bytes))
                                : na();
        },
        none);
  }
  Section section{"performance", "Performance Metrics", {}};
  section.add(std::move(t));
  out.push_back(std::move(section));
}

}  // namespace nnprof::report::sections
