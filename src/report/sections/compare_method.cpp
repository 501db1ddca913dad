// How the scopes were judged, the comparison's caveats, and why each scope with a note has the
// verdict it has (the tables have no room for a sentence per row).
#include <string>

#include <fmt/format.h>

#include "report/format.hpp"
#include "report/comparison_sections.hpp"

namespace nnprof::report::sections {

void compare_method(const Comparison& c, std::vector<Section>& out) {
  const CompareOptions& o = c.options;
  Section section{"method", "Method and notes", {}};
  section.say(Sentence()
                  .words(fmt::format("Each scope's per-call durations are compared with a two-sided Mann-Whitney U "
                                     "test (Welch's test on mean and standard deviation where spans are missing), "
                                     "alpha {}; a verdict needs ",
                                     o.alpha))
                  .count(o.min_calls)
                  .words(fmt::format(" calls on each side, and a significant change of the mean time per call below "
                                     "{:.1f}% counts as stable.",
                                     o.min_change * 100.0)));
  Bullets notes;
  for (const std::string& note : c.notes) notes.items.push_back(Sentence().words(report::capped_name(note, report::kTextDisplayLimit)));
  // Scopes with too few calls are many and alike: named in one line.
  Sentence too_few;
  for (const ScopeChange& s : c.scopes) {
    if (s.note.empty()) continue;
    if (s.test == CompareTest::None && s.note.starts_with("too few calls")) {
      if (!too_few.empty()) too_few.words(", ");
      too_few.name(report::capped_name(s.name));
    } else {
      notes.items.push_back(
          Sentence().name(report::capped_name(s.name)).words(": ").words(report::capped_name(s.note, report::kTextDisplayLimit)));
    }
  }
  if (!too_few.empty())
    notes.items.push_back(Sentence()
                              .words("Too few calls for a verdict (fewer than ")
                              .count(o.min_calls)
                              .words(" in a run): ")
                              .append(too_few));
  if (!notes.items.empty()) section.add(std::move(notes));
  out.push_back(std::move(section));
}

}  // namespace nnprof::report::sections
