// The Markdown renderer (GitHub-flavoured): "##" per section, "###" per subheading, facts and
// tables as tables padded so that the raw file reads as one, trees as nested lists, findings
// and steps as lists. Pictures are left out: their numbers are in tables.
#include <algorithm>
#include <cstddef>
#include <functional>
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
#include "render/markdown_escape.hpp"
#include "render/render.hpp"
#include "render/strings.hpp"

namespace nnprof::render {
namespace {

using namespace report;

// A scope name as inline Markdown, bold so that it stands out in prose and list items (and so
// that a name starting with "-" or "#" cannot open a list or a heading).
void strong(std::string& out, std::string_view name) {
  out += "**";
  append_markdown_escape(out, name);
  out += "**";
}

// Backslash escapes do not apply inside a code span: the text goes in as it is (it is ours,
// never a user string).
void code_span(std::string& out, std::string_view code) {
  out += '`';
  out += code;
  out += '`';
}

const render::Markup kMarkdown{append_markdown_escape, strong, code_span, "", ""};

// The report is written into one string and handed to the stream once.
class MarkdownWriter {
 public:
  explicit MarkdownWriter(const Document& document) : names_(names_of(document)) {}

  void sentence(std::string& out, const Sentence& s) const { render::append_text_of(out, names_, s, kMarkdown); }
  void sentence(const Sentence& s) { sentence(out_, s); }
  void escaped(std::string_view text) { append_markdown_escape(out_, text); }
  void line(std::string_view lead, const Sentence& s) {
    out_ += lead;
    sentence(s);
    out_ += '\n';
  }

  void operator()(const Subheading& b) {
    out_ += "### ";
    escaped(b.title);
    out_ += "\n\n";
  }
  void operator()(const Paragraph& b) {
    sentence(b.text);
    out_ += "\n\n";
  }
  void operator()(const Facts& b) {
    static const std::vector<Column> kColumns{{"Measure", Align::Left, ""}, {"Value", Align::Left, ""}};
    grid(kColumns, b.items.size(), [&](std::string& cell, std::size_t r, std::size_t c) {
      if (c == 0) append_markdown_escape(cell, b.items[r].label);
      else sentence(cell, b.items[r].value);
    });
  }
  void operator()(const Bullets& b) {
    for (const Sentence& item : b.items) line("- ", item);
    out_ += '\n';
  }
  void operator()(const Table& b) {
    if (b.style == Table::Style::Tree) return tree(b);
    grid(b.columns, b.rows.size(), [&](std::string& cell, std::size_t r, std::size_t c) {
      if (c < b.rows[r].size()) append_markdown_escape(cell, b.rows[r][c].text);
    });
  }
  void operator()(const Findings& b) {
    if (b.items.empty()) line("- ", b.none);
    for (const Finding& f : b.items) {
      out_ += "- **";
      escaped(f.title);
      out_ += "** (";
      out_ += f.severity;
      out_ += " severity): ";
      sentence(f.description);
      line(" ", f.suggestion);
    }
    out_ += '\n';
  }
  void operator()(const Recommendations& b) {
    if (b.items.empty()) {
      sentence(b.none);
      out_ += "\n\n";
    }
    for (std::size_t i = 0; i < b.items.size(); ++i) {
      const Recommendation& r = b.items[i];
      // Not bold: the title's scope names are bold already, and bold does not nest.
      fmt::format_to(std::back_inserter(out_), "{}. ", i + 1);
      sentence(r.title);
      out_ += " (";
      sentence(r.gain);
      out_ += ")\n";
      line("   - Evidence: ", r.evidence);
      for (const Sentence& step : r.steps) line("   - ", step);
    }
    if (!b.items.empty()) out_ += '\n';
  }
  void operator()(const Cards& b) {
    for (const Card& card : b.items) {
      out_ += "- **";
      escaped(card.label);
      out_ += "**: ";
      escaped(card.value);
      if (!card.detail.empty()) {
        out_ += " (";
        escaped(card.detail);
        out_ += ')';
      }
      out_ += '\n';
    }
    out_ += '\n';
  }
  void operator()(const Picture&) {}

  void write(const Document& document) {
    out_ += "# ";
    escaped(document.title);
    out_ += "\n\n";
    if (!document.subtitle.empty()) {
      escaped(document.subtitle);
      out_ += "\n\n";
    }
    if (!document.about.items.empty()) (*this)(document.about);
    for (const Section& section : document.sections) {
      if (only_pictures(section)) continue;
      out_ += "## ";
      escaped(section.title);
      out_ += "\n\n";
      for (const Block& block : section.blocks) std::visit(*this, block);
    }
  }
  void flush_to(std::ostream& out) const { out.write(out_.data(), static_cast<std::streamsize>(out_.size())); }

 private:
  // A table padded so that the raw file reads as a table too; right-aligned columns ruled "--:".
  // `cell(text, r, c)` appends row r's cell in column c, escaped (CellArena).
  void grid(const std::vector<Column>& columns, std::size_t rows,
            const std::function<void(std::string&, std::size_t, std::size_t)>& cell) {
    const std::size_t n = columns.size();
    CellArena cells(n, rows, 3);
    for (const Column& c : columns) cells.add([&](std::string& text) { append_markdown_escape(text, c.header); });
    for (std::size_t r = 0; r < rows; ++r)
      for (std::size_t c = 0; c < n; ++c) cells.add([&](std::string& text) { cell(text, r, c); });
    const auto line = [&](std::size_t r) {
      out_ += '|';
      for (std::size_t c = 0; c < n; ++c) {
        const std::size_t padding = cells.padding(r, c);
        out_ += ' ';
        if (columns[c].align == Align::Right) out_.append(padding, ' ');
        out_ += cells.cell(r, c);
        if (columns[c].align != Align::Right) out_.append(padding, ' ');
        out_ += " |";
      }
      out_ += '\n';
    };
    line(0);
    out_ += '|';
    for (std::size_t c = 0; c < n; ++c) {
      out_ += ' ';
      if (columns[c].align == Align::Right) {
        out_.append(cells.column_width(c) - 1, '-');
        out_ += ':';
      } else {
        out_.append(cells.column_width(c), '-');
      }
      out_ += " |";
    }
    out_ += '\n';
    for (std::size_t r = 1; r <= rows; ++r) line(r);
    out_ += '\n';
  }

  // A tree as nested list items: "- **name**: Calls 3, Total 1.00 ms, ...". Two spaces per
  // level: a nested item must start within its parent's content column.
  void tree(const Table& b) {
    for (std::size_t r = 0; r < b.rows.size(); ++r) {
      const auto& row = b.rows[r];
      if (row.empty()) continue;
      const std::uint32_t depth = r < b.depths.size() ? std::max<std::uint32_t>(b.depths[r], 1) : 1;
      out_.append(2 * static_cast<std::size_t>(depth - 1), ' ');
      out_ += "- ";
      strong(out_, row[0].text);
      for (std::size_t i = 1; i < row.size() && i < b.columns.size(); ++i) {
        out_ += i == 1 ? ": " : ", ";
        escaped(b.columns[i].header);
        out_ += ' ';
        escaped(row[i].text);
      }
      out_ += '\n';
    }
    out_ += '\n';
  }

  const Profile& names_;
  std::string out_;
};

}  // namespace

void write_markdown(const Document& document, std::ostream& out) {
  MarkdownWriter writer(document);
  writer.write(document);
  writer.flush_to(out);
  if (!out) throw Error("could not write the Markdown report: the output stream failed");
}

}  // namespace nnprof::render
