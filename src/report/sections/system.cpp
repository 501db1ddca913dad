// System and energy: what the system monitor sampled (counter tracks of the process, the host,
// its cgroup and GPUs), the energy of each domain with the method that produced it (a modelled
// figure is labelled modelled, never shown as measured), the carbon of that energy, and the
// energy per step and per scope cut out of the power timeline. From ReportData::system.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <memory>
#include <string_view>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "analysis/energy.hpp"
#include "report/charts/html_charts.hpp"
#include "report/html_escape.hpp"
#include "report/cells.hpp"
#include "report/format.hpp"
#include "report/metric_values.hpp"
#include "report/sections.hpp"

namespace nnprof::report::sections {
namespace {

// A track's value in its unit, readable: "12.3%", "1.20 GiB", "4.00 MiB/s", "85.2 W", "61 °C".
std::string track_value(double value, const std::string& unit) {
  if (!std::isfinite(value)) return "n/a";
  if (unit == "percent") return fmt::format("{:.1f}%", value);
  if (unit == "bytes") return format_bytes(static_cast<std::uint64_t>(std::llround(std::max(0.0, value))));
  if (unit == "bytes/s") return format_byte_rate(value);
  if (unit == "W") return format_si(value, "W");
  if (unit == "celsius") return fmt::format("{:.0f} °C", value);
  return format_metric_value(value, unit);
}
Cell track_cell(double value, const std::string& unit) {
  if (!std::isfinite(value)) return not_known();
  return Cell::number(track_value(value, unit), value);
}

// Joules with the same energy in watt-hours beside: "45.0 kJ (12.5 Wh)".
std::string energy_text(double joules) { return fmt::format("{} ({})", format_si(joules, "J"), format_si(joules / 3600.0, "Wh")); }
Cell energy_cell(double joules) { return Cell::number(energy_text(joules), joules); }
Cell watts_cell(double watts) { return Cell::number(format_si(watts, "W"), watts); }
// What produced a figure, a modelled one said as such.
std::string method_text(const EnergyDomain& domain) {
  return domain.method == EnergyMethod::Modelled ? std::string("modelled (estimate)")
                                                 : std::string(to_string(domain.method)) + " (measured)";
}
// Grams of CO2e in the unit that reads best: "2.24 mg", "12.3 g", "4.56 kg", "1.20 t".
std::string grams_text(double grams) {
  const double magnitude = std::fabs(grams);
  if (magnitude >= 1e6) return fmt::format("{:.3g} t", grams / 1e6);
  if (magnitude >= 1e3) return fmt::format("{:.3g} kg", grams / 1e3);
  if (magnitude >= 1.0 || magnitude == 0.0) return fmt::format("{:.3g} g", grams);
  return fmt::format("{:.3g} mg", grams * 1e3);
}
std::string mix_text(bool measured) { return measured ? "measured" : "includes modelled"; }

Sentence limits_sentence(const SystemLimits& limits) {
  Sentence s;
  const bool cgroup_limited = limits.cgroup_memory_bytes > 0 || limits.cgroup_cpu_cores > 0.0;
  if (cgroup_limited) {
    s.words(fmt::format("cgroup {}", limits.cgroup.empty() ? std::string("of the process") : limits.cgroup));
    if (limits.cgroup_cpu_cores > 0.0) s.words(": cpu.max ").ratio(limits.cgroup_cpu_cores, "cores");
    else s.words(": no CPU limit");
    if (limits.cgroup_memory_bytes > 0) s.words(", memory.max ").bytes(limits.cgroup_memory_bytes);
    else s.words(", no memory limit");
    s.words("; cgroup percentages are of these limits. Host: ");
  } else {
    s.words("no cgroup limits: percentages are of the host, ");
  }
  s.count(limits.logical_cpus, "logical CPU", "logical CPUs");
  if (limits.host_memory_bytes > 0) s.words(" and ").bytes(limits.host_memory_bytes).words(" of memory");
  s.words(".");
  return s;
}

// A track read at least once and 0 every time (an idle interface, a disk nobody used): listed
// by name under the table rather than as a row of zeros.
bool reads_zero_throughout(const analysis::TrackSummary& t) { return t.samples > 0 && t.min == 0.0 && t.max == 0.0; }

Table tracks_table(const SystemData& system) {
  Table table;
  table.id = "system-tracks";
  table.style = Table::Style::Sortable;
  table.filter_label = "Filter tracks by name";
  table.columns = {left("Track", "track"), right("Samples", "samples"), right("Min", "min"), right("Mean", "mean"),
                   right("p95", "p95"),   right("Max", "max"),         right("Last", "last")};
  for (const analysis::TrackSummary& t : system.tracks) {
    if (reads_zero_throughout(t)) continue;  // named in one sentence under the table
    table.row({Cell::named(t.name), count_cell(t.samples), track_cell(t.min, t.unit), track_cell(t.mean, t.unit),
               track_cell(t.p95, t.unit), track_cell(t.max, t.unit), track_cell(t.last, t.unit)});
  }
  return table;
}

Table domains_table(const SystemData& system) {
  Table table;
  table.id = "system-energy";
  table.columns = {left("Domain", "domain"), left("Kind", "kind"), left("Method", "method"), right("Energy", "joules"),
                   right("Mean power", "watts"), right("Band", "uncertainty"), left("Note", "note")};
  for (const analysis::DomainSummary& d : system.domains) {
    const EnergyDomain& domain = *d.domain;
    std::string note = domain.note;
    if (!d.counted) note = note.empty() ? "not added: holds the other domains" : note + "; not added: holds the other domains";
    table.row({Cell::named(domain.name), Cell::words(domain.kind), Cell::words(method_text(domain)), energy_cell(domain.joules),
               watts_cell(d.mean_watts), Cell::number(fmt::format("±{}", format_percent(domain.uncertainty)), domain.uncertainty),
               Cell::words(note)});
  }
  return table;
}

void say_carbon(const CarbonEstimate& carbon, Section& section) {
  Facts facts;
  Sentence grams;
  grams.words(grams_text(carbon.grams_co2) + " CO2e").key().words(
      fmt::format(" (between {} and {})", grams_text(carbon.grams_low), grams_text(carbon.grams_high)));
  if (carbon.measured_joules < carbon.energy_joules) grams.words(", from energy that is partly modelled");
  facts.items.push_back({"Emissions", std::move(grams)});
  Sentence intensity;
  intensity.words(fmt::format("{} g CO2e/kWh, {} ({})", format_metric_value(carbon.intensity.grams_per_kwh, ""),
                              carbon.intensity.name, carbon.intensity.region));
  if (carbon.defaulted_region) intensity.words(": the world average, as no region was given");
  facts.items.push_back({"Grid intensity", std::move(intensity)});
  facts.items.push_back({"Intensity source", Sentence().words(carbon.intensity.source)});
  Sentence pue;
  pue.words(fmt::format("{:g}", carbon.pue));
  if (carbon.pue == 1.0) pue.words(" (the default: no data-centre overhead counted)");
  facts.items.push_back({"PUE", std::move(pue)});
  section.add(std::move(facts));
  section.say(Sentence().words("Carbon = energy (every domain but psys) × PUE × the grid's intensity; the band carries each "
                               "domain's uncertainty. A yearly average of the grid: the hour the run used may differ."),
              true);
}

Table steps_table(const Profile& profile, const analysis::EnergyAttribution& energy) {
  Table table;
  table.id = "system-energy-steps";
  table.columns = {left("Step", "step"),         right("Calls", "calls"),          right("Items", "items"),
                   right("Energy", "joules"),    right("Per call", "joules_per_call"), right("Per item", "joules_per_item"),
                   left("Method", "method")};
  for (const analysis::StepEnergy& s : energy.steps) {
    table.row({scope_cell(profile, s.name), count_cell(s.calls), count_cell(s.items), energy_cell(s.joules),
               Cell::number(format_si(s.joules_per_call, "J"), s.joules_per_call),
               Cell::number(format_si(s.joules_per_item, "J"), s.joules_per_item), Cell::words(mix_text(s.measured))});
  }
  return table;
}

Table scopes_table(const Profile& profile, const analysis::EnergyAttribution& energy, std::size_t shown) {
  Table table;
  table.id = "system-energy-scopes";
  table.columns = {left("Scope", "scope"),          right("Energy", "joules"), right("Share", "share"),
                   right("Mean power", "watts"),    right("Time", "seconds"),  left("Method", "method")};
  for (std::size_t i = 0; i < energy.scopes.size() && i < shown; ++i) {
    const analysis::ScopeEnergy& s = energy.scopes[i];
    table.row({scope_cell(profile, s.name), energy_cell(s.joules), fraction_cell(s.share), watts_cell(s.mean_watts),
               duration_cell(s.seconds * 1e9), Cell::words(mix_text(s.measured))});
  }
  return table;
}

// The tracks a reader looks at first, drawn in HTML: CPU, memory, GPU busy and power, energy.
bool charted(std::string_view name) {
  if (name.starts_with("energy.") || name.starts_with("process.cpu.") || name == "process.memory.rss" ||
      name == "system.cpu.busy" || name == "system.memory.used" || name.starts_with("cgroup."))
    return true;
  return name.starts_with("gpu") && (name.ends_with(".utilization") || name.ends_with(".power") || name.ends_with(".memory.used"));
}

// Most system track charts one page draws; the tracks table lists every track.
constexpr std::size_t kTrackChartLimit = 16;

// One track as the metric charts draw a gauge: a line over the session's time. The chart reads
// its title from a profile's string table, so it gets a small one of its own.
Picture track_chart(const SystemProfile& system, const SystemTrack& track) {
  auto own = std::make_shared<Profile>();
  own->strings.push_back(track.name);
  own->meta.duration_ns = system.sample_ns.empty() ? 0 : system.sample_ns.back();
  auto series = std::make_shared<MetricSeries>();
  series->name = 0;
  series->kind = MetricKind::Gauge;
  series->unit = track.unit == "percent" ? "%" : track.unit;
  for (std::size_t i = 0; i < track.values.size() && i < system.sample_ns.size(); ++i)
    if (std::isfinite(track.values[i])) series->points.push_back({system.sample_ns[i], track.values[i], 0});
  series->summary.count = series->points.size();
  series->summary.percentile_points = series->points.size();
  Picture picture;
  picture.style = report::html::kMemoryChartStyle;
  picture.draw = [own, series](std::string& html) {
    report::html::append(html, "<h3>{} <span class=\"muted\">({})</span></h3><div class=\"scroll\">",
                         report::html::escape(own->strings[0]), report::html::escape(series->unit));
    report::html::write_metric_chart(*own, *series, html);
    html += "</div>";
  };
  return picture;
}

}  // namespace

void system_energy(const ReportData& data, std::vector<Section>& out) {
  if (!data.system) return;
  const Profile& profile = *data.profile;
  const SystemProfile& monitored = profile.system;
  const SystemData& system = *data.system;
  Section section{"system", "System and energy", {}};
  section.say(Sentence()
                  .words("What the system monitor sampled every ")
                  .duration(static_cast<std::uint64_t>(monitored.interval_ms) * 1'000'000)
                  .words(": the process, the host, its cgroup and GPUs as counter tracks, the energy each domain used "
                         "with the method that produced it, and what that energy cost in carbon."));

  Facts facts;
  facts.items.push_back(
      {"Samples", Sentence().count(monitored.sample_ns.size()).words(" over ").duration(system.seconds * 1e9)});
  facts.items.push_back({"CPU basis", Sentence()
                                          .words("process CPU % is of one core (200% is two cores busy); system CPU % "
                                                 "is of all ")
                                          .count(monitored.limits.logical_cpus, "logical CPU", "logical CPUs")});
  facts.items.push_back({"Limits", limits_sentence(monitored.limits)});
  section.add(std::move(facts));

  if (!system.tracks.empty()) {
    section.subheading("Counter tracks");
    section.add(tracks_table(system));
    std::string zero;
    for (const analysis::TrackSummary& t : system.tracks)
      if (reads_zero_throughout(t)) zero += (zero.empty() ? "" : ", ") + t.name;
    if (!zero.empty()) section.say(Sentence().words("Read 0 at every sample: " + zero + "."));
    std::size_t charts = 0;
    for (const SystemTrack& track : monitored.tracks) {
      if (charts == kTrackChartLimit || !charted(track.name)) continue;
      std::size_t read = 0;
      for (const double v : track.values) read += std::isfinite(v) ? 1 : 0;
      if (read < 2) continue;
      section.add(track_chart(monitored, track));
      ++charts;
    }
  }

  if (!system.domains.empty()) {
    section.subheading("Energy");
    section.add(domains_table(system));
    const analysis::EnergyAttribution& energy = system.energy;
    if (system.carbon) {
      Sentence total;
      total.words("Energy of the run: ").words(energy_text(system.carbon->energy_joules)).key();
      if (system.carbon->measured_joules >= system.carbon->energy_joules) {
        total.words(", all of it measured.");
      } else {
        total.words(", of which ").words(energy_text(system.carbon->measured_joules)).words(
            " measured; the rest is modelled from utilisation (an estimate, not a reading).");
      }
      section.say(std::move(total));
    }
    if (system.carbon) {
      section.subheading("Carbon");
      say_carbon(*system.carbon, section);
    }
    if (!energy.steps.empty()) {
      section.subheading("Energy per step");
      section.add(steps_table(profile, energy));
      section.say(Sentence().words("Steps are the scopes that reported work items (the throughput section's scopes): "
                                   "energy per call and per item."),
                  true);
    }
    if (!energy.scopes.empty()) {
      section.subheading("Energy by scope");
      section.add(scopes_table(profile, energy, data.limits.energy_scopes));
      say_top_of(section, std::min(energy.scopes.size(), data.limits.energy_scopes), energy.scopes.size(), "scopes");
      if (energy.basis == analysis::EnergyBasis::Spans) {
        section.say(Sentence().words("The power timeline cut at each span's start and end on ")
                        .words(energy.thread < profile.threads.size() && !profile.threads[energy.thread].name.empty()
                                   ? "thread " + profile.threads[energy.thread].name
                                   : "the scope thread")
                        .words(": a scope's energy includes its children's; nested calls of one name count once."),
                    true);
      } else {
        section.say(Sentence().words("No spans were kept (a statistics-only profile): each sample's interval is given to "
                                     "the innermost scope open at that sample, so a scope's energy here is its own, "
                                     "without its children's, and is as coarse as the sampling interval."),
                    true);
      }
    }
    if (!energy.domains_without_track.empty()) {
      std::string names;
      for (const std::string& n : energy.domains_without_track) names += (names.empty() ? "" : ", ") + n;
      section.say(Sentence().words("No power track for " + names + ": its energy counts in the total but not per scope."),
                  true);
    }
  }

  if (!monitored.notes.empty()) {
    section.subheading("Notes");
    Bullets notes;
    for (const std::string& note : monitored.notes) notes.items.push_back(Sentence().words(note));
    section.add(std::move(notes));
  }
  out.push_back(std::move(section));
}

}  // namespace nnprof::report::sections
