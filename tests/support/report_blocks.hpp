// Reading a report document's blocks in tests: the sections a builder makes, the blocks of one
// kind, a table by id, cell texts, and the paragraphs as plain text.
#pragma once

#include <gtest/gtest.h>

#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "render/sentence_markup.hpp"
#include "report/sections.hpp"

namespace nnprof::report_testing {

using Row = std::vector<std::string>;

/// The sections `builder` appends for `data`.
inline std::vector<report::Section> build(report::SectionBuilder builder, const report::ReportData& data) {
  std::vector<report::Section> out;
  builder(data, out);
  return out;
}

/// The blocks of type B in `section`, in order.
template <typename B>
std::vector<const B*> blocks_of(const report::Section& section) {
  std::vector<const B*> found;
  for (const report::Block& block : section.blocks)
    if (const B* b = std::get_if<B>(&block)) found.push_back(b);
  return found;
}

/// The table `id` of `section`, or nullptr (and a test failure).
inline const report::Table* table_of(const report::Section& section, std::string_view id) {
  for (const report::Table* table : blocks_of<report::Table>(section))
    if (table->id == id) return table;
  ADD_FAILURE() << "no table " << id << " in " << section.id;
  return nullptr;
}

/// table_of, as a reference: an empty table (and a test failure) when there is none.
inline const report::Table& table_with_id(const report::Section& section, std::string_view id) {
  static const report::Table kNone;
  const report::Table* table = table_of(section, id);
  return table != nullptr ? *table : kNone;
}

inline Row texts(const std::vector<report::Cell>& cells) {
  Row row;
  for (const report::Cell& cell : cells) row.push_back(cell.text);
  return row;
}

inline Row headers(const report::Table& table) {
  Row row;
  for (const report::Column& column : table.columns) row.push_back(column.header);
  return row;
}

inline std::vector<Row> rows_of(const report::Table& table) {
  std::vector<Row> rows;
  for (const auto& cells : table.rows) rows.push_back(texts(cells));
  return rows;
}

/// The paragraphs of `section`, rendered as plain text.
inline std::vector<std::string> paragraphs(const Profile& profile, const report::Section& section) {
  std::vector<std::string> said;
  for (const report::Paragraph* p : blocks_of<report::Paragraph>(section)) said.push_back(render::text_of(profile, p->text));
  return said;
}

/// Whether a paragraph of `section` contains `needle`.
inline bool says(const Profile& profile, const report::Section& section, std::string_view needle) {
  for (const std::string& paragraph : paragraphs(profile, section))
    if (paragraph.find(needle) != std::string::npos) return true;
  return false;
}

}  // namespace nnprof::report_testing
