#include "io/model_compare_report.hpp"

#include <optional>
#include <ostream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "nnprof/error.hpp"

namespace nnprof::io {
namespace {

void check(std::ostream& out) {
  if (!out) throw Error("could not write the model comparison: the output stream failed (disk full, or a closed pipe?)");
}

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

}  // namespace

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
