// The document model: what a report says, as data, before any format. Sections (report/sections)
// build blocks from the analysis once; the renderers (src/render) turn blocks into text, Markdown
// or HTML and know neither the analysis nor which sections exist. One section is one file.
#pragma once

#include <cmath>
#include <cstdint>
#include <functional>
#include <limits>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "analysis/sentence.hpp"
#include "report/format.hpp"
#include "nnprof/profile.hpp"

namespace nnprof::report {

using analysis::Part;
using analysis::Sentence;

/// One cell of a table: the text every format shows, and beside it what a renderer needs to do
/// more than print it (sort by the raw value, draw a bar, show the full name on hover).
struct Cell {
  std::string text;    ///< as shown: "1.23 ms", "matmul", "12.5%"
  std::string title;   ///< the full form when `text` is a shortened one (a signature, a scope's path); else empty
  double value = std::numeric_limits<double>::quiet_NaN();  ///< the raw value (ns, bytes, count, fraction); NaN for words
  bool bar = false;    ///< `value` is a fraction of a whole, drawn as a bar where the format can
  bool name = false;   ///< a scope or function name (HTML: class "name")

  /// Words, or a name shown in full.
  static Cell words(std::string text) {
    Cell cell;
    cell.text = std::move(text);
    return cell;
  }
  /// A scope or function name; `full` (when it differs) is the complete form.
  static Cell named(std::string shown, std::string full = {}) {
    Cell cell = words(std::move(shown));
    if (full != cell.text) cell.title = std::move(full);
    cell.name = true;
    return cell;
  }
  /// A number shown as `text`, sorted by `value`.
  static Cell number(std::string text, double value) {
    Cell cell = words(std::move(text));
    cell.value = value;
    return cell;
  }
  /// A share of a whole (0..1), shown as `text` with a bar.
  static Cell share(std::string text, double fraction) {
    Cell cell = number(std::move(text), fraction);
    cell.bar = true;
    return cell;
  }
  [[nodiscard]] bool numeric() const noexcept { return !std::isnan(value); }
};

/// Rows of cells under columns.
struct Table {
  enum class Style : std::uint8_t {
    Plain,     ///< a table
    Sortable,  ///< HTML: click a header to sort by the cells' raw values; a filter box above it
    Tree,      ///< rows of a tree in depth-first order, `depths` giving each row's level (1 = top)
  };
  std::string id;  ///< unique in the document; HTML ids and links use it
  std::vector<Column> columns;
  std::vector<std::vector<Cell>> rows;
  Style style = Style::Plain;
  std::vector<std::uint32_t> depths;  ///< Tree: one per row
  std::string filter_label;           ///< Sortable: what the filter box filters ("Filter scopes by name")

  Table& row(std::vector<Cell> cells) {
    rows.push_back(std::move(cells));
    return *this;
  }
  [[nodiscard]] bool empty() const noexcept { return rows.empty(); }
};

/// A paragraph: a lead sentence, a note under a table. `muted` ones are asides.
struct Paragraph {
  Sentence text;
  bool muted = false;
};

/// A labelled value: "Session duration: 1.23 s".
struct Fact {
  std::string label;
  Sentence value;
};
struct Facts {
  std::vector<Fact> items;
};

/// A list of sentences.
struct Bullets {
  std::vector<Sentence> items;
};

/// What the analysis found: severity ("high", "medium", "low", "info"), title, what and what to do.
struct Finding {
  std::string kind;  ///< what was found, as a stable name ("hot_scope"); HTML data-kind
  std::string severity;
  std::string title;
  Sentence description;
  Sentence suggestion;
};
/// The findings, or `none` (said instead of an empty list).
struct Findings {
  std::vector<Finding> items;
  Sentence none;
};

/// A recommendation: what to do, the gain to expect, the evidence and the steps.
struct Recommendation {
  Sentence title;
  Sentence gain;
  Sentence evidence;
  std::vector<Sentence> steps;
};
struct Recommendations {
  std::vector<Recommendation> items;
  Sentence none;
};

/// A key number at a glance: "Peak heap", "1.20 GiB", "at 3.2 s, in train/forward".
struct Card {
  std::string label;
  std::string value;
  std::string detail;
};
struct Cards {
  std::vector<Card> items;
};

/// A picture of numbers the tables state too (a timeline, a flame graph, a roofline): an inline
/// SVG or a container the page's script draws into, built by report/charts. Only formats that can
/// show pictures (HTML) draw it, so `draw` runs only there: laying out a million spans costs
/// nothing in a text report. `style` and `script` are what it needs in the page, once.
struct Picture {
  std::function<void(std::string& out)> draw;  ///< appends the fragment; refers to the profile, which outlives the document
  std::string_view style;
  std::string_view script;
  Sentence caption;  ///< how to read the picture ("hover a box ..."), shown above it; only with it

  /// A picture whose fragment is already made (cheap ones, tests).
  static Picture of(std::string html, std::string_view style = {}, std::string_view script = {}) {
    Picture picture;
    picture.draw = [html = std::move(html)](std::string& out) { out += html; };
    picture.style = style;
    picture.script = script;
    return picture;
  }
  /// The fragment, drawn now.
  [[nodiscard]] std::string html() const {
    std::string out;
    if (draw) draw(out);
    return out;
  }
};

/// A heading inside a section.
struct Subheading {
  std::string title;
};

using Block = std::variant<Subheading, Paragraph, Facts, Bullets, Table, Findings, Recommendations, Cards, Picture>;

/// A titled part of a document. `id` is its anchor ("hot-paths").
struct Section {
  std::string id;
  std::string title;
  std::vector<Block> blocks;

  template <typename B>
  Section& add(B block) {
    blocks.emplace_back(std::move(block));
    return *this;
  }
  /// Adds a paragraph.
  Section& say(Sentence text, bool muted = false) { return add(Paragraph{std::move(text), muted}); }
  Section& subheading(std::string title) { return add(Subheading{std::move(title)}); }
};

/// A whole document: the profile report, a comparison, a model comparison.
struct Document {
  std::string title;     ///< "nnprof report"
  std::string subtitle;  ///< what it is about: the command line, "A vs B"
  Facts about;           ///< facts shown under the title (host, CPU, command, duration ...)
  std::vector<Section> sections;
  std::string footer;    ///< a closing line (version, when made)
  /// Resolves Sentence scope parts (StringIds); may be null when no sentence names a scope by id.
  const Profile* strings = nullptr;
};

}  // namespace nnprof::report
