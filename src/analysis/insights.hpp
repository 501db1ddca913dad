// What a report recommends: short findings about where the time and memory go, each a
// sentence with its numbers, the same in every report format.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "analysis/sentence.hpp"
#include "nnprof/profile.hpp"

namespace nnprof::analysis {

enum class InsightKind : std::uint8_t {
  Concentration,  ///< share of instrumented time in the top scopes by self time
  HottestSelf,    ///< the scope with the most self time
  Inflation,      ///< scopes whose timings instrumentation dominates (or why none can be named)
  Allocation,     ///< the scopes that allocate most
  Frequency,      ///< scopes called so often that per-call costs add up
  HeapAllocation, ///< the scopes that allocate the most heap bytes (heap tracking)
};

/// One finding and the sentence that states it.
struct Insight {
  InsightKind kind = InsightKind::Concentration;
  Sentence sentence;
};

struct InsightOptions {
  std::size_t concentration_scopes = 5;  ///< scopes summed for the concentration
  double inflation_factor = 10.0;        ///< see inflated_by_instrumentation
  std::size_t scopes_named = 3;          ///< scopes one allocation or frequency insight names
  std::uint64_t high_frequency_calls = 1000;  ///< calls from which a scope counts as frequent
};

/// The insights about `profile`, in the order reports list them; none for a profile without
/// scopes. The allocation insight is left out when no allocation was attributed to a scope; the
/// heap allocation insight follows it when heap tracking ran and a scope allocated heap bytes.
std::vector<Insight> insights(const Profile& profile, const InsightOptions& options = {});

}  // namespace nnprof::analysis
