#include "io/compare_report.hpp"

#include <cmath>
#include <cstdint>
#include <ostream>
#include <vector>

#include <nlohmann/json.hpp>

#include "nnprof/error.hpp"
#include "report/comparison.hpp"

namespace nnprof::io {
namespace {

using Json = nlohmann::ordered_json;

Json side_json(const CompareSide& s) {
  Json j = Json::object();
  j["calls"] = s.calls;
  j["total_ns"] = s.total_ns;
  j["self_ns"] = s.self_ns;
  j["mean_ns"] = s.mean_ns;
  j["stddev_ns"] = s.stddev_ns;
  j["median_ns"] = s.median_ns;
  j["spans"] = s.spans;
  return j;
}

Json run_json(const RunTotals& r) {
  Json j = Json::object();
  j["command_line"] = r.command_line;
  j["hostname"] = r.hostname;
  j["duration_ns"] = r.duration_ns;
  j["instrumented_ns"] = r.instrumented_ns;
  j["calls"] = r.calls;
  j["spans"] = r.spans;
  j["spans_enabled"] = r.spans_enabled;
  Json heap = nullptr;
  if (r.heap_tracked) {
    heap = Json::object();
    heap["alloc_bytes"] = r.heap_alloc_bytes;
    heap["alloc_count"] = r.heap_alloc_count;
    heap["peak_bytes"] = r.heap_peak_bytes;
  }
  j["heap"] = heap;
  Json counters = nullptr;
  if (r.has_memory_counters) {
    counters = Json::object();
    counters["alloc_bytes"] = r.counter_alloc_bytes;
    counters["alloc_count"] = r.counter_alloc_count;
    counters["peak_bytes"] = r.counter_peak_bytes;
  }
  j["memory_counters"] = counters;
  return j;
}

// A ratio that does not exist (0 in the model) is null, not 0: 0 would read as infinitely fast.
Json ratio_json(double ratio) { return ratio > 0.0 && std::isfinite(ratio) ? Json(ratio) : Json(nullptr); }

Json names(const std::vector<const ScopeChange*>& rows) {
  Json j = Json::array();
  for (const ScopeChange* s : rows) j.push_back(s->name);
  return j;
}

Json only_json(const std::vector<ScopeOnly>& rows) {
  Json j = Json::array();
  for (const ScopeOnly& s : rows) j.push_back({{"name", s.name}, {"calls", s.calls}, {"total_ns", s.total_ns}});
  return j;
}

void check(std::ostream& out) {
  if (!out) throw Error("could not write the comparison: the output stream failed (disk full, or a closed pipe?)");
}

}  // namespace

void write_comparison_json(const Comparison& c, std::ostream& out) {
  Json j = Json::object();
  j["schema"] = kComparisonSchemaName;
  j["schema_version"] = kComparisonSchemaVersion;
  j["options"] = {{"alpha", c.options.alpha}, {"min_calls", c.options.min_calls}, {"min_change", c.options.min_change}};
  j["a"] = run_json(c.a);
  j["b"] = run_json(c.b);
  Json s = Json::object();
  s["verdict"] = to_string(c.verdict);
  s["runtime_basis"] = c.runtime_basis;
  s["runtime_a_ns"] = c.runtime_a_ns;
  s["runtime_b_ns"] = c.runtime_b_ns;
  s["runtime_delta_ns"] = report::signed_delta(c.runtime_a_ns, c.runtime_b_ns);
  s["runtime_change"] = c.runtime_change;
  s["significant_change"] = c.significant_change;
  s["speedup"] = ratio_json(c.speedup);
  s["geomean_ratio"] = ratio_json(c.geomean_ratio);
  s["geomean_scopes"] = c.geomean_scopes;
  s["improved"] = c.improved;
  s["regressed"] = c.regressed;
  s["stable"] = c.stable;
  s["unreliable"] = c.unreliable;
  j["summary"] = s;
  j["top_regressions"] = names(c.top_regressions(report::kComparisonTop));
  j["top_improvements"] = names(c.top_improvements(report::kComparisonTop));
  Json scopes = Json::array();
  for (const ScopeChange& sc : c.scopes) {
    Json e = Json::object();
    e["name"] = sc.name;
    e["a"] = side_json(sc.a);
    e["b"] = side_json(sc.b);
    e["ratio"] = ratio_json(sc.ratio);
    e["change"] = sc.ratio > 0.0 ? Json(sc.change) : Json(nullptr);
    e["total_delta_ns"] = sc.total_delta_ns;
    e["test"] = to_string(sc.test);
    e["p_value"] = sc.test == CompareTest::None ? Json(nullptr) : Json(sc.p_value);
    e["prob_b_slower"] = sc.test == CompareTest::MannWhitney ? Json(sc.prob_b_slower) : Json(nullptr);
    e["verdict"] = to_string(sc.verdict);
    e["decides"] = sc.decides;
    e["note"] = sc.note;
    scopes.push_back(std::move(e));
  }
  j["scopes"] = std::move(scopes);
  j["removed"] = only_json(c.removed);
  j["added"] = only_json(c.added);
  j["notes"] = c.notes;
  // Only when both runs were monitored and share a step with energy (issue 22).
  if (c.energy_per_step) {
    const EnergyPerStep& e = *c.energy_per_step;
    Json energy = Json::object();
    energy["step"] = e.step;
    energy["a_joules"] = e.a_joules;
    energy["b_joules"] = e.b_joules;
    energy["a_joules_per_item"] = e.a_joules_per_item;
    energy["b_joules_per_item"] = e.b_joules_per_item;
    energy["a_measured"] = e.a_measured;
    energy["b_measured"] = e.b_measured;
    energy["a_calls"] = e.a_calls;
    energy["b_calls"] = e.b_calls;
    energy["ratio"] = ratio_json(e.ratio);
    energy["change"] = e.ratio > 0.0 ? Json(e.change) : Json(nullptr);
    energy["test"] = to_string(e.test);
    energy["p_value"] = e.test == CompareTest::None ? Json(nullptr) : Json(e.p_value);
    energy["prob_b_more"] = e.test == CompareTest::MannWhitney ? Json(e.prob_b_more) : Json(nullptr);
    energy["verdict"] = to_string(e.verdict);
    energy["note"] = e.note;
    j["energy_per_step"] = std::move(energy);
  }
  out << j.dump(2, ' ', false, Json::error_handler_t::replace) << '\n';
  out.flush();
  check(out);
}

}  // namespace nnprof::io
