#include "io/model_compare_report.hpp"

#include <algorithm>
#include <cstdint>
#include <optional>
#include <ostream>
#include <string>
#include <string_view>
#include <vector>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "io/format.hpp"
#include "io/markdown_report.hpp"
#include "nnprof/error.hpp"

namespace nnprof::io {
namespace {

// ---- cells --------------------------------------------------------------------------

constexpr std::string_view kNotAvailable = "n/a";

std::string ratio_cell(const std::optional<double>& r) {
  return r ? format_ratio(*r, "×") : std::string(kNotAvailable);
}

template <class F>
std::string cell(const std::optional<double>& v, F&& format) {
  return v ? format(*v) : std::string(kNotAvailable);
}

// "medium/small": the column of one model's ratios to the baseline.
std::string ratio_header(const ModelRatio& r) { return fmt::format("{}/{}", r.model, r.baseline); }

bool any_heap(const ModelComparison& c) {
  for (const ModelRun& m : c.models)
    if (m.heap_tracked) return true;
  return false;
}

bool any_forward(const ModelComparison& c) {
  for (const ModelRun& m : c.models)
    if (m.forward_calls > 0) return true;
  return false;
}

const char* verdict_label(ScalingVerdict v) {
  switch (v) {
    case ScalingVerdict::Linear: return "Linear or better";
    case ScalingVerdict::SubLinear: return "Sub-linear";
    case ScalingVerdict::Poor: return "Poor";
    case ScalingVerdict::Unknown: break;
  }
  return "Not judged";
}

// The efficiency the verdict rests on.
std::optional<double> judged_efficiency(const ModelRatio& r) {
  return r.basis == "parameters" ? r.efficiency_parameters : r.efficiency_flops;
}

// ---- tables (the same cells in text and Markdown) -----------------------------------

TextTable specifications_table(const ModelComparison& c) {
  TextTable t({{"Model", Align::Left},
               {"Dimensions", Align::Right},
               {"Layers", Align::Right},
               {"Heads", Align::Right},
               {"Parameters", Align::Right},
               {"Context", Align::Right},
               {"Vocabulary", Align::Right},
               {"Weights", Align::Right},
               {"KV cache", Align::Right}});
  for (const ModelRun& m : c.models) {
    const ModelInfo& i = m.info;
    t.add_row({i.name, format_count(i.d_model), format_count(i.layers), format_count(i.heads),
               format_count(i.parameters), format_count(i.context), format_count(i.vocab),
               format_bytes(i.weight_bytes), i.kv_cache_bytes == 0 ? std::string("none") : format_bytes(i.kv_cache_bytes)});
  }
  return t;
}

TextTable performance_table(const ModelComparison& c) {
  std::vector<TableColumn> columns = {{"Metric", Align::Left}};
  for (const ModelRun& m : c.models) columns.push_back({m.info.name, Align::Right});
  for (const ModelRatio& r : c.ratios) columns.push_back({"Ratio (" + ratio_header(r) + ")", Align::Right});
  TextTable t(std::move(columns));
  // One row: a cell per model (or "not run"), then a ratio per non-baseline model.
  const auto row = [&](std::string label, auto&& value, auto&& ratio) {
    std::vector<std::string> cells = {std::move(label)};
    for (const ModelRun& m : c.models) cells.push_back(m.scope_nodes == 0 ? std::string("not run") : value(m));
    for (const ModelRatio& r : c.ratios) cells.push_back(ratio(r));
    t.add_row(std::move(cells));
  };
  const auto none = [](const ModelRatio&) { return std::string(); };
  row("Inferences", [](const ModelRun& m) { return format_count(m.inferences); }, none);
  row("Total inference time",
      [](const ModelRun& m) {
        return format_duration(m.timed_ns) + (m.timed_inferences ? "" : " (whole model scope)");
      },
      [](const ModelRatio& r) { return ratio_cell(r.total_time); });
  row("Mean inference time",
      [](const ModelRun& m) {
        if (!m.inference_mean_ns) return std::string(kNotAvailable);
        std::string s = format_duration(*m.inference_mean_ns);
        if (m.inference_stddev_ns) s += " ± " + format_duration(*m.inference_stddev_ns);
        return s;
      },
      none);
  row("Tokens generated", [](const ModelRun& m) { return format_count(m.tokens); }, none);
  row("Tokens per second",
      [](const ModelRun& m) { return cell(m.tokens_per_second, [](double v) { return format_rate(v, "tokens/s"); }); },
      [](const ModelRatio& r) { return ratio_cell(r.tokens_per_second); });
  row("Time per token",
      [](const ModelRun& m) { return cell(m.ns_per_token, [](double v) { return format_duration(v); }); },
      [](const ModelRatio& r) { return ratio_cell(r.time_per_token); });
  row("FLOPs per token",
      [](const ModelRun& m) { return cell(m.flops_per_token, [](double v) { return format_si(v, "FLOP"); }); },
      [](const ModelRatio& r) { return ratio_cell(r.flops_per_token); });
  row("Achieved FLOP/s",
      [](const ModelRun& m) { return cell(m.flops_per_second, [](double v) { return format_si(v, "FLOP/s"); }); },
      none);
  // From the descriptions: known whether or not the model ran.
  std::vector<std::string> memory = {"Weights + KV cache"};
  for (const ModelRun& m : c.models) memory.push_back(format_bytes(m.model_bytes()));
  for (const ModelRatio& r : c.ratios) memory.push_back(ratio_cell(r.model_bytes));
  t.add_row(std::move(memory));
  if (any_heap(c)) {
    row("Heap allocated",
        [](const ModelRun& m) {
          return m.heap_tracked ? fmt::format("{} in {}", format_bytes(m.heap_alloc_bytes),
                                              format_count(m.heap_alloc_count, "allocation", "allocations"))
                                : std::string(kNotAvailable);
        },
        [](const ModelRatio& r) { return ratio_cell(r.heap_alloc_bytes); });
    row("Heap live at once (at most)",
        [](const ModelRun& m) {
          return m.heap_tracked ? "≤ " + format_bytes(m.heap_peak_bound_bytes) : std::string(kNotAvailable);
        },
        none);
    row("Heap retained at the end",
        [](const ModelRun& m) {
          return m.heap_tracked ? format_bytes(m.heap_retained_bytes) : std::string(kNotAvailable);
        },
        none);
  }
  return t;
}

TextTable scaling_table(const ModelComparison& c) {
  TextTable t({{"Model", Align::Left},
               {"Baseline", Align::Left},
               {"Parameter ratio", Align::Right},
               {"FLOPs/token ratio", Align::Right},
               {"Time/token ratio", Align::Right},
               {"Efficiency (FLOPs)", Align::Right},
               {"Efficiency (parameters)", Align::Right},
               {"Verdict", Align::Left}});
  const auto plain = [](const std::optional<double>& v) { return cell(v, [](double e) { return format_ratio(e, ""); }); };
  for (const ModelRatio& r : c.ratios) {
    t.add_row({r.model, r.baseline, ratio_cell(r.parameters), ratio_cell(r.flops_per_token),
               ratio_cell(r.time_per_token), plain(r.efficiency_flops), plain(r.efficiency_parameters),
               r.basis.empty() ? std::string(verdict_label(r.verdict))
                               : fmt::format("{} (by {})", verdict_label(r.verdict), r.basis)});
  }
  return t;
}

const ForwardPart* find_part(const std::vector<ForwardPart>& parts, const std::string& name) {
  for (const ForwardPart& p : parts)
    if (p.name == name) return &p;
  return nullptr;
}

// Time per forward pass of each part, its shares, and its growth per pass against the baseline.
// Rows in the order of the largest model that ran a forward pass.
TextTable forward_table(const ModelComparison& c, std::vector<ForwardPart> ModelRun::*parts) {
  std::vector<TableColumn> columns = {{"Part", Align::Left}};
  for (const ModelRun& m : c.models) {
    columns.push_back({m.info.name + " per pass", Align::Right});
    columns.push_back({m.info.name + " % time", Align::Right});
    columns.push_back({m.info.name + " % FLOPs", Align::Right});
  }
  for (const ModelRatio& r : c.ratios) columns.push_back({"Ratio (" + ratio_header(r) + ")", Align::Right});
  TextTable t(std::move(columns));
  std::vector<std::string> names;
  for (auto m = c.models.rbegin(); m != c.models.rend(); ++m)
    for (const ForwardPart& p : (*m).*parts)
      if (std::find(names.begin(), names.end(), p.name) == names.end()) names.push_back(p.name);
  const auto per_pass = [](const ModelRun& m, const ForwardPart& p) {
    return static_cast<double>(p.time_ns) / static_cast<double>(m.forward_calls);
  };
  for (const std::string& name : names) {
    std::vector<std::string> cells = {name};
    for (const ModelRun& m : c.models) {
      const ForwardPart* p = m.forward_calls > 0 ? find_part(m.*parts, name) : nullptr;
      if (p == nullptr) {
        cells.insert(cells.end(), {"-", "-", "-"});
        continue;
      }
      cells.push_back(format_duration(per_pass(m, *p)));
      cells.push_back(format_percent(p->time_share));
      cells.push_back(cell(p->flops_share, [](double s) { return format_percent(s); }));
    }
    for (const ModelRatio& r : c.ratios) {
      const ModelRun* m = nullptr;
      for (const ModelRun& run : c.models)
        if (run.info.name == r.model) m = &run;
      const ModelRun& b = c.baseline();
      const ForwardPart* pm = m != nullptr && m->forward_calls > 0 ? find_part(m->*parts, name) : nullptr;
      const ForwardPart* pb = b.forward_calls > 0 ? find_part(b.*parts, name) : nullptr;
      cells.push_back(pm != nullptr && pb != nullptr && pb->time_ns > 0
                          ? format_ratio(per_pass(*m, *pm) / per_pass(b, *pb), "×")
                          : std::string(kNotAvailable));
    }
    t.add_row(std::move(cells));
  }
  return t;
}

std::string model_list(const ModelComparison& c) {
  std::string s;
  for (const ModelRun& m : c.models) s += (s.empty() ? "" : ", ") + m.info.name;
  return s;
}

// Every note, a model's prefixed with its name.
std::vector<std::string> all_notes(const ModelComparison& c) {
  std::vector<std::string> notes;
  for (const ModelRun& m : c.models)
    for (const std::string& n : m.notes) notes.push_back(m.info.name + ": " + n);
  notes.insert(notes.end(), c.notes.begin(), c.notes.end());
  return notes;
}

constexpr std::string_view kForwardLead =
    "Time per forward pass of each part (ratios: time per pass against the baseline's), with its share of the "
    "forward passes' time and declared FLOPs.";
constexpr std::string_view kComponentsTitle = "Forward pass: components (children of forward, inclusive time)";
constexpr std::string_view kOperationsTitle = "Forward pass: operations (own time of every scope inside forward)";

void check(std::ostream& out) {
  if (!out) throw Error("could not write the model comparison: the output stream failed (disk full, or a closed pipe?)");
}


// ---- JSON ---------------------------------------------------------------------------

using Json = nlohmann::ordered_json;

Json optional_json(const std::optional<double>& v) { return v ? Json(*v) : Json(nullptr); }

Json parts_json(const std::vector<ForwardPart>& parts) {
  Json a = Json::array();
  for (const ForwardPart& p : parts) {
    Json j = Json::object();
    j["name"] = p.name;
    j["calls"] = p.calls;
    j["time_ns"] = p.time_ns;
    j["time_share"] = p.time_share;
    j["flops"] = p.flops;
    j["flops_share"] = optional_json(p.flops_share);
    a.push_back(std::move(j));
  }
  return a;
}

Json model_json(const ModelRun& m) {
  const ModelInfo& i = m.info;
  Json j = Json::object();
  j["name"] = i.name;
  j["parameters"] = i.parameters;
  j["d_model"] = i.d_model;
  j["layers"] = i.layers;
  j["heads"] = i.heads;
  j["context"] = i.context;
  j["vocab"] = i.vocab;
  j["weight_bytes"] = i.weight_bytes;
  j["kv_cache_bytes"] = i.kv_cache_bytes;
  j["model_bytes"] = m.model_bytes();
  j["recorded"] = m.scope_nodes > 0;
  j["scope_ns"] = m.scope_ns;
  j["inferences"] = m.inferences;
  j["inference_ns"] = m.inference_ns;
  j["inference_mean_ns"] = optional_json(m.inference_mean_ns);
  j["inference_std_ns"] = optional_json(m.inference_stddev_ns);
  j["tokens"] = m.tokens;
  j["time_basis"] = m.timed_inferences ? "inference" : "model_scope";
  j["timed_ns"] = m.timed_ns;
  j["tokens_per_second"] = optional_json(m.tokens_per_second);
  j["ns_per_token"] = optional_json(m.ns_per_token);
  j["flops"] = m.flops;
  j["bytes"] = m.bytes;
  j["flops_per_token"] = optional_json(m.flops_per_token);
  j["flops_per_second"] = optional_json(m.flops_per_second);
  Json heap = nullptr;
  if (m.heap_tracked) {
    heap = Json::object();
    heap["alloc_bytes"] = m.heap_alloc_bytes;
    heap["alloc_count"] = m.heap_alloc_count;
    heap["retained_bytes"] = m.heap_retained_bytes;
    heap["peak_bound_bytes"] = m.heap_peak_bound_bytes;
  }
  j["heap"] = std::move(heap);
  Json forward = nullptr;
  if (m.forward_calls > 0) {
    forward = Json::object();
    forward["calls"] = m.forward_calls;
    forward["total_ns"] = m.forward_ns;
    forward["flops"] = m.forward_flops;
    forward["components"] = parts_json(m.components);
    forward["operations"] = parts_json(m.operations);
  }
  j["forward"] = std::move(forward);
  j["notes"] = m.notes;
  return j;
}

Json ratio_json(const ModelRatio& r) {
  Json j = Json::object();
  j["model"] = r.model;
  j["baseline"] = r.baseline;
  j["parameters"] = optional_json(r.parameters);
  j["total_time"] = optional_json(r.total_time);
  j["flops_per_token"] = optional_json(r.flops_per_token);
  j["time_per_token"] = optional_json(r.time_per_token);
  j["tokens_per_second"] = optional_json(r.tokens_per_second);
  j["model_bytes"] = optional_json(r.model_bytes);
  j["heap_alloc_bytes"] = optional_json(r.heap_alloc_bytes);
  j["efficiency_flops"] = optional_json(r.efficiency_flops);
  j["efficiency_parameters"] = optional_json(r.efficiency_parameters);
  j["verdict"] = to_string(r.verdict);
  j["basis"] = r.basis.empty() ? Json(nullptr) : Json(r.basis);
  j["reason"] = r.reason;
  return j;
}

/// The comparison as the human formats show it: every name cut at kNameDisplayLimit and every
/// sentence at kTextDisplayLimit (issue 16: one 10 MB name made a report of gigabytes). JSON
/// keeps them whole.
ModelComparison capped(const ModelComparison& c) {
  ModelComparison out = c;
  const auto cap_parts = [](std::vector<ForwardPart>& parts) {
    for (ForwardPart& p : parts) p.name = capped_name(p.name);
  };
  for (ModelRun& m : out.models) {
    m.info.name = capped_name(m.info.name);
    cap_parts(m.components);
    cap_parts(m.operations);
    for (std::string& n : m.notes) n = capped_name(n, kTextDisplayLimit);
  }
  for (ModelRatio& r : out.ratios) {
    r.model = capped_name(r.model);
    r.baseline = capped_name(r.baseline);
    r.reason = capped_name(r.reason, kTextDisplayLimit);
  }
  for (std::string& n : out.notes) n = capped_name(n, kTextDisplayLimit);
  return out;
}

}  // namespace

void write_model_comparison_text(const ModelComparison& full, std::ostream& out) {
  const ModelComparison c = capped(full);
  out << "nnprof model comparison\n=======================\n";
  out << fmt::format("  Models:   {} (ratios to {}, the smallest by parameters)\n", plain_text(model_list(c)),
                     plain_text(c.baseline().info.name));
  write_text_heading(out, "Model specifications");
  specifications_table(c).write(out);
  write_text_heading(out, "Performance");
  performance_table(c).write(out);
  if (!c.ratios.empty()) {
    write_text_heading(out, "Scaling efficiency");
    scaling_table(c).write(out);
    out << '\n';
    for (const ModelRatio& r : c.ratios)
      out << fmt::format("  {} vs {}: {}. {}\n", plain_text(r.model), plain_text(r.baseline),
                         verdict_label(r.verdict), plain_text(r.reason));
  }
  if (any_forward(c)) {
    write_text_heading(out, kComponentsTitle);
    out << "  " << kForwardLead << "\n\n";
    forward_table(c, &ModelRun::components).write(out);
    write_text_heading(out, kOperationsTitle);
    forward_table(c, &ModelRun::operations).write(out);
  }
  const std::vector<std::string> notes = all_notes(c);
  if (!notes.empty()) {
    write_text_heading(out, "Notes");
    for (const std::string& n : notes) out << "  - " << plain_text(n) << '\n';
  }
  out.flush();
  check(out);
}

void write_model_comparison_markdown(const ModelComparison& full, std::ostream& out) {
  const ModelComparison c = capped(full);
  out << "# nnprof model comparison\n\n";
  std::string models;
  for (const ModelRun& m : c.models) models += (models.empty() ? "**" : ", **") + markdown_escape(m.info.name) + "**";
  out << "Models: " << models << "; ratios are to **" << markdown_escape(c.baseline().info.name)
      << "**, the smallest by parameters.\n";
  out << "\n## Model Specifications\n\n";
  write_markdown_table(specifications_table(c), out);
  out << "\n## Performance Metrics\n\n";
  write_markdown_table(performance_table(c), out);
  if (!c.ratios.empty()) {
    out << "\n## Scaling Efficiency\n\n";
    out << markdown_escape(fmt::format("Efficiency is the work ratio over the time-per-token ratio: FLOPs per token "
                                       "where kernels declared them, else parameters. At least {} is linear or "
                                       "better, {} to {} sub-linear, below {} poor.",
                                       kLinearScaling, kSubLinearScaling, kLinearScaling, kSubLinearScaling))
        << "\n\n";
    write_markdown_table(scaling_table(c), out);
    for (const ModelRatio& r : c.ratios) {
      const std::optional<double> e = judged_efficiency(r);
      out << "\n### " << markdown_escape(r.model) << " vs " << markdown_escape(r.baseline);
      if (e) out << ": **" << format_ratio(*e, "") << "** by " << markdown_escape(r.basis);
      out << "\n\n";
      const char* mark = r.verdict == ScalingVerdict::Linear      ? "✅"
                         : r.verdict == ScalingVerdict::SubLinear ? "⚠️"
                         : r.verdict == ScalingVerdict::Poor      ? "❌"
                                                                  : "❔";
      out << mark << " **" << verdict_label(r.verdict) << "**: " << markdown_escape(r.reason) << '\n';
    }
  }
  if (any_forward(c)) {
    out << "\n## Forward Pass Analysis\n\n" << markdown_escape(kForwardLead) << '\n';
    out << "\n### " << markdown_escape(kComponentsTitle) << "\n\n";
    write_markdown_table(forward_table(c, &ModelRun::components), out);
    out << "\n### " << markdown_escape(kOperationsTitle) << "\n\n";
    write_markdown_table(forward_table(c, &ModelRun::operations), out);
  }
  const std::vector<std::string> notes = all_notes(c);
  if (!notes.empty()) {
    out << "\n## Notes\n\n";
    for (const std::string& n : notes) out << "- " << markdown_escape(n) << '\n';
  }
  out.flush();
  check(out);
}

void write_model_comparison_json(const ModelComparison& c, std::ostream& out) {
  Json j = Json::object();
  j["schema"] = kModelComparisonSchemaName;
  j["schema_version"] = kModelComparisonSchemaVersion;
  j["baseline"] = c.baseline().info.name;
  j["thresholds"] = {{"linear", kLinearScaling}, {"sub_linear", kSubLinearScaling}};
  Json models = Json::array();
  for (const ModelRun& m : c.models) models.push_back(model_json(m));
  j["models"] = std::move(models);
  Json ratios = Json::array();
  for (const ModelRatio& r : c.ratios) ratios.push_back(ratio_json(r));
  j["ratios"] = std::move(ratios);
  j["notes"] = c.notes;
  out << j.dump(2, ' ', false, Json::error_handler_t::replace) << '\n';
  out.flush();
  check(out);
}

}  // namespace nnprof::io
