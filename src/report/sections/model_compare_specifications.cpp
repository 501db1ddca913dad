// What each model is, from its description: sizes, parameters and memory.
#include "report/format.hpp"
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
  const auto count = [](std::uint64_t n) { return Cell::number(report::format_count(n), static_cast<double>(n)); };
  for (const ModelRun& m : c.models) {
    const ModelInfo& i = m.info;
    t.row({model_cells::name(i.name), count(i.d_model), count(i.layers), count(i.heads), count(i.parameters),
           count(i.context), count(i.vocab),
           Cell::number(report::format_bytes(i.weight_bytes), static_cast<double>(i.weight_bytes)),
           i.kv_cache_bytes == 0 ? Cell::number("none", 0.0)
                                 : Cell::number(report::format_bytes(i.kv_cache_bytes), static_cast<double>(i.kv_cache_bytes))});
  }
  Section section{"specifications", "Model Specifications", {}};
  section.add(std::move(t));
  out.push_back(std::move(section));
}

}  // namespace nnprof::report::sections
