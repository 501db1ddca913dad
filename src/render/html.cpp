// The HTML renderer: one self-contained page (nothing is loaded from the network) with a
// header of facts, a navigation bar of the sections, sortable tables whose numeric cells carry
// their raw values, share bars, trees that fold, and the pictures sections provide.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <ostream>
#include <set>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include <fmt/format.h>

#include "report/format.hpp"
#include "report/html_escape.hpp"
#include "render/sentence_markup.hpp"
#include "nnprof/error.hpp"
#include "render/render.hpp"
#include "render/strings.hpp"

namespace nnprof::render {
namespace {

using namespace report;
using report::html::append;
using report::html::append_escaped;
using report::html::escape;

void code(std::string& out, std::string_view text) {
  out += "<code>";
  append_escaped(out, text);
  out += "</code>";
}

// Sentences on the page: scope names and code as <code>, the key figure bold.
const render::Markup kHtml{append_escaped, code, code, "<b>", "</b>"};

// Tree levels shown expanded when the page opens.
constexpr std::uint32_t kTreeOpenDepth = 2;

constexpr std::string_view kStyle = R"CSS(
:root{--bg:#f4f6f9;--card:#fff;--line:#e1e5eb;--soft:#eef1f5;--text:#1c2330;--muted:#5f6b7a;
--accent:#2f6fde;--accent-soft:#dde8fb;--warn-bg:#fff7e6;--warn-line:#f1d28c;--warn:#7a5200;
--err:#b42318;--info-bg:#eef4ff;--info-line:#c9d8fa;--info:#1e3a8a}
*{box-sizing:border-box}
html{scroll-behavior:smooth}
body{margin:0;background:var(--bg);color:var(--text);
font:14px/1.45 system-ui,-apple-system,"Segoe UI",Roboto,"Helvetica Neue",Arial,sans-serif}
code,.mono,td.name,.tree .nm{font-family:ui-monospace,SFMono-Regular,Menlo,Consolas,"Liberation Mono",monospace;
font-size:12.5px}
.wrap{max-width:1320px;margin:0 auto;padding:0 24px}
header.top{background:var(--card);border-bottom:1px solid var(--line);padding:18px 0 14px}
h1{font-size:22px;margin:0;font-weight:650;letter-spacing:-.01em}
h1 .brand{color:var(--accent)}
.cmd{margin:6px 0 10px;color:var(--muted);word-break:break-all}
.cmd code{color:var(--text);background:var(--soft);padding:2px 6px;border-radius:4px}
.meta{display:flex;flex-wrap:wrap;gap:4px 22px;margin:0;font-size:13px;color:var(--muted)}
.meta div{display:flex;gap:6px}.meta dt{font-weight:600}.meta dd{margin:0;color:var(--text)}
.annotations{margin-top:6px;font-size:13px;color:var(--muted)}.annotations summary{cursor:pointer}
nav{position:sticky;top:0;z-index:5;background:rgba(255,255,255,.96);border-bottom:1px solid var(--line)}
nav .wrap{display:flex;flex-wrap:wrap}
nav a{padding:9px 11px;color:var(--muted);text-decoration:none;font-size:13px;font-weight:500}
nav a:hover{color:var(--accent)}
section{background:var(--card);border:1px solid var(--line);border-radius:10px;padding:18px 20px;margin:18px 0;
scroll-margin-top:48px}
h2{font-size:16px;margin:0 0 4px;font-weight:650}
.lead{margin:0 0 14px;color:var(--muted);font-size:13px}
.cards{display:grid;grid-template-columns:repeat(auto-fill,minmax(270px,1fr));gap:12px}
.card{border:1px solid var(--line);border-radius:8px;padding:12px 14px;background:#fbfcfe}
.card .k{font-size:11.5px;color:var(--muted);text-transform:uppercase;letter-spacing:.05em;font-weight:600}
.card .v{font-size:22px;font-weight:650;margin:3px 0 2px;font-variant-numeric:tabular-nums}
.card .s{font-size:12.5px;color:var(--muted)}
.scroll{overflow-x:auto}
table{border-collapse:collapse;width:100%;font-size:13px;font-variant-numeric:tabular-nums}
th,td{padding:5px 9px;border-bottom:1px solid var(--soft);text-align:left;white-space:nowrap}
th{background:#f7f8fa;font-weight:600;color:#374151;border-bottom:1px solid var(--line);font-size:12.5px}
th.num,td.num{text-align:right}
td.name{max-width:380px;overflow:hidden;text-overflow:ellipsis}
td.msg{white-space:normal}
tbody tr:hover{background:#f5f8fd}
table.sortable th{cursor:pointer;user-select:none}
table.sortable th:hover{color:var(--accent)}
table.sortable th::after{content:"";display:inline-block;width:12px;font-size:9px;color:var(--accent)}
th[aria-sort=ascending]::after{content:" \25B2"}
th[aria-sort=descending]::after{content:" \25BC"}
.bar{display:inline-block;width:56px;height:6px;margin-right:8px;vertical-align:middle;background:var(--accent-soft);
border-radius:3px;overflow:hidden}
.bar i{display:block;height:100%;background:var(--accent);border-radius:3px}
.tools{display:flex;gap:14px;align-items:center;margin:0 0 10px}
input[type=search]{font:inherit;padding:6px 10px;border:1px solid #cbd2db;border-radius:6px;width:300px}
input[type=search]:focus{outline:2px solid var(--accent-soft);border-color:var(--accent)}
button{font:inherit;font-size:12.5px;padding:4px 10px;border:1px solid #cbd2db;border-radius:6px;background:#fff;
cursor:pointer}
button:hover{border-color:var(--accent);color:var(--accent)}
.note{background:var(--warn-bg);border:1px solid var(--warn-line);color:var(--warn);border-radius:6px;
padding:8px 12px;margin:0 0 10px;font-size:13px}
.note.info{background:var(--info-bg);border-color:var(--info-line);color:var(--info)}
.muted{color:var(--muted)}
.empty{color:var(--muted);font-style:italic;margin:6px 0}
.tree{border:1px solid var(--line);border-radius:8px;overflow:hidden}
.tree .row{display:flex;align-items:center;padding:3px 10px 3px 6px;border-bottom:1px solid var(--soft);
font-variant-numeric:tabular-nums}
.tree .row:hover{background:#f5f8fd}
.tree .hd{background:#f7f8fa;font-weight:600;font-size:12.5px;color:#374151;
border-bottom:1px solid var(--line)}
.tree .nm{flex:1;min-width:0;overflow:hidden;text-overflow:ellipsis;white-space:nowrap}
.tree .c{width:104px;flex:none;text-align:right}
.tree .c.p{width:150px}
.tree summary{cursor:pointer;list-style:none}
.tree summary::-webkit-details-marker{display:none}
.tree .nm::before{content:"";display:inline-block;width:16px;color:#8a94a3;font-size:10px}
.tree summary .nm::before{content:"\25B6"}
.tree details[open]>summary .nm::before{content:"\25BC"}
.tree .kids{padding-left:16px}
ul.insights{margin:0;padding-left:20px}ul.insights li{margin:4px 0}
dl.kv{display:grid;grid-template-columns:max-content 1fr;gap:6px 22px;margin:0}
dl.kv dt{color:var(--muted);font-weight:600}dl.kv dd{margin:0}
.sev{display:inline-block;padding:1px 8px;border-radius:10px;font-size:11.5px;font-weight:600}
.sev.info{background:var(--info-bg);color:var(--info)}
.sev.warning{background:var(--warn-bg);color:var(--warn)}
.sev.error{background:#fde8e7;color:var(--err)}
footer{color:var(--muted);font-size:12px;padding:8px 0 32px}
h3{font-size:14px;margin:18px 0 6px;font-weight:650}
)CSS";

constexpr std::string_view kScript = R"JS(
(function () {
  'use strict';
  var doc = document;
  function headRow(table) { return table.tHead && table.tHead.rows.length ? table.tHead.rows[0] : null; }
  function sortKey(row, col, numeric) {
    var cell = row.cells[col];
    if (!cell) return numeric ? -Infinity : '';
    if (numeric) {
      var v = Number(cell.getAttribute('data-v'));
      return isNaN(v) ? -Infinity : v;
    }
    return cell.textContent.toLowerCase();
  }
  function sortBy(table, col, dir) {
    var head = headRow(table);
    var body = table.tBodies.length ? table.tBodies[0] : null;
    if (!head || !body || col < 0 || col >= head.cells.length) return;
    var th = head.cells[col];
    var numeric = th.getAttribute('data-type') === 'num';
    var rows = Array.prototype.map.call(body.rows, function (row, i) {
      return { row: row, key: sortKey(row, col, numeric), i: i };
    });
    rows.sort(function (a, b) {
      if (a.key < b.key) return -dir;
      if (a.key > b.key) return dir;
      return a.i - b.i;
    });
    var frag = doc.createDocumentFragment();
    rows.forEach(function (r) { frag.appendChild(r.row); });
    body.appendChild(frag);
    Array.prototype.forEach.call(head.cells, function (cell) { cell.removeAttribute('aria-sort'); });
    th.setAttribute('aria-sort', dir > 0 ? 'ascending' : 'descending');
    var key = th.getAttribute('data-key') || String(col);
    table.setAttribute('data-sort', key + ':' + (dir > 0 ? 'asc' : 'desc'));
  }
  function columnOf(table, key) {
    var head = headRow(table);
    if (!head) return -1;
    for (var i = 0; i < head.cells.length; i++) {
      if (head.cells[i].getAttribute('data-key') === key) return i;
    }
    return -1;
  }
  function setupSort(table) {
    var head = headRow(table);
    if (!head) return;
    Array.prototype.forEach.call(head.cells, function (th, col) {
      th.tabIndex = 0;
      function toggle() {
        var now = th.getAttribute('aria-sort');
        var numeric = th.getAttribute('data-type') === 'num';
        var dir = now === 'descending' ? 1 : now === 'ascending' ? -1 : (numeric ? -1 : 1);
        sortBy(table, col, dir);
      }
      th.addEventListener('click', toggle);
      th.addEventListener('keydown', function (e) {
        if (e.key === 'Enter' || e.key === ' ') { e.preventDefault(); toggle(); }
      });
    });
  }
  // The cell a filter looks at: the row's first name (a rank may come before it), else its first cell.
  function nameCell(row) {
    for (var i = 0; i < row.cells.length; i++) {
      if (row.cells[i].classList.contains('name')) return row.cells[i];
    }
    return row.cells.length ? row.cells[0] : null;
  }
  function filterRows(table, text, counter) {
    var body = table.tBodies.length ? table.tBodies[0] : null;
    if (!body) return;
    var needle = String(text).trim().toLowerCase();
    var shown = 0;
    Array.prototype.forEach.call(body.rows, function (row) {
      var cell = nameCell(row);
      var name = cell ? cell.textContent.toLowerCase() : '';
      var hit = needle === '' || name.indexOf(needle) !== -1;
      row.hidden = !hit;
      if (hit) shown++;
    });
    table.setAttribute('data-shown', String(shown));
    if (counter) {
      counter.textContent = needle === '' ? '' : shown + ' of ' + body.rows.length + ' rows match';
    }
  }
  function hashParams() {
    var params = {};
    location.hash.replace(/^#/, '').split('&').forEach(function (part) {
      var eq = part.indexOf('=');
      if (eq <= 0) return;
      try {
        params[decodeURIComponent(part.slice(0, eq))] = decodeURIComponent(part.slice(eq + 1));
      } catch (e) { /* a malformed link: ignore that parameter */ }
    });
    return params;
  }
  function setupTree() {
    Array.prototype.forEach.call(doc.querySelectorAll('button[data-tree]'), function (button) {
      button.addEventListener('click', function () {
        var open = button.getAttribute('data-tree') === 'open';
        Array.prototype.forEach.call(doc.querySelectorAll('.tree details'), function (d) { d.open = open; });
      });
    });
  }
  Array.prototype.forEach.call(doc.querySelectorAll('table.sortable'), setupSort);
  setupTree();
  var boxes = doc.querySelectorAll('input[data-filter]');
  Array.prototype.forEach.call(boxes, function (box) {
    var table = doc.getElementById(box.getAttribute('data-filter'));
    var counter = doc.getElementById(box.getAttribute('data-filter') + '-count');
    if (table) box.addEventListener('input', function () { filterRows(table, box.value, counter); });
  });
  // A link's #sort=key:dir&filter=text applies to the page's first sortable table.
  var first = doc.querySelector('table.sortable');
  var params = hashParams();
  if (first && typeof params.sort === 'string') {
    var parts = params.sort.split(':');
    var col = columnOf(first, parts[0]);
    if (col >= 0) sortBy(first, col, parts[1] === 'asc' ? 1 : -1);
  }
  var firstBox = first ? doc.querySelector('input[data-filter="' + first.id + '"]') : null;
  if (firstBox && typeof params.filter === 'string') {
    firstBox.value = params.filter;
    filterRows(first, firstBox.value, doc.getElementById(first.id + '-count'));
  }
  doc.body.setAttribute('data-ready', '1');
})();
)JS";

// Finding severities in the badge colours of diagnostics.
std::string_view badge_class(std::string_view severity) {
  if (severity == "high" || severity == "error") return "error";
  if (severity == "medium" || severity == "warning") return "warning";
  return "info";
}

class HtmlWriter {
 public:
  HtmlWriter(const Document& document, std::string& out) : names_(names_of(document)), out_(out) {}

  std::string sentence(const Sentence& s) const { return render::text_of(names_, s, kHtml); }

  void operator()(const Subheading& b) {
    out_ += "<h3>";
    append_escaped(out_, b.title);
    out_ += "</h3>";
  }
  void operator()(const Paragraph& b) {
    // The first words of a section lead it; muted paragraphs are asides under a table.
    append(out_, "<p class=\"{}\">{}</p>", b.muted ? "muted" : (first_block_ ? "lead" : "text"), sentence(b.text));
  }
  void operator()(const Facts& b) {
    out_ += "<dl class=\"kv\">";
    for (const Fact& fact : b.items) {
      out_ += "<dt>";
      append_escaped(out_, fact.label);
      append(out_, "</dt><dd>{}</dd>", sentence(fact.value));
    }
    out_ += "</dl>";
  }
  void operator()(const Bullets& b) {
    out_ += "<ul class=\"insights\">";
    for (const Sentence& item : b.items) append(out_, "<li>{}</li>", sentence(item));
    out_ += "</ul>";
  }
  void operator()(const Table& b) {
    if (b.style == Table::Style::Tree) return tree(b);
    const bool sortable = b.style == Table::Style::Sortable;
    if (sortable && !b.filter_label.empty()) {
      out_ += "<div class=\"tools\"><input type=\"search\" data-filter=\"";
      append_escaped(out_, b.id);
      out_ += "\" placeholder=\"";
      append_escaped(out_, b.filter_label);
      out_ += "\" aria-label=\"";
      append_escaped(out_, b.filter_label);
      out_ += "\"><span class=\"muted\" id=\"";
      append_escaped(out_, b.id + "-count");
      out_ += "\"></span></div>";
    }
    out_ += "<div class=\"scroll\"><table";
    if (sortable) out_ += " class=\"sortable\"";
    if (!b.id.empty()) {
      out_ += " id=\"";
      append_escaped(out_, b.id);
      out_ += '"';
    }
    out_ += "><thead><tr>";
    for (std::size_t i = 0; i < b.columns.size(); ++i) {
      const Column& c = b.columns[i];
      const bool numeric = c.align == Align::Right;
      out_ += numeric ? "<th class=\"num\"" : "<th";
      if (sortable) {
        out_ += " data-key=\"";
        append_escaped(out_, c.key.empty() ? std::to_string(i) : c.key);
        out_ += numeric ? "\" data-type=\"num\"" : "\"";
      }
      out_ += '>';
      append_escaped(out_, c.header);
      out_ += "</th>";
    }
    out_ += "</tr></thead><tbody>\n";
    for (const auto& row : b.rows) {
      out_ += "<tr>";
      for (std::size_t i = 0; i < row.size(); ++i) cell(row[i], i < b.columns.size() && b.columns[i].align == Align::Right);
      out_ += "</tr>\n";
    }
    out_ += "</tbody></table></div>";
  }
  void operator()(const Findings& b) {
    out_ += "<ul class=\"insights findings\">";
    if (b.items.empty()) append(out_, "<li>{}</li>", sentence(b.none));
    for (const Finding& f : b.items) {
      out_ += "<li data-kind=\"";
      append_escaped(out_, f.kind);
      append(out_, "\"><span class=\"sev {}\">", badge_class(f.severity));
      append_escaped(out_, f.severity);
      out_ += "</span> <b>";
      append_escaped(out_, f.title);
      append(out_, "</b>: {} {}</li>", sentence(f.description), sentence(f.suggestion));
    }
    out_ += "</ul>";
  }
  void operator()(const Recommendations& b) {
    if (b.items.empty()) {
      append(out_, "<p class=\"empty\">{}</p>", sentence(b.none));
      return;
    }
    out_ += "<ol class=\"advice\">";
    for (const Recommendation& r : b.items) {
      append(out_, "<li><b>{}</b> <span class=\"muted\">({})</span><br>Evidence: {}<ul>", sentence(r.title),
             sentence(r.gain), sentence(r.evidence));
      for (const Sentence& step : r.steps) append(out_, "<li>{}</li>", sentence(step));
      out_ += "</ul></li>";
    }
    out_ += "</ol>";
  }
  void operator()(const Cards& b) {
    out_ += "<div class=\"cards\">";
    for (const Card& card : b.items) {
      out_ += "<div class=\"card\"><div class=\"k\">";
      append_escaped(out_, card.label);
      out_ += "</div><div class=\"v\">";
      append_escaped(out_, card.value);
      out_ += "</div><div class=\"s\">";
      append_escaped(out_, card.detail);
      out_ += "</div></div>";
    }
    out_ += "</div>";
  }
  void operator()(const Picture& b) {
    if (!b.caption.empty()) append(out_, "<p class=\"lead\">{}</p>", sentence(b.caption));
    if (b.draw) b.draw(out_);
  }

  void section(const Section& s) {
    out_ += "<section id=\"";
    append_escaped(out_, s.id);
    out_ += "\"><h2>";
    append_escaped(out_, s.title);
    out_ += "</h2>";
    first_block_ = true;
    for (const Block& block : s.blocks) {
      std::visit(*this, block);
      first_block_ = false;
    }
    out_ += "</section>\n";
  }

  void head(const Document& document) {
    out_ +=
        "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
        "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n"
        // Nothing may be fetched: the page must open the same offline, in CI artefacts, anywhere.
        "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; "
        "style-src 'unsafe-inline'; script-src 'unsafe-inline'; img-src data:\">\n"
        "<meta name=\"generator\" content=\"nnprof\">\n<title>";
    append_escaped(out_, document.subtitle.empty() ? document.title : "nnprof — " + document.subtitle);
    out_ += "</title>\n<style>";
    out_ += kStyle;
    // Each picture's style once, in the order they appear.
    std::set<std::string_view> seen;
    for_each_picture(document, [&](const Picture& p) {
      if (!p.style.empty() && seen.insert(p.style).second) out_ += p.style;
    });
    out_ += "</style>\n</head>\n<body data-ready=\"0\">\n";
  }

  void header(const Document& document) {
    out_ += "<header class=\"top\"><div class=\"wrap\"><h1><span class=\"brand\">nnprof</span> ";
    // "nnprof report" -> the brand, then the rest of the title.
    std::string_view title = document.title;
    if (title.starts_with("nnprof ")) title.remove_prefix(7);
    append_escaped(out_, title);
    out_ += "</h1>";
    if (!document.subtitle.empty()) {
      out_ += "<div class=\"cmd\"><code>";
      append_escaped(out_, document.subtitle);
      out_ += "</code></div>";
    }
    if (!document.about.items.empty()) {
      out_ += "<dl class=\"meta\">";
      for (const Fact& fact : document.about.items) {
        out_ += "<div><dt>";
        append_escaped(out_, fact.label);
        append(out_, "</dt><dd>{}</dd></div>", sentence(fact.value));
      }
      out_ += "</dl>";
    }
    out_ += "</div></header>\n<nav><div class=\"wrap\">";
    for (const Section& s : document.sections) {
      out_ += "<a href=\"#";
      append_escaped(out_, s.id);
      out_ += "\">";
      append_escaped(out_, s.title);
      out_ += "</a>";
    }
    out_ += "</div></nav>\n<main class=\"wrap\">\n";
  }

  void footer(const Document& document) {
    out_ += "</main>\n<footer class=\"wrap\">";
    append_escaped(out_, document.footer.empty() ? std::string("Generated by nnprof.") : document.footer);
    out_ += " A self-contained page: nothing is loaded from the network.</footer>\n<script>";
    out_ += kScript;
    std::set<std::string_view> seen;
    for_each_picture(document, [&](const Picture& p) {
      if (!p.script.empty() && seen.insert(p.script).second) out_ += p.script;
    });
    out_ += "</script>\n</body>\n</html>\n";
  }

 private:
  template <typename F>
  static void for_each_picture(const Document& document, F&& f) {
    for (const Section& s : document.sections)
      for (const Block& block : s.blocks)
        if (const auto* picture = std::get_if<Picture>(&block)) f(*picture);
  }

  // A cell: names in monospace with their full form on hover, numbers right-aligned with their
  // raw value for sorting, shares with a bar.
  void cell(const Cell& c, bool right) {
    out_ += "<td";
    if (c.name) out_ += " class=\"name\"";
    else if (right) out_ += " class=\"num\"";
    if (c.name || !c.title.empty()) {
      out_ += " title=\"";
      append_escaped(out_, c.title.empty() ? c.text : c.title);
      out_ += '"';
    }
    value_and_text(c);
    out_ += "</td>";
  }

  // What every numeric cell ends with, in a table or a tree: its raw value for sorting, the
  // closing '>', a bar when it is a share, and its text.
  void value_and_text(const Cell& c) {
    if (c.numeric()) append(out_, " data-v=\"{}\"", c.value);
    out_ += '>';
    if (c.bar && c.numeric())
      append(out_, "<span class=\"bar\"><i style=\"width:{:.1f}%\"></i></span>", std::clamp(c.value * 100.0, 0.0, 100.0));
    append_escaped(out_, c.text);
  }

  void tree_cells(const std::vector<Cell>& row) {
    for (std::size_t i = 0; i < row.size(); ++i) {
      const Cell& c = row[i];
      if (i == 0) {
        out_ += "<span class=\"nm\" title=\"";
        append_escaped(out_, c.title.empty() ? c.text : c.title);
        out_ += "\">";
        append_escaped(out_, c.text);
        out_ += "</span>";
        continue;
      }
      out_ += c.bar ? "<span class=\"c p\"" : "<span class=\"c\"";
      value_and_text(c);
      out_ += "</span>";
    }
  }

  // The rows as nested <details>: a row followed by deeper rows opens one, closed where its last
  // descendant shown ends.
  void tree(const Table& b) {
    out_ += "<div class=\"tools\"><button type=\"button\" data-tree=\"open\">Expand all</button>"
            "<button type=\"button\" data-tree=\"close\">Collapse all</button></div><div class=\"tree\"";
    if (!b.id.empty()) {
      out_ += " id=\"";
      append_escaped(out_, b.id);
      out_ += '"';
    }
    out_ += "><div class=\"row hd\">";
    for (std::size_t i = 0; i < b.columns.size(); ++i) {
      const bool share = !b.rows.empty() && i < b.rows[0].size() && b.rows[0][i].bar;
      out_ += i == 0 ? "<span class=\"nm\">" : (share ? "<span class=\"c p\">" : "<span class=\"c\">");
      append_escaped(out_, b.columns[i].header);
      out_ += "</span>";
    }
    out_ += "</div>\n";
    std::vector<std::uint32_t> open;  // depths of the <details> not closed yet
    const auto depth_of = [&](std::size_t r) { return r < b.depths.size() ? b.depths[r] : 1u; };
    for (std::size_t r = 0; r < b.rows.size(); ++r) {
      const std::uint32_t depth = depth_of(r);
      const std::uint32_t next_depth = r + 1 < b.rows.size() ? depth_of(r + 1) : 0;
      if (next_depth > depth) {
        append(out_, "<details{}><summary class=\"row\">", depth <= kTreeOpenDepth ? " open" : "");
        tree_cells(b.rows[r]);
        out_ += "</summary><div class=\"kids\">\n";
        open.push_back(depth);
      } else {
        out_ += "<div class=\"row leaf\">";
        tree_cells(b.rows[r]);
        out_ += "</div>\n";
      }
      while (!open.empty() && open.back() >= next_depth) {
        out_ += "</div></details>\n";
        open.pop_back();
      }
    }
    out_ += "</div>";
  }

  const Profile& names_;
  std::string& out_;
  bool first_block_ = false;
};

}  // namespace

void write_html(const Document& document, std::ostream& stream) {
  std::string out;
  out.reserve(64 * 1024);
  HtmlWriter writer(document, out);
  writer.head(document);
  writer.header(document);
  for (const Section& section : document.sections) {
    writer.section(section);
    // Pages of a million spans are large: hand each section on as it is done.
    stream << out;
    out.clear();
  }
  writer.footer(document);
  stream << out;
  if (!stream) throw Error("could not write the HTML report: the output stream failed");
}

}  // namespace nnprof::render
