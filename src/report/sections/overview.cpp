// What the run was (the facts under the title) and its key numbers at a glance (the summary).
#include <algorithm>
#include <string>

#include <fmt/format.h>

#include "analysis/cpu_profile.hpp"
#include "analysis/facts.hpp"
#include "report/format.hpp"
#include "report/cells.hpp"
#include "report/sections.hpp"

namespace nnprof::report::sections {
namespace {

Sentence text(std::string_view words) { return Sentence().words(report::capped_name(words, report::kTextDisplayLimit)); }

std::string or_unknown(const std::string& value) { return value.empty() ? std::string("unknown") : value; }

Card card(std::string label, std::string value, std::string detail) {
  return Card{std::move(label), std::move(value), std::move(detail)};
}

std::string spans_detail(const Completeness& c) {
  if (!c.spans_enabled) return "statistics-only session: no timeline";
  return fmt::format("{} dropped · {} overwritten", report::format_count(c.spans_dropped),
                     report::format_count(c.spans_overwritten));
}

Card overhead_card(const Profile& profile, std::uint64_t instrumented_ns) {
  const Completeness& c = profile.completeness;
  if (!(c.overhead_per_scope_ns > 0.0)) return card("Instrumentation overhead", "n/a", "not measured");
  const report::PercentOf percent(instrumented_ns);
  return card("Instrumentation overhead", report::format_duration(c.overhead_per_scope_ns) + " / scope",
              fmt::format("{} in total = {} of instrumented time", report::format_duration(c.overhead_total_ns),
                          percent(c.overhead_total_ns)));
}

}  // namespace

Facts about(const ReportData& data) {
  const Profile& profile = *data.profile;
  const Metadata& meta = profile.meta;
  Facts facts;
  const auto add = [&facts](std::string label, Sentence value) { facts.items.push_back({std::move(label), std::move(value)}); };

  std::string host = or_unknown(meta.hostname);
  if (!meta.os.empty()) host += fmt::format(" ({})", meta.os);
  add("Host", text(host));
  Sentence cpu = text(or_unknown(meta.cpu_model));
  if (meta.logical_cpus > 0) cpu.words(", ").count(meta.logical_cpus, "logical CPU", "logical CPUs");
  add("CPU", std::move(cpu));
  if (!meta.compiler.empty()) add("Compiler", text(meta.compiler));
  if (!meta.command_line.empty()) add("Command", text(meta.command_line));
  if (meta.pid != 0) add("Process ID", Sentence().words(std::to_string(meta.pid)));
  if (!meta.nnprof_version.empty()) add("nnprof version", text(meta.nnprof_version));
  add("Threads", Sentence().count(profile.threads.size()));
  add("Session duration", Sentence().duration(meta.duration_ns));
  if (!meta.clock.source.empty()) {
    add("Clock source", text(fmt::format("{}, {:.4g} ns per tick", meta.clock.source, meta.clock.ns_per_tick)));
  }
  // What it is, the summary's card says: facts about the run stay one line each.
  add("Instrumented time", Sentence().duration(data.instrumented_ns));
  return facts;
}

void overview(const ReportData& data, std::vector<Section>& out) {
  const Profile& profile = *data.profile;
  const Completeness& c = profile.completeness;
  Section section{"summary", "Summary", {}};
  Cards cards;
  cards.items.push_back(card("Session duration", report::format_duration(profile.meta.duration_ns),
                             "from the session start to the snapshot"));
  cards.items.push_back(card("Instrumented time", report::format_duration(data.instrumented_ns),
                             "top-level scopes summed over threads; the 100% of every percentage"));
  cards.items.push_back(card("Scopes recorded", report::format_count(c.scopes_recorded),
                             report::format_count(profile.scopes.size(), "distinct name", "distinct names")));
  const auto exited = static_cast<std::uint64_t>(
      std::count_if(profile.threads.begin(), profile.threads.end(), [](const ThreadInfo& t) { return t.exited; }));
  cards.items.push_back(card("Threads", report::format_count(profile.threads.size()),
                             fmt::format("{} exited", report::format_count(exited))));
  if (profile.memory_counters.empty()) {
    cards.items.push_back(card("Peak memory", "n/a", "no named memory counters"));
  } else {
    cards.items.push_back(card(
        "Peak memory", report::format_bytes(profile.memory.peak_bytes),
        fmt::format("at {}, over {}", report::format_duration(profile.memory.peak_time_ns),
                    report::format_count(profile.memory_counters.size(), "named counter", "named counters"))));
  }
  if (profile.heap.tracked) {
    const HeapSummary& h = profile.heap;
    const std::string where =
        h.peak_node == 0 ? std::string("outside any scope")
                         : "in " + report::capped_name(profile.node_path(h.peak_node), report::kTextDisplayLimit);
    cards.items.push_back(card("Peak heap", report::format_bytes(h.peak_bytes),
                               fmt::format("at {}, {}", report::format_duration(h.peak_time_ns), where)));
  }
  if (profile.cpu.sampled) {
    const analysis::SampleCount& all = data.cpu.total;
    cards.items.push_back(card("CPU samples", report::format_count(all.samples),
                               fmt::format("{} of {} time, {}", report::format_duration(all.ns),
                                           profile.cpu.mode == "wall" ? "wall" : "CPU", profile.cpu.mechanism)));
  }
  if (data.gpu) {
    cards.items.push_back(card("GPU time", report::format_duration(data.gpu->gpu_ns()),
                               fmt::format("{} · {} · {}", report::format_count(data.gpu->kernel_count, "kernel", "kernels"),
                                           report::format_count(data.gpu->memcpy_count, "copy", "copies"),
                                           report::format_count(profile.gpu.devices.size(), "device", "devices"))));
  }
  cards.items.push_back(
      card("Spans kept", c.spans_enabled ? report::format_count(c.spans_kept) : std::string("none"), spans_detail(c)));
  cards.items.push_back(overhead_card(profile, data.instrumented_ns));
  section.add(std::move(cards));
  if (profile.scopes.empty()) section.say(analysis::no_scopes_hint());
  out.push_back(std::move(section));
}

}  // namespace nnprof::report::sections
