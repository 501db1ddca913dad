// What each model is, from its description: sizes, parameters and memory.
#include "report/format.hpp"
#include "report/cells.hpp"
#include "report/model_comparison_sections.hpp"

namespace nnprof::report::sections {

void model_compare_specifications(const ModelComparison& c, std::vector<Section>& out) {
  Table t;
  t.id = "model-specifications";
  t.columns = {{"Model", Align::Left, "model"},          {"Dimensions", Align::Right, "d_model"},
               {"Layers", Align::Right, "layers"},       {"Heads", Align::Right, "heads"},
               {"Parameters", Align::Right, "parameters"}, {"Context", Align::Right, "context"},
               {"Vocabulary", Align::Right, "vocab"},    {"Weights", Align::Right, "weight_bytes"},
               {"KV cache", Align::Right, "kv_cache_bytes"}};
  for (const ModelRun& m : c.models) {
    const ModelInfo& i = m.info;
    t.row({name_cell(i.name), count_cell(i.d_model), count_cell(i.layers), count_cell(i.heads),
           count_cell(i.parameters), count_cell(i.context), count_cell(i.vocab), bytes_cell(i.weight_bytes),
           i.kv_cache_bytes == 0 ? Cell::number("none", 0.0) : bytes_cell(i.kv_cache_bytes)});
  }
  Section section{"specifications", "Model Specifications", {}};
  section.add(std::move(t));
  out.push_back(std::move(section));
}

}  // namespace nnprof::report::sections
