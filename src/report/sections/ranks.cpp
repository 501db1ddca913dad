// Ranks: a merged distributed job (Profile::ranks) as its ranks saw it: step times per rank,
// the straggler, who waited for whom at which collective, the collectives whose members arrived
// furthest apart, communication overlapped with computation, and the critical path of the
// slowest step across ranks. From ReportData::ranks.
#include <algorithm>
#include <cstdint>
#include <numeric>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "report/cells.hpp"
#include "report/format.hpp"
#include "report/sections.hpp"

namespace nnprof::report::sections {
namespace {

std::string rank_label(const Profile& profile, std::uint32_t index) {
  if (index >= profile.ranks.size()) return "unknown rank";
  return fmt::format("rank {}", profile.ranks[index].rank);
}

// A ratio minus one as a signed percentage: "+25.0%", "0.0%".
Cell excess_cell(double excess) {
  // "+" only where the rounded figure is above zero: "+0.0%" would read as a difference.
  return Cell::number(excess >= 0.0005 ? fmt::format("+{:.1f}%", excess * 100.0) : fmt::format("{:.1f}%", excess * 100.0),
                      excess);
}

Table ranks_table(const Profile& profile, const RankAnalysis& ranks) {
  Table table;
  table.id = "ranks";
  table.style = Table::Style::Sortable;
  table.columns = {left("Rank", "rank"),           left("Host", "host"),
                   right("Steps", "steps"),        right("Mean step", "mean_step_ns"),
                   right("Best step", "best_step_ns"), right("Worst step", "worst_step_ns"),
                   right("Mean busy", "mean_busy_ns"), right("Busy vs fastest", "straggler_vs_fastest"),
                   right("Busy vs own best", "straggler_vs_own_best"), right("Waited", "wait_ns"),
                   right("Made others wait", "caused_wait_ns"), right("Communication", "communication_ns"),
                   right("Overlapped", "overlap_share")};
  for (const RankSummary& r : ranks.ranks) {
    const RankInfo& info = profile.ranks[r.rank];
    table.row({Cell::words(rank_label(profile, r.rank)), Cell::words(info.hostname), count_cell(r.steps.size()),
               duration_cell(r.mean_step_ns), duration_cell(r.best_step_ns), duration_cell(r.worst_step_ns),
               duration_cell(r.mean_busy_ns), excess_cell(r.straggler_vs_fastest), excess_cell(r.straggler_vs_own_best),
               duration_cell(r.wait_ns), duration_cell(r.caused_wait_ns), duration_cell(r.communication_ns),
               share_cell(r.overlap_ns, r.communication_ns)});
  }
  return table;
}

Table waits_table(const Profile& profile, const RankAnalysis& ranks, std::size_t max_rows) {
  Table table;
  table.id = "rank-waits";
  table.columns = {left("Rank", "waiter"),       left("Waited for", "waited_for"), left("Collective", "operation"),
                   left("Group", "group"),       right("Calls", "calls"),          right("Total wait", "total_ns"),
                   right("Longest wait", "max_ns")};
  for (std::size_t i = 0; i < ranks.waits.size() && i < max_rows; ++i) {
    const RankWait& w = ranks.waits[i];
    table.row({Cell::words(rank_label(profile, w.waiter)), Cell::words(rank_label(profile, w.waited_for)),
               Cell::words(w.operation), name_cell(w.group), count_cell(w.calls), duration_cell(w.total_ns),
               duration_cell(w.max_ns)});
  }
  return table;
}

Table collectives_table(const Profile& profile, const RankAnalysis& ranks, std::size_t max_rows) {
  std::vector<std::size_t> order(ranks.collectives.size());
  std::iota(order.begin(), order.end(), std::size_t{0});
  std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) {
    return ranks.collectives[a].spread_ns() > ranks.collectives[b].spread_ns();
  });
  if (order.size() > max_rows) order.resize(max_rows);
  Table table;
  table.id = "rank-collectives";
  table.columns = {left("Collective", "operation"), left("Group", "group"),       right("Seq", "seq"),
                   right("Bytes", "bytes"),         right("Members", "members"),  right("First arrival", "first_arrival_ns"),
                   right("Spread", "spread_ns"),    left("Last to arrive", "last_rank")};
  for (const std::size_t i : order) {
    const CollectiveCall& c = ranks.collectives[i];
    table.row({Cell::words(c.operation), name_cell(c.group), count_cell(static_cast<std::uint64_t>(std::max<std::int64_t>(0, c.seq))),
               bytes_cell(c.bytes), count_cell(c.arrivals.size()), duration_cell(c.first_arrival_ns),
               duration_cell(c.spread_ns()), Cell::words(rank_label(profile, c.last_rank))});
  }
  return table;
}

