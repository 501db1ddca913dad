#include "analysis/facts.hpp"

namespace nnprof::analysis {
namespace {

Sentence spans(const Completeness& c) {
  Sentence s;
  if (!c.spans_enabled) return s.words("statistics only: no timeline recorded");
  s.count(c.spans_kept).words(" kept, ").count(c.spans_dropped).words(" dropped, ")
      .count(c.spans_overwritten).words(" overwritten (policy ")
      .words(c.buffer_policy.empty() ? "unknown" : c.buffer_policy).words(", memory cap ");
  if (c.memory_cap_bytes == 0) {
    s.words("none");
  } else {
    s.bytes(c.memory_cap_bytes);
  }
  return s.words(")");
}

Sentence overhead(const Profile& profile) {
  const Completeness& c = profile.completeness;
  Sentence s;
  if (!(c.overhead_per_scope_ns > 0.0)) return s.words("not measured");
  return s.duration(c.overhead_per_scope_ns).words(" per scope × ")
      .count(c.scopes_recorded, "scope", "scopes").words(" = ").duration(c.overhead_total_ns)
      .words(" (").share(share_of(c.overhead_total_ns, profile.instrumented_ns()))
      .words(" of instrumented time)");
}

}  // namespace

std::vector<Fact> completeness_facts(const Profile& profile) {
  const Completeness& c = profile.completeness;
  std::vector<Fact> facts;
  facts.push_back({"Scopes recorded", Sentence().count(c.scopes_recorded)});
  facts.push_back({"Spans", spans(c)});
  facts.push_back(
      {"Events dropped", Sentence().count(c.events_dropped, "memory event", "memory events")});
  facts.push_back({"Hot-path buffer allocations",
                   Sentence().count(c.hot_path_allocations, "buffer of 64 KiB", "buffers of 64 KiB")});
  facts.push_back({"Instrumentation", overhead(profile)});
  return facts;
}

Sentence memory_totals(const Profile& profile) {
  return Sentence()
      .words("All counters: current ").bytes(profile.memory.current_bytes).words(", peak ")
      .bytes(profile.memory.peak_bytes).words(" at ").duration(profile.memory.peak_time_ns)
      .words(" after the session start.");
}

Sentence no_scopes_hint() {
  return Sentence()
      .words("No scopes were recorded: wrap code in ").code("NNPROF_SCOPE(\"name\")").words(" or ")
      .code("profiler.start/stop").words(".");
}

}  // namespace nnprof::analysis
