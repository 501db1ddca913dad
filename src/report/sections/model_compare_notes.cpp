// What was not recorded and what follows from it: each model's notes, then the comparison's.
#include <string>

#include "report/model_comparison_sections.hpp"

namespace nnprof::report::sections {

void model_compare_notes(const ModelComparison& c, std::vector<Section>& out) {
  Bullets notes;
  for (const ModelRun& m : c.models)
    for (const std::string& n : m.notes) notes.items.push_back(Sentence().name(m.info.name).words(": ").words(n));
  for (const std::string& n : c.notes) notes.items.push_back(Sentence().words(n));
  if (notes.items.empty()) return;
  Section section{"notes", "Notes", {}};
  section.add(std::move(notes));
  out.push_back(std::move(section));
}

}  // namespace nnprof::report::sections