Table path_table(const Profile& profile, const RankAnalysis& ranks, std::size_t max_rows) {
  const RankCriticalPath& path = ranks.critical_path;
  std::vector<std::size_t> shown(path.segments.size());
  std::iota(shown.begin(), shown.end(), std::size_t{0});
  if (shown.size() > max_rows) {
    std::stable_sort(shown.begin(), shown.end(), [&](std::size_t a, std::size_t b) {
      return path.segments[a].duration_ns() > path.segments[b].duration_ns();
    });
    shown.resize(max_rows);
    std::sort(shown.begin(), shown.end());
  }
  Table table;
  table.id = "rank-critical-path";
  table.columns = {right("#", "index"),       right("Start", "start_ns"), left("Rank", "rank"), left("Kind", "kind"),
                   left("Scope", "scope"),    right("Duration", "ns"),    right("% of the step", "pct")};
  const double length = static_cast<double>(path.duration_ns());
  for (const std::size_t i : shown) {
    const RankPathSegment& s = path.segments[i];
    std::string what = s.name == kNone ? std::string(s.kind == RankPathKind::Compute ? "[outside any scope]" : "")
                                       : profile.str(s.name);
    if (s.kind == RankPathKind::Collective && s.collective < ranks.collectives.size()) {
      const CollectiveCall& c = ranks.collectives[s.collective];
      what = fmt::format("{} ({} #{})", what.empty() ? c.operation : what, c.group, c.seq);
    }
    table.row({rank_cell(i), duration_cell(s.start_ns), Cell::words(rank_label(profile, s.rank)),
               Cell::words(to_string(s.kind)), name_cell(what), duration_cell(s.duration_ns()),
               fraction_cell(length > 0.0 ? static_cast<double>(s.duration_ns()) / length : 0.0)});
  }
  return table;
}

}  // namespace

void ranks(const ReportData& data, std::vector<Section>& out) {
  if (!data.ranks) return;
  const Profile& profile = *data.profile;
  const RankAnalysis& ranks = *data.ranks;
  Section section{"ranks", "Ranks", {}};
  const std::int32_t world = profile.ranks.empty() ? 0 : profile.ranks.front().world_size;
  Sentence intro;
  intro.count(profile.ranks.size(), "rank", "ranks").words(" of a job of ").count(static_cast<std::uint64_t>(std::max(0, world)));
  intro.words(", merged onto rank 0's clock. ");
  if (ranks.step_name != kNone)
    intro.words("A step is a call of ").scope(ranks.step_name).words("; every rank has ").count(ranks.steps, "step", "steps").words(".");
  else
    intro.words("No scope marks a step on every rank: each rank's whole run counts as one step (nnprof::analyze_ranks takes the name of a step scope).");
  section.say(std::move(intro));

  Facts facts;
  Sentence straggler;
  if (ranks.straggler != kNone) {
    const RankSummary& r = ranks.ranks[ranks.straggler];
    straggler.words(rank_label(profile, ranks.straggler)).key().words(" (" + profile.ranks[ranks.straggler].hostname + "): ");
    straggler.words("the others waited ").duration(r.caused_wait_ns).words(" for it in all; its own work per step was ");
    straggler.words(fmt::format("{:+.1f}%", r.straggler_vs_fastest * 100.0)).words(" against the fastest rank and ");
    straggler.words(fmt::format("{:+.1f}%", r.straggler_vs_own_best * 100.0)).words(" against its own best step.");
  } else {
    straggler.words("none: no rank made the others wait longer than the clocks' error.");
  }
  facts.items.push_back({"Straggler", std::move(straggler)});
  Sentence clock;
  clock.words("residual error up to ").duration(ranks.clock_residual_ns).words("; the median arrival spread at a collective is ");
  clock.duration(ranks.median_spread_ns);
  if (ranks.clock_residual_ns > static_cast<double>(ranks.median_spread_ns))
    clock.words(": most waits are smaller than the clocks' error, so read them as bounds, not measurements.");
  else
    clock.words(".");
  facts.items.push_back({"Clocks", std::move(clock)});
  Sentence calls;
  calls.count(ranks.collectives.size(), "collective call", "collective calls").words(" matched across ranks by group and sequence number");
  if (ranks.incomplete_collectives > 0)
    calls.words("; ").count(ranks.incomplete_collectives).words(" of them lack members (a rank's profile is missing or dropped spans)");
  calls.words(".");
  facts.items.push_back({"Collectives", std::move(calls)});
  section.add(std::move(facts));

  section.subheading("Step times per rank");
  section.add(ranks_table(profile, ranks));
  section.say(Sentence().words("Busy is a step's time less its waiting at collectives: a rank's own work. \"Busy vs fastest\" "
                               "compares its mean with the fastest rank's, \"vs own best\" with its best step. Overlapped "
                               "is the share of communication that ran while a scope without collectives did."),
              true);

  if (!ranks.waits.empty()) {
    section.subheading("Who waited for whom");
    section.add(waits_table(profile, ranks, data.limits.rank_waits));
    say_top_of(section, std::min(ranks.waits.size(), data.limits.rank_waits), ranks.waits.size(), "rows");
    section.say(Sentence().words("A rank's wait at a collective is the last member's arrival minus its own; it waited for "
                                 "the rank that arrived last."),
                true);
  }
  if (!ranks.collectives.empty()) {
    section.subheading("Collectives with the widest arrival spread");
    section.add(collectives_table(profile, ranks, data.limits.rank_collectives));
    say_top_of(section, std::min(ranks.collectives.size(), data.limits.rank_collectives), ranks.collectives.size(),
               "collective calls");
  }
  if (!ranks.critical_path.empty()) {
    const RankCriticalPath& path = ranks.critical_path;
    section.subheading(fmt::format("Critical path of the slowest step (step {})", path.step));
    Sentence summary;
    summary.duration(path.duration_ns()).words(" from its first start to its last end: ").duration(path.compute_ns);
    summary.words(" of computation and ").duration(path.collective_ns).words(" inside collectives on the path, over ");
    summary.count(path.segments.size(), "segment", "segments").words(". At each collective the path goes on on the rank "
                                                                      "that arrived last, so waiting is never on it.");
    section.say(std::move(summary));
    section.add(path_table(profile, ranks, data.limits.rank_path_segments));
    say_top_of(section, std::min(path.segments.size(), data.limits.rank_path_segments), path.segments.size(), "segments");
  }
  out.push_back(std::move(section));
}

}  // namespace nnprof::report::sections
