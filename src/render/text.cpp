// The plain-text renderer: headings underlined with dashes, facts as aligned fields, tables
// aligned in columns, lists with dashes. Pictures are left out: their numbers are in tables.
#include <cstddef>
#include <iterator>
#include <ostream>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include <fmt/format.h>

#include "report/format.hpp"
#include "render/sentence_markup.hpp"
#include "nnprof/error.hpp"
#include "render/render.hpp"
#include "render/strings.hpp"

namespace nnprof::render {
namespace {

using namespace report;

// The report is written into one string and handed to the stream once: a stream insertion
// per piece cost more than the pieces.
class TextWriter {
 public:
  explicit TextWriter(const Document& document) : names_(names_of(document)) {}

  void field(std::string_view label, const auto& append_value) {
    // At least one space after the colon, however long the label.
    out_ += "  ";
    const std::size_t start = out_.size();
    append_plain_text(out_, label);
    out_ += ':';
    const std::size_t width = display_width(std::string_view(out_).substr(start));
    out_.append(width < 20 ? 20 - width : 1, ' ');
    append_value();
    out_ += '\n';
  }
  void sentence(const Sentence& s) { render::append_text_of(out_, names_, s, render::kPlainText); }
  void line(std::string_view lead, const Sentence& s) {
    out_ += lead;
    sentence(s);
    out_ += '\n';
  }

  void operator()(const Subheading& b) {
    out_ += "\n  ";
    append_plain_text(out_, b.title);
    out_ += ":\n";
  }
  void operator()(const Paragraph& b) { line("  ", b.text); }
  void operator()(const Facts& b) {
    for (const Fact& fact : b.items) field(fact.label, [&] { sentence(fact.value); });
  }
  void operator()(const Bullets& b) {
    for (const Sentence& item : b.items) line("  - ", item);
  }
  void operator()(const Table& b) {
    const bool tree = b.style == Table::Style::Tree;
    append_text_table(out_, b.columns, b.rows.size(), [&](std::string& cell, std::size_t r, std::size_t c) {
      // A tree's names are indented two spaces per level.
      if (tree && c == 0 && r < b.depths.size() && b.depths[r] > 1)
        cell.append(2 * static_cast<std::size_t>(b.depths[r] - 1), ' ');
      if (c < b.rows[r].size()) append_plain_text(cell, b.rows[r][c].text);
    });
  }
  void operator()(const Findings& b) {
    if (b.items.empty()) line("  - ", b.none);
    for (const Finding& f : b.items) {
      out_ += "  - [";
      out_ += f.severity;
      out_ += "] ";
      append_plain_text(out_, f.title);
      out_ += ": ";
      sentence(f.description);
      line(" ", f.suggestion);
    }
  }
  void operator()(const Recommendations& b) {
    if (b.items.empty()) line("  ", b.none);
    for (std::size_t i = 0; i < b.items.size(); ++i) {
      const Recommendation& r = b.items[i];
      fmt::format_to(std::back_inserter(out_), "  {}. ", i + 1);
      sentence(r.title);
      out_ += " (";
      sentence(r.gain);
      out_ += ")\n";
      line("     Evidence: ", r.evidence);
      for (const Sentence& step : r.steps) line("     - ", step);
    }
  }
  void operator()(const Cards& b) {
    for (const Card& card : b.items)
      field(card.label, [&] {
        append_plain_text(out_, card.value);
        if (card.detail.empty()) return;
        out_ += " (";
        append_plain_text(out_, card.detail);
        out_ += ')';
      });
  }
  void operator()(const Picture&) {}

  void write(const Document& document) {
    append_plain_text(out_, document.title);
    out_ += '\n';
    out_.append(display_width(document.title), '=');
    out_ += '\n';
    if (!document.subtitle.empty()) {
      append_plain_text(out_, document.subtitle);
      out_ += '\n';
    }
    (*this)(document.about);
    write_sections(document);
  }
  void write_sections(const Document& document) {
    for (const Section& section : document.sections) {
      if (only_pictures(section)) continue;
      // A heading: a blank line, the title, and a rule of dashes as wide as it.
      out_ += '\n';
      const std::size_t start = out_.size();
      append_plain_text(out_, section.title);
      const std::size_t width = display_width(std::string_view(out_).substr(start));
      out_ += '\n';
      out_.append(width, '-');
      out_ += '\n';
      for (const Block& block : section.blocks) std::visit(*this, block);
    }
  }
  void flush_to(std::ostream& out) const { out.write(out_.data(), static_cast<std::streamsize>(out_.size())); }

 private:
  const Profile& names_;
  std::string out_;
};

}  // namespace

void write_text(const Document& document, std::ostream& out) {
  TextWriter writer(document);
  writer.write(document);
  writer.flush_to(out);
  if (!out) throw Error("could not write the text report: the output stream failed");
}

void write_text_sections(const Document& document, std::ostream& out) {
  TextWriter writer(document);
  writer.write_sections(document);
  writer.flush_to(out);
  if (!out) throw Error("could not write the text report: the output stream failed");
}

}  // namespace nnprof::render
