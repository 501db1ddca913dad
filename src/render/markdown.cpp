// The Markdown renderer (GitHub-flavoured): "##" per section, "###" per subheading, facts and
// tables as tables padded so that the raw file reads as one, trees as nested lists, findings
// and steps as lists. Pictures are left out: their numbers are in tables.
#include <algorithm>
#include <cstddef>
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
std::string strong(std::string_view name) { return fmt::format("**{}**", markdown_escape(name)); }

// Backslash escapes do not apply inside a code span: the text goes in as it is (it is ours,
// never a user string).
std::string code_span(std::string_view code) { return fmt::format("`{}`", code); }

const render::Markup kMarkdown{markdown_escape, strong, code_span, render::unmarked};

class MarkdownWriter {
 public:
  MarkdownWriter(const Document& document, std::ostream& out) : names_(names_of(document)), out_(out) {}

  std::string sentence(const Sentence& s) const { return render::text_of(names_, s, kMarkdown); }

  void operator()(const Subheading& b) { out_ << "### " << markdown_escape(b.title) << "\n\n"; }
  void operator()(const Paragraph& b) { out_ << sentence(b.text) << "\n\n"; }
  void operator()(const Facts& b) {
    std::vector<std::vector<std::string>> rows;
    for (const Fact& fact : b.items) rows.push_back({markdown_escape(fact.label), sentence(fact.value)});
    grid({"Measure", "Value"}, {Align::Left, Align::Left}, rows);
  }
  void operator()(const Bullets& b) {
    for (const Sentence& item : b.items) out_ << "- " << sentence(item) << '\n';
    out_ << '\n';
  }
  void operator()(const Table& b) {
    if (b.style == Table::Style::Tree) return tree(b);
    std::vector<std::string> headers;
    std::vector<Align> aligns;
    for (const Column& c : b.columns) {
      headers.push_back(markdown_escape(c.header));
      aligns.push_back(c.align);
    }
    std::vector<std::vector<std::string>> rows;
    for (const auto& row : b.rows) {
      std::vector<std::string> cells;
      for (const Cell& cell : row) cells.push_back(markdown_escape(cell.text));
      rows.push_back(std::move(cells));
    }
    grid(headers, aligns, rows);
  }
  void operator()(const Findings& b) {
    if (b.items.empty()) out_ << "- " << sentence(b.none) << '\n';
    for (const Finding& f : b.items)
      out_ << fmt::format("- **{}** ({} severity): {} {}\n", markdown_escape(f.title), f.severity,
                          sentence(f.description), sentence(f.suggestion));
    out_ << '\n';
  }
  void operator()(const Recommendations& b) {
    if (b.items.empty()) out_ << sentence(b.none) << "\n\n";
    for (std::size_t i = 0; i < b.items.size(); ++i) {
      const Recommendation& r = b.items[i];
      // Not bold: the title's scope names are bold already, and bold does not nest.
      out_ << fmt::format("{}. {} ({})\n", i + 1, sentence(r.title), sentence(r.gain));
      out_ << "   - Evidence: " << sentence(r.evidence) << '\n';
      for (const Sentence& step : r.steps) out_ << "   - " << sentence(step) << '\n';
    }
    if (!b.items.empty()) out_ << '\n';
  }
  void operator()(const Cards& b) {
    for (const Card& card : b.items) {
      out_ << "- **" << markdown_escape(card.label) << "**: " << markdown_escape(card.value);
      if (!card.detail.empty()) out_ << " (" << markdown_escape(card.detail) << ')';
      out_ << '\n';
    }
    out_ << '\n';
  }
  void operator()(const Picture&) {}

  void write(const Document& document) {
    out_ << "# " << markdown_escape(document.title) << "\n\n";
    if (!document.subtitle.empty()) out_ << markdown_escape(document.subtitle) << "\n\n";
    if (!document.about.items.empty()) (*this)(document.about);
    for (const Section& section : document.sections) {
      if (only_pictures(section)) continue;
      out_ << "## " << markdown_escape(section.title) << "\n\n";
      for (const Block& block : section.blocks) std::visit(*this, block);
    }
  }

 private:
  // A table padded so that the raw file reads as a table too; right-aligned columns ruled "--:".
  void grid(const std::vector<std::string>& headers, const std::vector<Align>& aligns,
            const std::vector<std::vector<std::string>>& rows) {
    // Each cell measured once; the table built in one string and written once.
    const std::size_t n = headers.size();
    std::vector<std::size_t> widths(n, 3);
    std::vector<std::size_t> cell_widths;
    cell_widths.reserve((rows.size() + 1) * n);
    const auto measure = [&](const std::vector<std::string>& cells) {
      for (std::size_t i = 0; i < n; ++i) {
        cell_widths.push_back(i < cells.size() ? report::display_width(cells[i]) : 0);
        widths[i] = std::max(widths[i], cell_widths.back());
      }
    };
    measure(headers);
    for (const auto& row : rows) measure(row);
    std::string table;
    std::size_t at = 0;
    const auto line = [&](const std::vector<std::string>& cells) {
      table += '|';
      for (std::size_t i = 0; i < n; ++i, ++at) {
        const std::size_t padding = widths[i] - cell_widths[at];
        table += ' ';
        if (aligns[i] == Align::Right) table.append(padding, ' ');
        if (i < cells.size()) table += cells[i];
        if (aligns[i] != Align::Right) table.append(padding, ' ');
        table += " |";
      }
      table += '\n';
    };
    line(headers);
    table += '|';
    for (std::size_t i = 0; i < n; ++i) {
      table += ' ';
      if (aligns[i] == Align::Right) {
        table.append(widths[i] - 1, '-');
        table += ':';
      } else {
        table.append(widths[i], '-');
      }
      table += " |";
    }
    table += '\n';
    for (const auto& row : rows) line(row);
    table += '\n';
    out_ << table;
  }

  // A tree as nested list items: "- **name**: Calls 3, Total 1.00 ms, ...". Two spaces per
  // level: a nested item must start within its parent's content column.
  void tree(const Table& b) {
    for (std::size_t r = 0; r < b.rows.size(); ++r) {
      const auto& row = b.rows[r];
      if (row.empty()) continue;
      const std::uint32_t depth = r < b.depths.size() ? std::max<std::uint32_t>(b.depths[r], 1) : 1;
      std::string item = std::string(2 * static_cast<std::size_t>(depth - 1), ' ') + "- " + strong(row[0].text);
      for (std::size_t i = 1; i < row.size() && i < b.columns.size(); ++i)
        item += fmt::format("{} {} {}", i == 1 ? ":" : ",", markdown_escape(b.columns[i].header),
                            markdown_escape(row[i].text));
      out_ << item << '\n';
    }
    out_ << '\n';
  }

  const Profile& names_;
  std::ostream& out_;
};

}  // namespace

void write_markdown(const Document& document, std::ostream& out) {
  MarkdownWriter(document, out).write(document);
  if (!out) throw Error("could not write the Markdown report: the output stream failed");
}

}  // namespace nnprof::render
