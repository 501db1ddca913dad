// Facts every report states about a profile in the same words: how complete it is and what
// recording cost, what memory the counters hold, what to do when nothing was recorded.
#pragma once

#include <string_view>
#include <vector>

#include "analysis/sentence.hpp"
#include "nnprof/profile.hpp"

namespace nnprof::analysis {

/// A labelled fact: "Spans: 4,096 kept, 1,934 dropped, ...".
struct Fact {
  std::string_view label;
  Sentence value;
};

/// Scopes recorded, spans kept and lost (with the buffer policy and memory cap), memory
/// events dropped, hot-path buffer allocations and the instrumentation overhead.
std::vector<Fact> completeness_facts(const Profile& profile);

/// What the completeness facts leave a reader wondering: whether lost spans make the
/// statistics wrong.
inline constexpr std::string_view kStatisticsAreComplete =
    "Statistics and the call tree are complete: they count every recorded scope, even when "
    "spans were dropped or overwritten.";

/// "All counters: current 1.50 KiB, peak 3.00 MiB at 42.0 ms after the session start."
Sentence memory_totals(const Profile& profile);

/// What to do when a profile has no scopes.
Sentence no_scopes_hint();

}  // namespace nnprof::analysis
