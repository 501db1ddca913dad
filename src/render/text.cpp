// The plain-text renderer: headings underlined with dashes, facts as aligned fields, tables
// aligned in columns, lists with dashes. Pictures are left out: their numbers are in tables.
#include <cstddef>
#include <ostream>
#include <string>
#include <string_view>
#include <variant>

#include <fmt/format.h>

#include "report/format.hpp"
#include "render/sentence_markup.hpp"
#include "nnprof/error.hpp"
#include "render/render.hpp"
#include "render/strings.hpp"

namespace nnprof::render {
namespace {

using namespace report;

class TextWriter {
 public:
  TextWriter(const Document& document, std::ostream& out) : names_(names_of(document)), out_(out) {}

  void field(std::string_view label, std::string_view value) {
    // At least one space after the colon, however long the label.
    out_ << fmt::format("  {:<19} {}\n", fmt::format("{}:", report::plain_text(label)), report::plain_text(value));
  }
  std::string sentence(const Sentence& s) const { return render::text_of(names_, s, render::kPlainText); }

  void operator()(const Subheading& b) { out_ << "\n  " << report::plain_text(b.title) << ":\n"; }
  void operator()(const Paragraph& b) { out_ << "  " << sentence(b.text) << '\n'; }
  void operator()(const Facts& b) {
    for (const Fact& fact : b.items) field(fact.label, sentence(fact.value));
  }
  void operator()(const Bullets& b) {
    for (const Sentence& item : b.items) out_ << "  - " << sentence(item) << '\n';
  }
  void operator()(const Table& b) {
    std::vector<report::TableColumn> columns;
    for (const Column& c : b.columns) columns.push_back({c.header, c.align});
    report::TextTable table(std::move(columns));
    for (std::size_t r = 0; r < b.rows.size(); ++r) {
      std::vector<std::string> cells;
      for (const Cell& cell : b.rows[r]) cells.push_back(cell.text);
      // A tree's names are indented two spaces per level.
      if (b.style == Table::Style::Tree && !cells.empty() && r < b.depths.size() && b.depths[r] > 1)
        cells[0].insert(0, 2 * static_cast<std::size_t>(b.depths[r] - 1), ' ');
      table.add_row(std::move(cells));
    }
    table.write(out_);
  }
  void operator()(const Findings& b) {
    if (b.items.empty()) out_ << "  - " << sentence(b.none) << '\n';
    for (const Finding& f : b.items)
      out_ << fmt::format("  - [{}] {}: {} {}\n", f.severity, report::plain_text(f.title), sentence(f.description),
                          sentence(f.suggestion));
  }
  void operator()(const Recommendations& b) {
    if (b.items.empty()) out_ << "  " << sentence(b.none) << '\n';
    for (std::size_t i = 0; i < b.items.size(); ++i) {
      const Recommendation& r = b.items[i];
      out_ << fmt::format("  {}. {} ({})\n", i + 1, sentence(r.title), sentence(r.gain));
      out_ << "     Evidence: " << sentence(r.evidence) << '\n';
      for (const Sentence& step : r.steps) out_ << "     - " << sentence(step) << '\n';
    }
  }
  void operator()(const Cards& b) {
    for (const Card& card : b.items)
      field(card.label, card.detail.empty() ? card.value : fmt::format("{} ({})", card.value, card.detail));
  }
  void operator()(const Picture&) {}

  void write(const Document& document) {
    out_ << report::plain_text(document.title) << '\n' << std::string(report::display_width(document.title), '=') << '\n';
    if (!document.subtitle.empty()) out_ << report::plain_text(document.subtitle) << '\n';
    (*this)(document.about);
    write_sections(document);
  }
  void write_sections(const Document& document) {
    for (const Section& section : document.sections) {
      if (only_pictures(section)) continue;
      report::write_text_heading(out_, report::plain_text(section.title));
      for (const Block& block : section.blocks) std::visit(*this, block);
    }
  }

 private:
  const Profile& names_;
  std::ostream& out_;
};

}  // namespace

void write_text(const Document& document, std::ostream& out) {
  TextWriter(document, out).write(document);
  if (!out) throw Error("could not write the text report: the output stream failed");
}

void write_text_sections(const Document& document, std::ostream& out) {
  TextWriter(document, out).write_sections(document);
  if (!out) throw Error("could not write the text report: the output stream failed");
}

}  // namespace nnprof::render
