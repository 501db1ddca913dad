#include "io/html_report.hpp"

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <ostream>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include "analysis/advisor.hpp"
#include "analysis/bottlenecks.hpp"
#include "analysis/compute.hpp"
#include "analysis/call_tree.hpp"
#include "analysis/cpu_profile.hpp"
#include "analysis/facts.hpp"
#include "analysis/insights.hpp"
#include "analysis/memory_findings.hpp"
#include "analysis/rankings.hpp"
#include "io/critical_path_report.hpp"
#include "io/format.hpp"
#include "io/gpu_report_tables.hpp"
#include "report/charts/html_charts.hpp"
#include "report/charts/roofline_svg.hpp"
#include "io/html_escape.hpp"
#include "io/metric_html.hpp"
#include "io/report_tables.hpp"
#include "io/sentence_markup.hpp"
#include "nnprof/error.hpp"

namespace nnprof::io {
namespace {

using html::append;
using html::append_escaped;

// The hot-path table and the call tree stay readable and quick to sort within these; what
// is left out is counted on the page.
constexpr std::size_t kMaxTableRows = 2'000;
constexpr analysis::TreeLimits kTreeLimits{48, 1'500};
constexpr std::uint32_t kTreeOpenDepth = 2;  // levels shown expanded when the page opens

// A percentage as page text: a tiny share reads "<0.1%".
std::string percent_html(const PercentOf& percent, std::uint64_t part) {
  return html::escape(percent(part));
}

std::string code(std::string_view text) { return fmt::format("<code>{}</code>", html::escape(text)); }
std::string bold(std::string_view marked_up) { return fmt::format("<b>{}</b>", marked_up); }

// Sentences on the page: scope names and code as <code>, the key figure bold.
const Markup kHtml{html::escape, code, code, bold};

// ---- page frame ---------------------------------------------------------------------

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
.tl,.mem{display:block;max-width:100%;height:auto}
.tl text,.mem text{font:10.5px system-ui,-apple-system,"Segoe UI",Roboto,Arial,sans-serif;fill:#4b5563}
.tl .axis line,.mem .axis line{stroke:#e6e9ee;stroke-width:1}
.tl .th{font-size:12px;font-weight:600;fill:#1c2330}
.tl .tc{font-weight:400;fill:#6b7280}
.tl .lane{fill:#f7f8fa}
.tl rect.b:hover{stroke:#1c2330;stroke-width:1}
.tl .bl{font-size:10px;fill:#1c2330;pointer-events:none}
.mem .line{fill:none;stroke:var(--accent);stroke-width:1.6}
.mem .area{fill:var(--accent);fill-opacity:.12;stroke:none}
.mem .base{stroke:#9aa3af;stroke-width:1}
.mem .at{font-size:11.5px;fill:#374151;font-weight:600}
.mem line.pk{stroke:#d9480f;stroke-dasharray:4 3;stroke-width:1}
.mem circle.pk{fill:#d9480f;stroke:#fff;stroke-width:1.5}
.mem .pkl{fill:#b13a0a;font-weight:600;font-size:11.5px}
ul.insights{margin:0;padding-left:20px}ul.insights li{margin:4px 0}
dl.kv{display:grid;grid-template-columns:max-content 1fr;gap:6px 22px;margin:0}
dl.kv dt{color:var(--muted);font-weight:600}dl.kv dd{margin:0}
.sev{display:inline-block;padding:1px 8px;border-radius:10px;font-size:11.5px;font-weight:600}
.sev.info{background:var(--info-bg);color:var(--info)}
.sev.warning{background:var(--warn-bg);color:var(--warn)}
.sev.error{background:#fde8e7;color:var(--err)}
footer{color:var(--muted);font-size:12px;padding:8px 0 32px}
)CSS";

// Sorting, filtering and the tree's expand/collapse. Everything is read from the DOM: no
// profile data is embedded in the script, so no user string can reach JavaScript. A view
// can be linked: report.html#sort=calls:desc&filter=matmul.
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
  function filterRows(table, text, counter) {
    var body = table.tBodies.length ? table.tBodies[0] : null;
    if (!body) return;
    var needle = String(text).trim().toLowerCase();
    var shown = 0;
    Array.prototype.forEach.call(body.rows, function (row) {
      var name = row.cells.length ? row.cells[0].textContent.toLowerCase() : '';
      var hit = needle === '' || name.indexOf(needle) !== -1;
      row.hidden = !hit;
      if (hit) shown++;
    });
    table.setAttribute('data-shown', String(shown));
    if (counter) {
      counter.textContent = needle === '' ? '' : shown + ' of ' + body.rows.length + ' scopes match';
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
        Array.prototype.forEach.call(doc.querySelectorAll('#tree details'), function (d) { d.open = open; });
      });
    });
  }
  Array.prototype.forEach.call(doc.querySelectorAll('table.sortable'), setupSort);
  setupTree();
  var hot = doc.getElementById('hot-table');
  var box = doc.getElementById('hot-filter');
  var counter = doc.getElementById('hot-count');
  if (hot && box) box.addEventListener('input', function () { filterRows(hot, box.value, counter); });
  var params = hashParams();
  if (hot && typeof params.sort === 'string') {
    var parts = params.sort.split(':');
    var col = columnOf(hot, parts[0]);
    if (col >= 0) sortBy(hot, col, parts[1] === 'asc' ? 1 : -1);
  }
  if (hot && box && typeof params.filter === 'string') {
    box.value = params.filter;
    filterRows(hot, box.value, counter);
  }
  doc.body.setAttribute('data-ready', '1');
})();
)JS";

// Only in pages of heap-tracked profiles, so that other pages stay as they were.
constexpr std::string_view kHeapStyle = R"CSS(
.mem .rss{fill:none;stroke:#7c3aed;stroke-width:1.4}
.mem .hwm{fill:none;stroke:#7c3aed;stroke-width:1;stroke-dasharray:3 3;opacity:.7}
h3{font-size:14px;margin:18px 0 6px;font-weight:650}
td.site{white-space:normal;min-width:220px}
)CSS";

// Only in pages of GPU-traced profiles, so that other pages stay as they were: the bar chart
// of the top kernels.
constexpr std::string_view kGpuStyle = R"CSS(
h3{font-size:14px;margin:18px 0 6px;font-weight:650}
.kbars{margin:4px 0 14px}
.kb{display:flex;align-items:center;gap:10px;margin:3px 0;font-size:12.5px;font-variant-numeric:tabular-nums}
.kb .kn{width:340px;flex:none;overflow:hidden;text-overflow:ellipsis;white-space:nowrap;
font-family:ui-monospace,SFMono-Regular,Menlo,Consolas,"Liberation Mono",monospace}
.kb .kt{flex:1;height:12px;background:var(--accent-soft);border-radius:3px;overflow:hidden}
.kb .kt i{display:block;height:100%;background:var(--accent)}
.kb .kv{width:170px;flex:none;text-align:right}
)CSS";

std::string page_title(const Profile& profile) {
  const Metadata& meta = profile.meta;
  if (!meta.command_line.empty()) return "nnprof — " + meta.command_line;
  return meta.hostname.empty() ? std::string("nnprof report") : "nnprof — " + meta.hostname;
}

void write_head(const Profile& profile, std::string& out) {
  out +=
      "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
      "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n"
      // Nothing may be fetched: the page must open the same offline, in CI artefacts, anywhere.
      "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; "
      "style-src 'unsafe-inline'; script-src 'unsafe-inline'; img-src data:\">\n"
      "<meta name=\"generator\" content=\"nnprof\">\n<title>";
  append_escaped(out, page_title(profile));
  out += "</title>\n<style>";
  out += kStyle;
  if (profile.heap.tracked) out += kHeapStyle;
  if (profile.cpu.sampled) out += html::kFlameStyle;
  if (profile.gpu.summary.traced) out += kGpuStyle;
  out += "</style>\n</head>\n<body data-ready=\"0\">\n";
}

void write_meta_item(std::string& out, std::string_view key, std::string_view value) {
  if (value.empty()) return;
  append(out, "<div><dt>{}</dt><dd>", key);
  append_escaped(out, value);
  out += "</dd></div>";
}

void write_page_header(const Profile& profile, std::string& out) {
  const Metadata& meta = profile.meta;
  out += "<header class=\"top\"><div class=\"wrap\"><h1><span class=\"brand\">nnprof</span> report</h1>";
  if (!meta.command_line.empty()) {
    out += "<div class=\"cmd\">Command <code>";
    append_escaped(out, meta.command_line);
    out += "</code></div>";
  }
  out += "<dl class=\"meta\">";
  std::string host = meta.hostname;
  if (!meta.os.empty()) host += host.empty() ? meta.os : fmt::format(" ({})", meta.os);
  write_meta_item(out, "Host", host);
  std::string cpu = meta.cpu_model;
  if (meta.logical_cpus > 0) {
    cpu += fmt::format("{}{}", cpu.empty() ? "" : ", ",
                       format_count(meta.logical_cpus, "logical CPU", "logical CPUs"));
  }
  write_meta_item(out, "CPU", cpu);
  write_meta_item(out, "Compiler", meta.compiler);
  write_meta_item(out, "PID", meta.pid == 0 ? std::string() : std::to_string(meta.pid));
  if (!meta.clock.source.empty()) {
    write_meta_item(out, "Clock",
                    fmt::format("{}, {:.4g} ns per tick", meta.clock.source, meta.clock.ns_per_tick));
  }
  write_meta_item(out, "nnprof", meta.nnprof_version);
  out += "</dl>";
  if (!profile.annotations.empty()) {
    append(out, "<details class=\"annotations\"><summary>Annotations ({})</summary><dl class=\"meta\">",
           profile.annotations.size());
    for (const auto& [key, value] : profile.annotations) {
      out += "<div><dt>";
      append_escaped(out, key);
      out += "</dt><dd>";
      append_escaped(out, value);
      out += "</dd></div>";
    }
    out += "</dl></details>";
  }
  out += "</div></header>\n";
}

void write_nav(const Profile& profile, std::string& out) {
  out += "<nav><div class=\"wrap\">";
  constexpr std::pair<std::string_view, std::string_view> kLinks[] = {
      {"summary", "Summary"},        {"bottlenecks", "Bottlenecks"}, {"hot", "Hot paths"},
      {"tree", "Call tree"},         {"timeline", "Timeline"},
      {"memory", "Memory"},          {"threads", "Threads"},
      {"insights", "Insights"},      {"completeness", "Completeness"},
      {"diagnostics", "Diagnostics"}};
  for (const auto& [id, label] : kLinks) {
    append(out, "<a href=\"#{}\">{}</a>", id, label);
    if (id == "memory" && profile.cpu.sampled) out += "<a href=\"#cpu\">CPU</a>";
    if (id == "memory" && profile.gpu.summary.traced) out += "<a href=\"#gpu\">GPU</a>";
    if (id == "threads" && !profile.flows.empty()) out += "<a href=\"#critical-path\">Critical path</a>";
    if (id == "memory" && !profile.metrics.empty()) out += "<a href=\"#metrics\">Metrics</a>";
    if (id == "hot" && !analysis::compute_scopes(profile).empty()) out += "<a href=\"#compute\">Compute</a>";
  }
  out += "</div></nav>\n<main class=\"wrap\">\n";
}

void open_section(std::string& out, std::string_view id, std::string_view title, std::string_view lead) {
  append(out, "<section id=\"{}\"><h2>{}</h2>", id, title);
  if (!lead.empty()) append(out, "<p class=\"lead\">{}</p>", lead);
}

// ---- summary cards ------------------------------------------------------------------

void write_card(std::string& out, std::string_view key, std::string_view value, std::string_view sub) {
  append(
      out,
      "<div class=\"card\"><div class=\"k\">{}</div><div class=\"v\">{}</div><div class=\"s\">{}</div></div>",
      key, value, sub);
}

std::string spans_card_sub(const Completeness& c) {
  if (!c.spans_enabled) return "statistics-only session: no timeline";
  return fmt::format("{} dropped · {} overwritten", format_count(c.spans_dropped),
                     format_count(c.spans_overwritten));
}

void write_overhead_card(const Profile& profile, const PercentOf& percent, std::string& out) {
  const Completeness& c = profile.completeness;
  if (!(c.overhead_per_scope_ns > 0.0)) {
    write_card(out, "Instrumentation overhead", "n/a", "not measured");
    return;
  }
  write_card(out, "Instrumentation overhead", format_duration(c.overhead_per_scope_ns) + " / scope",
             fmt::format("{} in total = {} of instrumented time", format_duration(c.overhead_total_ns),
                         percent_html(percent, c.overhead_total_ns)));
}

void write_cards(const Profile& profile, std::uint64_t instrumented_ns, const PercentOf& percent,
                 const GpuReportData& gpu, std::string& out) {
  const Completeness& c = profile.completeness;
  open_section(out, "summary", "Summary", "");
  out += "<div class=\"cards\">";
  write_card(out, "Session duration", format_duration(profile.meta.duration_ns),
             "from the session start to the snapshot");
  write_card(out, "Instrumented time", format_duration(instrumented_ns),
             "top-level scopes summed over threads; the 100% of every percentage");
  write_card(out, "Scopes recorded", format_count(c.scopes_recorded),
             format_count(profile.scopes.size(), "distinct name", "distinct names"));
  const auto exited = std::count_if(profile.threads.begin(), profile.threads.end(),
                                    [](const ThreadInfo& t) { return t.exited; });
  write_card(out, "Threads", format_count(profile.threads.size()),
             fmt::format("{} exited", format_count(static_cast<std::uint64_t>(exited))));
  if (profile.memory_counters.empty()) {
    write_card(out, "Peak memory", "n/a", "no named memory counters");
  } else {
    write_card(out, "Peak memory", format_bytes(profile.memory.peak_bytes),
               fmt::format("at {}, over {}", format_duration(profile.memory.peak_time_ns),
                           format_count(profile.memory_counters.size(), "named counter", "named counters")));
  }
  if (profile.heap.tracked) {
    const HeapSummary& h = profile.heap;
    write_card(out, "Peak heap", format_bytes(h.peak_bytes),
               fmt::format("at {}, {}", format_duration(h.peak_time_ns),
                           html::escape(h.peak_node == 0 ? std::string("outside any scope")
                                                         : "in " + profile.node_path(h.peak_node))));
  }
  if (profile.cpu.sampled) {
    const analysis::SampleCount all = analysis::cpu_sample_total(profile);
    write_card(out, "CPU samples", format_count(all.samples),
               fmt::format("{} of {} time, {}", format_duration(all.ns), profile.cpu.mode == "wall" ? "wall" : "CPU",
                           html::escape(profile.cpu.mechanism)));
  }
  if (profile.gpu.summary.traced) {
    write_card(out, "GPU time", format_duration(gpu.gpu_ns()),
               fmt::format("{} · {} · {}", format_count(gpu.kernel_count, "kernel", "kernels"),
                           format_count(gpu.memcpy_count, "copy", "copies"),
                           format_count(profile.gpu.devices.size(), "device", "devices")));
  }
  write_card(out, "Spans kept", c.spans_enabled ? format_count(c.spans_kept) : "none", spans_card_sub(c));
  write_overhead_card(profile, percent, out);
  out += "</div></section>\n";
}

// ---- table cells --------------------------------------------------------------------

void write_th(std::string& out, std::string_view label, std::string_view key, bool numeric) {
  append(out, "<th{} data-key=\"{}\"{}>{}</th>", numeric ? " class=\"num\"" : "", key,
         numeric ? " data-type=\"num\"" : "", label);
}

void write_td_name(std::string& out, std::string_view name) {
  out += "<td class=\"name\" title=\"";
  append_escaped(out, name);
  out += "\">";
  append_escaped(out, name);
  out += "</td>";
}

void write_td_text(std::string& out, std::string_view text) {
  out += "<td>";
  append_escaped(out, text);
  out += "</td>";
}

template <typename Number>
void write_td_num(std::string& out, std::string_view shown, Number value) {
  append(out, "<td class=\"num\" data-v=\"{}\">{}</td>", value, shown);
}

void write_td_percent(std::string& out, const PercentOf& percent, std::uint64_t ns) {
  const double fraction = percent.fraction(ns);
  append(
      out,
      "<td class=\"num\" data-v=\"{:.6f}\"><span class=\"bar\"><i style=\"width:{:.1f}%\"></i></span>{}</td>",
      fraction, std::clamp(fraction * 100.0, 0.0, 100.0), percent_html(percent, ns));
}

// A table of report_tables (or gpu_report_tables) cells, escaped, numbers right-aligned.
void write_text_table(const TextTable& table, std::string_view id, std::string& out) {
  append(out, "<div class=\"scroll\"><table id=\"{}\"><thead><tr>", id);
  for (const TableColumn& c : table.columns())
    append(out, "<th{}>{}</th>", c.align == Align::Right ? " class=\"num\"" : "", html::escape(c.header));
  out += "</tr></thead><tbody>";
  for (const auto& row : table.rows()) {
    out += "<tr>";
    for (std::size_t i = 0; i < row.size(); ++i)
      append(out, "<td{}>{}</td>", table.columns()[i].align == Align::Right ? " class=\"num\"" : "",
             html::escape(row[i]));
    out += "</tr>";
  }
  out += "</tbody></table></div>";
}

// ---- hot paths ----------------------------------------------------------------------

// GPU time by scope name, for the hot-path table's "GPU time" column (GPU-traced profiles only).
using GpuTimes = std::unordered_map<StringId, std::uint64_t>;

void write_hot_head(bool gpu, std::string& out) {
  out += "<thead><tr>";
  write_th(out, "Scope", "scope", false);
  constexpr std::pair<std::string_view, std::string_view> kColumns[] = {
      {"Calls", "calls"}, {"Total", "total"}, {"Self", "self"},     {"% instr", "pct"},
      {"Mean", "mean"},   {"p50", "p50"},     {"p95", "p95"},       {"p99", "p99"},
      {"Min", "min"},     {"Max", "max"},     {"Items/s", "items"}, {"Allocated", "alloc"}};
  for (const auto& [label, key] : kColumns) write_th(out, label, key, true);
  if (gpu) write_th(out, "GPU time", "gpu", true);
  out += "</tr></thead>";
}

void write_hot_row(const Profile& profile, const ScopeStats& s, const PercentOf& percent, const GpuTimes* gpu,
                   std::string& out) {
  out += "<tr>";
  write_td_name(out, profile.str(s.name));
  write_td_num(out, format_count(s.time.count), s.time.count);
  write_td_num(out, format_duration(s.total_ns), s.total_ns);
  write_td_num(out, format_duration(s.self_ns), s.self_ns);
  write_td_percent(out, percent, s.total_ns);
  write_td_num(out, format_duration(s.time.mean_ns), s.time.mean_ns);
  write_td_num(out, format_duration(s.time.p50_ns), s.time.p50_ns);
  write_td_num(out, format_duration(s.time.p95_ns), s.time.p95_ns);
  write_td_num(out, format_duration(s.time.p99_ns), s.time.p99_ns);
  write_td_num(out, format_duration(s.time.min_ns), s.time.min_ns);
  write_td_num(out, format_duration(s.time.max_ns), s.time.max_ns);
  const double rate = s.items_per_second();
  write_td_num(out, s.items > 0 ? format_rate(rate, "items/s") : std::string("—"), s.items > 0 ? rate : 0.0);
  write_td_num(out, s.memory.alloc_bytes > 0 ? format_bytes(s.memory.alloc_bytes) : std::string("—"),
               s.memory.alloc_bytes);
  if (gpu != nullptr) {
    const auto it = gpu->find(s.name);
    const std::uint64_t ns = it == gpu->end() ? 0 : it->second;
    write_td_num(out, it == gpu->end() ? std::string("—") : format_duration(ns), ns);
  }
  out += "</tr>\n";
}

void write_hot_table(const Profile& profile, const PercentOf& percent, std::string& out) {
  open_section(
      out, "hot", "Hot paths",
      "Every scope name, longest total first. Click a column to sort; total is inclusive (nested calls "
      "of the same name counted once), self excludes child scopes, % is of instrumented time.");
  if (profile.scopes.empty()) {
    append(out, "<p class=\"empty\">{}</p></section>\n", render(profile, analysis::no_scopes_hint(), kHtml));
    return;
  }
  out +=
      "<div class=\"tools\"><input type=\"search\" id=\"hot-filter\" placeholder=\"Filter scopes by name\" "
      "aria-label=\"Filter scopes by name\"><span class=\"muted\" id=\"hot-count\"></span></div>";
  const auto rows = analysis::top_by_total(profile, kMaxTableRows);
  out += "<div class=\"scroll\"><table class=\"sortable\" id=\"hot-table\">";
  const bool traced = profile.gpu.summary.traced;
  const GpuTimes gpu = traced ? gpu_time_by_scope(profile) : GpuTimes{};
  write_hot_head(traced, out);
  out += "<tbody>\n";
  for (const ScopeStats* scope : rows) write_hot_row(profile, *scope, percent, traced ? &gpu : nullptr, out);
  out += "</tbody></table></div>";
  if (rows.size() < profile.scopes.size()) {
    append(out, "<p class=\"muted\">Showing the {} longest of {} scopes.</p>", format_count(rows.size()),
           format_count(profile.scopes.size()));
  }
  out += "</section>\n";
}

// ---- call tree ----------------------------------------------------------------------

void write_tree_cells(const Profile& profile, const PercentOf& percent, std::uint32_t id, std::string& out) {
  const CallTreeNode& node = profile.call_tree[id];
  out += "<span class=\"nm\" title=\"";
  append_escaped(out, profile.node_path(id));
  out += "\">";
  append_escaped(out, profile.str(node.name));
  append(out,
         "</span><span class=\"c\">{}</span><span class=\"c\">{}</span><span class=\"c\">{}</span>"
         "<span class=\"c\">{}</span>",
         format_count(node.time.count), format_duration(node.time.sum_ns), format_duration(node.self_ns),
         format_duration(node.time.mean_ns));
  append(out, "<span class=\"c p\"><span class=\"bar\"><i style=\"width:{:.1f}%\"></i></span>{}</span>",
         std::clamp(percent.fraction(node.time.sum_ns) * 100.0, 0.0, 100.0),
         percent_html(percent, node.time.sum_ns));
}

// The walk's rows as nested <details>: a row followed by deeper rows opens one, closed
// where its last descendant shown ends.
void write_tree_rows(const Profile& profile, const PercentOf& percent, const analysis::TreeWalk& walk,
                     std::string& out) {
  std::vector<std::uint32_t> open;  // depths of the <details> not closed yet
  for (std::size_t i = 0; i < walk.rows.size(); ++i) {
    const analysis::TreeRow& row = walk.rows[i];
    const std::uint32_t next_depth = i + 1 < walk.rows.size() ? walk.rows[i + 1].depth : 0;
    if (next_depth > row.depth) {
      append(out, "<details{}><summary class=\"row\">", row.depth <= kTreeOpenDepth ? " open" : "");
      write_tree_cells(profile, percent, row.node, out);
      out += "</summary><div class=\"kids\">\n";
      open.push_back(row.depth);
    } else {
      out += "<div class=\"row leaf\">";
      write_tree_cells(profile, percent, row.node, out);
      out += "</div>\n";
    }
    while (!open.empty() && open.back() >= next_depth) {
      out += "</div></details>\n";
      open.pop_back();
    }
  }
}

void write_call_tree(const Profile& profile, const PercentOf& percent, std::string& out) {
  open_section(out, "tree", "Call tree",
               "Merged over all threads; children by total time. Hover a name for its full path.");
  if (profile.call_tree.size() <= 1) {
    out += "<p class=\"empty\">No call tree was recorded.</p></section>\n";
    return;
  }
  out +=
      "<div class=\"tools\"><button type=\"button\" data-tree=\"open\">Expand all</button>"
      "<button type=\"button\" data-tree=\"close\">Collapse all</button></div>";
  out +=
      "<div class=\"tree\"><div class=\"row hd\"><span class=\"nm\">Scope</span><span "
      "class=\"c\">Calls</span>"
      "<span class=\"c\">Total</span><span class=\"c\">Self</span><span class=\"c\">Mean</span>"
      "<span class=\"c p\">% instr</span></div>\n";
  const analysis::TreeWalk walk = analysis::walk_call_tree(profile, kTreeLimits);
  write_tree_rows(profile, percent, walk, out);
  out += "</div>";
  if (walk.omitted() > 0) {
    append(out, "<p class=\"muted\">{}</p>", render(profile, analysis::omitted_nodes(walk), kHtml));
  }
  out += "</section>\n";
}

// ---- timeline -----------------------------------------------------------------------

void write_timeline_notes(const Profile& profile, const html::TimelineLayout& layout, std::string& out) {
  const Completeness& c = profile.completeness;
  if (c.spans_dropped > 0) {
    append(out,
           "<p class=\"note\">{} {} dropped when the memory cap ({}) was reached (policy {}): the timeline "
           "shows the spans that were kept. Statistics and the call tree still count every scope.</p>",
           format_count(c.spans_dropped, "span", "spans"), c.spans_dropped == 1 ? "was" : "were",
           c.memory_cap_bytes == 0 ? "none" : format_bytes(c.memory_cap_bytes),
           c.buffer_policy.empty() ? "unknown" : c.buffer_policy);
  }
  if (c.spans_overwritten > 0) {
    append(out,
           "<p class=\"note\">{} {} overwritten by newer ones (flight recorder): the timeline shows the "
           "most recent spans only.</p>",
           format_count(c.spans_overwritten, "older span", "older spans"),
           c.spans_overwritten == 1 ? "was" : "were");
  }
  if (layout.merged) {
    const double ns_per_px = static_cast<double>(layout.t1_ns - layout.t0_ns) / html::kTimelineWidthPx;
    append(
        out,
        "<p class=\"note info\" id=\"timeline-merged\">{} spans are drawn as {} boxes: per thread and depth, "
        "spans narrower than {:g} px ({}) at this scale are merged per column of that width into one box, "
        "coloured after the name with the most time in it and paler where the spans leave gaps. Hover a "
        "box for its span count and busy time.</p>",
        format_count(layout.spans_drawn), format_count(layout.boxes.size()), layout.merge_px,
        format_duration(layout.merge_px * ns_per_px));
  }
  if (layout.spans_too_deep > 0) {
    append(out, "<p class=\"note\">{} nested deeper than {} levels {} not drawn.</p>",
           format_count(layout.spans_too_deep, "span", "spans"), html::kTimelineMaxDepth,
           layout.spans_too_deep == 1 ? "is" : "are");
  }
}

void write_timeline(const Profile& profile, std::ostream& stream, std::string& out) {
  open_section(out, "timeline", "Timeline",
               "Spans per thread, nested scopes stacked by depth, colour by name. Hover a box for its name, "
               "duration and start (times since the session start).");
  if (!profile.completeness.spans_enabled && profile.spans.empty()) {
    out +=
        "<p class=\"note info\">This was a statistics-only session: no spans were recorded, so there is no "
        "timeline. The tables above are complete.</p></section>\n";
    return;
  }
  const html::TimelineLayout layout = html::layout_timeline(profile);
  write_timeline_notes(profile, layout, out);
  if (layout.boxes.empty()) {
    out += "<p class=\"empty\">No spans were recorded.</p></section>\n";
    return;
  }
  out += "<div class=\"scroll\">";
  stream << out;  // the timeline is the page's largest part: hand over what precedes it first
  out.clear();
  html::write_timeline_svg(profile, layout, out);
  out += "</div></section>\n";
}

// ---- memory -------------------------------------------------------------------------

void write_counters_table(const Profile& profile, std::string& out) {
  out += "<div class=\"scroll\"><table class=\"sortable\" id=\"counters-table\"><thead><tr>";
  write_th(out, "Counter", "counter", false);
  constexpr std::pair<std::string_view, std::string_view> kColumns[] = {
      {"Current", "current"}, {"Peak", "peak"},     {"Allocated", "alloc"},
      {"Freed", "freed"},     {"Allocs", "allocs"}, {"Frees", "frees"}};
  for (const auto& [label, key] : kColumns) write_th(out, label, key, true);
  out += "</tr></thead><tbody>\n";
  for (const MemoryCounter& c : profile.memory_counters) {
    out += "<tr>";
    write_td_name(out, profile.str(c.name));
    write_td_num(out, format_bytes(c.current_bytes), c.current_bytes);
    write_td_num(out, format_bytes(c.peak_bytes), c.peak_bytes);
    write_td_num(out, format_bytes(c.alloc_bytes), c.alloc_bytes);
    write_td_num(out, format_bytes(c.freed_bytes), c.freed_bytes);
    write_td_num(out, format_count(c.alloc_count), c.alloc_count);
    write_td_num(out, format_count(c.free_count), c.free_count);
    out += "</tr>\n";
  }
  out += "</tbody></table></div>";
}

// ---- heap ---------------------------------------------------------------------------

void write_heap_facts(const Profile& profile, std::string& out) {
  out += "<dl class=\"kv\" id=\"heap-facts\">";
  for (const analysis::Fact& fact : analysis::heap_facts(profile)) {
    append(out, "<dt>{}</dt><dd>{}</dd>", fact.label, render(profile, fact.value, kHtml));
  }
  out += "</dl>";
  const analysis::LeakVerdict verdict = analysis::leak_verdict(profile);
  append(out, "<p class=\"note{}\" id=\"leak-verdict\" data-leak=\"{}\">{}</p>",
         verdict.memory_leak_detected ? "" : " info", verdict.memory_leak_detected ? 1 : 0,
         render(profile, verdict.explanation, kHtml));
}

void write_heap_allocators(const Profile& profile, std::string& out) {
  const auto top = analysis::top_allocators(profile, kMaxTableRows);
  if (top.empty()) return;
  out += "<h3>Top allocators</h3><p class=\"lead\">Heap bytes allocated while the scope was the innermost open "
         "one; % is of every heap byte allocated; retained is what was allocated there and still live at the "
         "end.</p>";
  out += "<div class=\"scroll\"><table class=\"sortable\" id=\"heap-allocators-table\"><thead><tr>";
  write_th(out, "Scope", "scope", false);
  constexpr std::pair<std::string_view, std::string_view> kColumns[] = {
      {"Allocated", "alloc"}, {"% of heap", "pct"},      {"Allocs", "allocs"},   {"Avg per call", "per-call"},
      {"Retained", "retained"}, {"Retained blocks", "blocks"}, {"Peak live", "peak"}};
  for (const auto& [label, key] : kColumns) write_th(out, label, key, true);
  out += "</tr></thead><tbody>\n";
  const PercentOf percent(profile.heap.alloc_bytes);
  for (const analysis::HeapAllocator& a : top) {
    out += "<tr>";
    write_td_name(out, profile.str(a.scope->name));
    write_td_num(out, format_bytes(a.alloc_bytes), a.alloc_bytes);
    write_td_percent(out, percent, a.alloc_bytes);
    write_td_num(out, format_count(a.alloc_count), a.alloc_count);
    write_td_num(out, a.bytes_per_call ? format_bytes(*a.bytes_per_call) : std::string("n/a"),
                 a.bytes_per_call.value_or(0));
    write_td_num(out, format_bytes(a.retained_bytes), a.retained_bytes);
    write_td_num(out, format_count(a.retained_blocks), a.retained_blocks);
    write_td_num(out, format_bytes(a.peak_live_bytes), a.peak_live_bytes);
    out += "</tr>\n";
  }
  out += "</tbody></table></div>";
}

// The sampled stack of a leak site, one frame per line, for a tooltip.
std::string stack_text(const Profile& profile, const LeakSite& site) {
  if (site.stack >= profile.stacks.size()) return "no stack sampled for this site";
  std::string text = "sampled stack, innermost first:";
  for (const std::uint32_t frame : profile.stacks[site.stack].frames) {
    text += "\n";
    text += analysis::frame_label(profile, frame);
  }
  return text;
}

void write_leak_sites(const Profile& profile, std::string& out) {
  if (profile.leaks.empty()) return;
  out += "<h3>Blocks still allocated at the end</h3><p class=\"lead\">By allocation site, largest first: the "
         "innermost scope and the function that called the allocator (hover it for the sampled stack). Leaked "
         "blocks are unreachable; reachable ones are still referenced from globals or thread stacks.</p>";
  out += "<div class=\"scroll\"><table class=\"sortable\" id=\"leaks-table\"><thead><tr>";
  write_th(out, "Scope", "scope", false);
  write_th(out, "Allocated at", "caller", false);
  write_th(out, "Blocks", "blocks", true);
  write_th(out, "Bytes", "bytes", true);
  write_th(out, "State", "state", false);
  out += "</tr></thead><tbody>\n";
  const char* unreachable = profile.heap.reachability_checked ? "leaked" : "not checked";
  const std::size_t rows = std::min(profile.leaks.size(), kMaxTableRows);
  for (std::size_t i = 0; i < rows; ++i) {
    const LeakSite& site = profile.leaks[i];
    out += "<tr>";
    write_td_name(out, analysis::scope_path_label(profile, site.node));
    out += "<td class=\"site\" title=\"";
    append_escaped(out, stack_text(profile, site));
    out += "\"><code>";
    append_escaped(out, analysis::frame_label(profile, site.caller));
    out += "</code></td>";
    write_td_num(out, format_count(site.blocks), site.blocks);
    write_td_num(out, format_bytes(site.bytes), site.bytes);
    write_td_text(out, site.reachable ? "reachable" : unreachable);
    out += "</tr>\n";
  }
  out += "</tbody></table></div>";
  if (rows < profile.leaks.size()) {
    append(out, "<p class=\"muted\">Showing the {} largest of {} sites.</p>", format_count(rows),
           format_count(profile.leaks.size()));
  }
}

// Bottleneck severities in the badge colours of diagnostics.
std::string_view badge_class(analysis::BottleneckSeverity severity) {
  switch (severity) {
    case analysis::BottleneckSeverity::High: return "error";
    case analysis::BottleneckSeverity::Medium: return "warning";
    case analysis::BottleneckSeverity::Low: return "info";
  }
  return "info";
}

// One <li> per bottleneck, or `none` when there is none: the same list wherever it appears.
void write_bottleneck_items(const Profile& profile, const std::vector<analysis::Bottleneck>& found,
                            const analysis::Sentence& none, std::string& out) {
  if (found.empty()) append(out, "<li>{}</li>", render(profile, none, kHtml));
  for (const analysis::Bottleneck& b : found) {
    append(out, "<li data-kind=\"{}\"><span class=\"sev {}\">{}</span> <b>{}</b>: {} {}</li>",
           analysis::to_string(b.kind), badge_class(b.severity), analysis::to_string(b.severity),
           analysis::title(b.kind), render(profile, b.description, kHtml), render(profile, b.suggestion, kHtml));
  }
}

void write_memory_findings(const Profile& profile, std::string& out) {
  out += "<h3>Findings</h3><ul class=\"insights\" id=\"memory-findings\">";
  const std::vector<analysis::Bottleneck> found = analysis::memory_bottlenecks(profile);
  write_bottleneck_items(profile, found, analysis::no_memory_bottlenecks(), out);
  out += "</ul>";
}

// With heap tracking the memory section leads with the heap; named counters follow.
void write_heap_memory(const Profile& profile, std::string& out) {
  open_section(out, "memory", "Memory",
               "Heap in use (every malloc and new, tracked automatically), the process's resident set size (RSS) "
               "and its peak (VmHWM) over time; times are since the session start.");
  out += "<div class=\"scroll\">";
  html::write_heap_chart(profile, out);
  out += "</div>";
  write_heap_facts(profile, out);
  write_heap_allocators(profile, out);
  write_leak_sites(profile, out);
  write_memory_findings(profile, out);
  if (!profile.memory_counters.empty()) {
    out += "<h3>Named memory counters</h3><p class=\"lead\">Bytes in use over time: the sum of every named "
           "counter (record_alloc minus record_free).</p>";
    html::write_memory_chart(profile, out);
    append(out, "<p class=\"muted\">{}</p>", render(profile, analysis::memory_totals(profile), kHtml));
    write_counters_table(profile, out);
  }
  out += "</section>\n";
}

void write_memory(const Profile& profile, std::string& out) {
  if (profile.heap.tracked) {
    write_heap_memory(profile, out);
    return;
  }
  open_section(out, "memory", "Memory",
               "Bytes in use over time: the sum of every named counter (record_alloc minus record_free).");
  html::write_memory_chart(profile, out);
  if (!profile.memory_counters.empty()) {
    append(out, "<p class=\"muted\">{}</p>", render(profile, analysis::memory_totals(profile), kHtml));
    write_counters_table(profile, out);
  }
  out += "</section>\n";
}

// ---- CPU samples ----------------------------------------------------------------------

constexpr std::size_t kCpuCallerFunctions = 10;
constexpr std::size_t kCpuEdges = 5;
constexpr std::size_t kHotLines = 50;
constexpr std::size_t kCpuScopeTop = 5;

void write_td_share(std::string& out, double fraction) {
  append(out,
         "<td class=\"num\" data-v=\"{:.6f}\"><span class=\"bar\"><i style=\"width:{:.1f}%\"></i></span>{}</td>",
         fraction, std::clamp(fraction * 100.0, 0.0, 100.0), format_percent(fraction));
}

void write_cpu_functions(const Profile& profile, std::string& out) {
  std::vector<analysis::CpuFunction> functions = analysis::cpu_functions(profile);
  if (functions.size() > kMaxTableRows) functions.resize(kMaxTableRows);
  out += "<h3>Top functions</h3><p class=\"lead\">Self: samples whose innermost frame is the function; total: "
         "samples with the function anywhere on the stack, once per sample. Percentages are of every sample.</p>";
  out += "<div class=\"scroll\"><table class=\"sortable\" id=\"cpu-functions-table\"><thead><tr>";
  write_th(out, "Function", "function", false);
  write_th(out, "Module", "module", false);
  constexpr std::pair<std::string_view, std::string_view> kColumns[] = {
      {"Self %", "self-pct"}, {"Self", "self"}, {"Self time", "self-ns"}, {"Total %", "total-pct"}, {"Total", "total"}};
  for (const auto& [label, key] : kColumns) write_th(out, label, key, true);
  out += "</tr></thead><tbody>\n";
  for (const analysis::CpuFunction& f : functions) {
    out += "<tr>";
    write_td_name(out, f.name);
    write_td_text(out, f.module.empty() ? "?" : f.module);
    write_td_share(out, f.self_share);
    write_td_num(out, format_count(f.self.samples), f.self.samples);
    write_td_num(out, format_duration(f.self.ns), f.self.ns);
    write_td_share(out, f.total_share);
    write_td_num(out, format_count(f.total.samples), f.total.samples);
    out += "</tr>\n";
  }
  out += "</tbody></table></div>";
  out += "<h3>Who calls the hottest functions</h3><ul class=\"insights\" id=\"cpu-callers\">";
  for (std::size_t i = 0; i < functions.size() && i < kCpuCallerFunctions; ++i) {
    if (functions[i].self.samples == 0) break;
    out += "<li><code>";
    append_escaped(out, functions[i].name);
    out += "</code>: ";
    append_escaped(out, cpu_callers_summary(analysis::cpu_callers(profile, functions[i].name), kCpuEdges));
    out += "</li>";
  }
  out += "</ul>";
}

void write_cpu_lines(const Profile& profile, std::string& out) {
  const std::vector<analysis::CpuLine> lines = analysis::cpu_hot_lines(profile, kHotLines);
  if (lines.empty()) return;
  out += "<h3>Hot lines</h3><p class=\"lead\">Samples whose innermost frame was on the line.</p>";
  out += "<div class=\"scroll\"><table class=\"sortable\" id=\"cpu-lines-table\"><thead><tr>";
  write_th(out, "Line", "line", false);
  write_th(out, "Function", "function", false);
  write_th(out, "Samples", "samples", true);
  write_th(out, "% of samples", "pct", true);
  write_th(out, "Time", "ns", true);
  out += "</tr></thead><tbody>\n";
  for (const analysis::CpuLine& l : lines) {
    out += "<tr>";
    write_td_name(out, fmt::format("{}:{}", l.file, l.line));
    write_td_text(out, l.function);
    write_td_num(out, format_count(l.self.samples), l.self.samples);
    write_td_share(out, l.share);
    write_td_num(out, format_duration(l.self.ns), l.self.ns);
    out += "</tr>\n";
  }
  out += "</tbody></table></div>";
}

void write_cpu_scopes(const Profile& profile, std::string& out) {
  std::vector<analysis::CpuScope> scopes = analysis::cpu_scopes(profile, kCpuScopeTop);
  if (scopes.empty()) return;
  if (scopes.size() > kMaxTableRows) scopes.resize(kMaxTableRows);
  out += "<h3>Samples per scope</h3><p class=\"lead\">Each scope with everything below it, and its hottest "
         "functions by self samples (% of the scope's samples).</p>";
  out += "<div class=\"scroll\"><table class=\"sortable\" id=\"cpu-scopes-table\"><thead><tr>";
  write_th(out, "Scope", "scope", false);
  write_th(out, "Samples", "samples", true);
  write_th(out, "% of samples", "pct", true);
  write_th(out, "Time", "ns", true);
  write_th(out, "Hottest functions", "top", false);
  out += "</tr></thead><tbody>\n";
  for (const analysis::CpuScope& scope : scopes) {
    out += "<tr>";
    write_td_name(out, scope.path);
    write_td_num(out, format_count(scope.samples.samples), scope.samples.samples);
    write_td_share(out, scope.share);
    write_td_num(out, format_duration(scope.samples.ns), scope.samples.ns);
    std::string top;
    for (const analysis::CpuFunction& f : scope.top) {
      if (f.self.samples == 0) continue;
      top += fmt::format("{}{} {}", top.empty() ? "" : ", ", f.name, format_percent(f.self_share));
    }
    write_td_text(out, top.empty() ? "-" : top);
    out += "</tr>\n";
  }
  out += "</tbody></table></div>";
}

void write_cpu_findings(const Profile& profile, std::string& out) {
  out += "<h3>Findings</h3><ul class=\"insights\" id=\"cpu-findings\">";
  const std::vector<analysis::Bottleneck> found = analysis::cpu_bottlenecks(profile);
  write_bottleneck_items(profile, found, analysis::no_cpu_bottlenecks(profile), out);
  out += "</ul>";
}

// CPU sampling: how it ran, the flame graph, functions, callers, lines, scopes, findings.
void write_cpu(const Profile& profile, std::string& out) {
  open_section(out, "cpu", "CPU samples",
               "Where the threads were when the sampler interrupted them: each sample stands for one sampling "
               "period of CPU (or wall) time.");
  out += "<dl class=\"kv\" id=\"cpu-facts\">";
  for (const analysis::Fact& fact : analysis::cpu_facts(profile)) {
    append(out, "<dt>{}</dt><dd>{}</dd>", fact.label, render(profile, fact.value, kHtml));
  }
  out += "</dl>";
  out += "<h3>Flame graph</h3><p class=\"lead\">Every sampled stack merged, callers above callees (an icicle "
         "graph), each frame as wide as its samples. Instrumented scopes (blue) sit above the functions they ran.</p>";
  html::write_flame_graph(analysis::flame_tree(profile, {}, true), out);
  write_cpu_functions(profile, out);
  write_cpu_lines(profile, out);
  write_cpu_scopes(profile, out);
  write_cpu_findings(profile, out);
  out += "</section>\n";
}

// ---- threads ------------------------------------------------------------------------

void write_threads(const Profile& profile, const PercentOf& percent, std::string& out) {
  open_section(out, "threads", "Threads",
               "Which threads did the work: time in each thread's top-level scopes.");
  if (profile.threads.empty()) {
    out += "<p class=\"empty\">No threads recorded a scope.</p></section>\n";
    return;
  }
  out += "<div class=\"scroll\"><table class=\"sortable\" id=\"threads-table\"><thead><tr>";
  write_th(out, "Thread", "thread", false);
  write_th(out, "TID", "tid", true);
  write_th(out, "Scopes", "scopes", true);
  write_th(out, "Top-level time", "time", true);
  write_th(out, "% instr", "pct", true);
  write_th(out, "State", "state", false);
  out += "</tr></thead><tbody>\n";
  for (const ThreadInfo& t : profile.threads) {
    out += "<tr>";
    write_td_name(out, t.name.empty() ? "[unnamed]" : t.name);
    write_td_num(out, std::to_string(t.os_tid), t.os_tid);
    write_td_num(out, format_count(t.scopes_recorded), t.scopes_recorded);
    write_td_num(out, format_duration(t.top_level_ns), t.top_level_ns);
    write_td_percent(out, percent, t.top_level_ns);
    write_td_text(out, t.exited ? "exited" : "running");
    out += "</tr>\n";
  }
  out += "</tbody></table></div></section>\n";
}

// ---- bottlenecks, advice, compute ---------------------------------------------------

void write_bottlenecks(const Profile& profile, std::string& out) {
  open_section(out, "bottlenecks", "Bottlenecks and recommendations",
               "What passed a threshold, with the numbers, and what to change first: expected speedups of the whole "
               "run follow Amdahl's law from each part's share of the time.");
  out += "<h3>Bottlenecks</h3><ul class=\"insights\" id=\"bottleneck-list\">";
  const std::vector<analysis::Bottleneck> found = analysis::all_bottlenecks(profile);
  write_bottleneck_items(profile, found, analysis::no_bottlenecks(profile), out);
  out += "</ul><h3>Recommendations</h3>";
  const std::vector<analysis::Advice> advice = analysis::advise(profile);
  if (advice.empty()) {
    append(out, "<p class=\"empty\">{}</p></section>\n", render(profile, analysis::no_advice(), kHtml));
    return;
  }
  out += "<ol class=\"advice\" id=\"recommendations\">";
  for (const analysis::Advice& a : advice) {
    append(out, "<li><b>{}</b> <span class=\"muted\">({})</span><br>Evidence: {}<ul>", render(profile, a.title, kHtml),
           render(profile, analysis::speedup_summary(a), kHtml), render(profile, a.evidence, kHtml));
    for (const analysis::Sentence& step : a.steps) append(out, "<li>{}</li>", render(profile, step, kHtml));
    out += "</ul></li>";
  }
  out += "</ol></section>\n";
}

void write_compute(const Profile& profile, std::string& out) {
  const std::vector<analysis::ScopeCompute> scopes = analysis::compute_scopes(profile);
  if (scopes.empty()) return;
  open_section(out, "compute", "Compute and roofline", render(profile, analysis::compute_note(profile, scopes), kHtml));
  append(out, "<p class=\"muted\">{}</p>",
         render(profile,
                analysis::machine_known(profile) ? analysis::machine_roofs(profile.machine) : analysis::no_machine_hint(),
                kHtml));
  out += "<div class=\"scroll\">";
  html::write_roofline_chart(profile, scopes, out);
  out += "</div>";
  write_text_table(compute_table(profile, scopes, Headers::Document), "compute-table", out);
  out += "</section>\n";
}

// ---- GPU ----------------------------------------------------------------------------

constexpr std::size_t kKernelBars = 20;

// The top kernels by total time as horizontal bars, each as long as its time relative to the
// longest: where the GPU time went, at a glance.
void write_kernel_bars(const Profile& profile, const GpuReportData& data, std::string& out) {
  if (data.kernels.empty() || data.kernels.front().total_ns == 0) return;
  const double longest = static_cast<double>(data.kernels.front().total_ns);
  out += "<div class=\"kbars\" id=\"gpu-kernel-chart\">";
  for (std::size_t i = 0; i < data.kernels.size() && i < kKernelBars; ++i) {
    const GpuKernelSummary& k = data.kernels[i];
    const std::string name = k.name == kNone ? std::string("[unnamed]") : profile.str(k.name);
    out += "<div class=\"kb\"><span class=\"kn\" title=\"";
    append_escaped(out, name);
    out += "\">";
    append_escaped(out, name);
    append(out, "</span><span class=\"kt\"><i style=\"width:{:.1f}%\"></i></span><span class=\"kv\">{} ({})</span></div>",
           std::clamp(static_cast<double>(k.total_ns) / longest * 100.0, 0.0, 100.0), format_duration(k.total_ns),
           format_percent(k.share));
  }
  out += "</div>";
}

// GPU tracing: how it ran and what it lost, copies, kernels, streams, devices, peer copies,
// device memory, and what each scope's CPU time paid for on the GPU.
void write_gpu(const Profile& profile, const GpuReportData& data, std::string& out) {
  open_section(out, "gpu", "GPU",
               "What CUPTI traced on the GPUs: kernels, copies and memsets on each stream, device memory, and the "
               "scope that launched each. Times are since the session start, on the CPU spans' clock.");
  out += "<dl class=\"kv\" id=\"gpu-facts\">";
  for (const GpuFact& fact : gpu_facts(profile, data)) {
    out += "<dt>";
    append_escaped(out, fact.label);
    out += "</dt><dd>";
    append_escaped(out, fact.value);
    out += "</dd>";
  }
  out += "</dl>";
  if (!data.kernels.empty()) {
    out += "<h3>Top kernels</h3><p class=\"lead\">By total time; % is of the GPU time (kernels, copies and memsets "
           "summed). Grid, block, registers and theoretical occupancy are those of the configuration launched most "
           "often; (est.) marks an occupancy nnprof computed from the device limits.</p>";
    write_kernel_bars(profile, data, out);
    write_text_table(gpu_kernels_table(profile, data, kMaxTableRows, Headers::Document), "gpu-kernels-table", out);
    if (data.kernels.size() > kMaxTableRows) {
      append(out, "<p class=\"muted\">Showing the {} longest of {} kernels.</p>", format_count(kMaxTableRows),
             format_count(data.kernels.size()));
    }
  }
  if (!data.transfers.empty()) {
    out += "<h3>Copies and memsets</h3><p class=\"lead\">Achieved bandwidth: bytes over the summed time of the "
           "copies. Copies from or to pageable host memory go through a staging buffer and cannot overlap with host "
           "work.</p>";
    write_text_table(gpu_transfers_table(data, Headers::Document), "gpu-transfers-table", out);
  }
  if (!data.streams.streams.empty()) {
    append(out,
           "<h3>Streams</h3><p class=\"lead\">Idle: time between a stream's first op and its last with nothing "
           "running on it; idle gaps: idle stretches longer than {}; efficiency: busy over that span.</p>",
           html::escape(format_duration(data.streams.gap_threshold_ns)));
    write_text_table(gpu_streams_table(profile, data, Headers::Document), "gpu-streams-table", out);
  }
  if (!data.streams.devices.empty()) {
    out += "<h3>Devices</h3><p class=\"lead\">Kernel busy: time with at least one kernel running, and its share of "
           "the session; overlap: time with two or more streams of the device busy at once.</p>";
    write_text_table(gpu_devices_table(data, Headers::Document), "gpu-devices-table", out);
  }
  if (!data.streams.peers.empty()) {
    out += "<h3>Peer-to-peer copies</h3>";
    write_text_table(gpu_peers_table(data, Headers::Document), "gpu-peers-table", out);
  }
  if (!data.memory.devices.empty()) {
    out += "<h3>Device memory</h3><p class=\"lead\">Allocations CUPTI traced (cudaMalloc, stream-ordered and "
           "managed); NVML: memory in use on the device, by every process.</p>";
    write_text_table(gpu_memory_table(data, Headers::Document), "gpu-memory-table", out);
    for (const std::string& note : gpu_memory_notes(data)) {
      out += "<p class=\"muted\">";
      append_escaped(out, note);
      out += "</p>";
    }
  }
  if (!data.memory.leaks.empty()) {
    out += "<h3>Device memory still allocated at the end</h3><p class=\"lead\">By device and allocating scope, "
           "largest first.</p>";
    write_text_table(gpu_leaks_table(profile, data, kMaxTableRows, Headers::Document), "gpu-leaks-table", out);
  }
  out += "<h3 id=\"gpu-scopes\">GPU time per scope</h3>";
  if (profile.gpu.scopes.empty()) {
    out += "<p class=\"empty\">No GPU work was launched inside a scope.</p></section>\n";
    return;
  }
  out += "<p class=\"lead\">GPU work launched while the scope was open (nested calls of the same name counted once). "
         "GPU time / CPU time is over the scope's inclusive CPU time; above 100% the GPU worked longer than the CPU "
         "spent in the scope.</p>";
  write_text_table(gpu_scopes_table(profile, Headers::Document), "gpu-scopes-table", out);
  out += "</section>\n";
}

// ---- insights, completeness, diagnostics --------------------------------------------

void write_insights(const Profile& profile, std::string& out) {
  open_section(out, "insights", "Insights", "");
  if (profile.scopes.empty()) {
    out += "<p class=\"empty\">No scopes, no insights.</p></section>\n";
    return;
  }
  out += "<ul class=\"insights\">";
  for (const analysis::Insight& insight : analysis::insights(profile)) {
    append(out, "<li>{}</li>", render(profile, insight.sentence, kHtml));
  }
  out += "</ul></section>\n";
}

void write_completeness(const Profile& profile, std::string& out) {
  open_section(out, "completeness", "Completeness and cost", analysis::kStatisticsAreComplete);
  out += "<dl class=\"kv\">";
  for (const analysis::Fact& fact : analysis::completeness_facts(profile)) {
    append(out, "<dt>{}</dt><dd>{}</dd>", fact.label, render(profile, fact.value, kHtml));
  }
  out += "</dl></section>\n";
}

void write_diagnostics(const Profile& profile, std::string& out) {
  open_section(out, "diagnostics", "Diagnostics", "");
  if (profile.diagnostics.empty()) {
    out += "<p class=\"empty\">None: every scope opened and closed as expected.</p></section>\n";
    return;
  }
  out +=
      "<div class=\"scroll\"><table id=\"diagnostics-table\"><thead><tr><th>Severity</th><th>Kind</th>"
      "<th class=\"num\">Count</th><th>Message</th></tr></thead><tbody>\n";
  for (const Diagnostic& d : profile.diagnostics) {
    append(
        out,
        "<tr><td><span class=\"sev {0}\">{0}</span></td><td><code>{1}</code></td><td class=\"num\">{2}</td>"
        "<td class=\"msg\">",
        to_string(d.severity), to_string(d.kind), format_count(d.count));
    append_escaped(out, d.message);
    out += "</td></tr>\n";
  }
  out += "</tbody></table></div></section>\n";
}

void write_footer(const Profile& profile, std::string& out) {
  out += "</main>\n<footer class=\"wrap\">Generated by nnprof";
  if (!profile.meta.nnprof_version.empty()) {
    out += ' ';
    append_escaped(out, profile.meta.nnprof_version);
  }
  out += ". A self-contained page: nothing is loaded from the network.</footer>\n<script>";
  out += kScript;
  if (profile.cpu.sampled) out += html::kFlameScript;
  out += "</script>\n</body>\n</html>\n";
}

}  // namespace

void write_html_report(const Profile& whole, std::ostream& stream) {
  std::optional<Profile> storage;
  const Profile& profile = with_capped_names(whole, storage);
  const std::uint64_t instrumented_ns = profile.instrumented_ns();
  const PercentOf percent(instrumented_ns);
  std::string out;
  out.reserve(64 * 1024);
  write_head(profile, out);
  write_page_header(profile, out);
  write_nav(profile, out);
  // Replays every GPU op and allocation once, for the card and the GPU section (empty untraced).
  const GpuReportData gpu = gpu_report_data(profile);
  write_cards(profile, instrumented_ns, percent, gpu, out);
  write_bottlenecks(profile, out);
  write_hot_table(profile, percent, out);
  write_compute(profile, out);
  write_call_tree(profile, percent, out);
  stream << out;
  out.clear();
  write_timeline(profile, stream, out);
  write_memory(profile, out);
  if (profile.cpu.sampled) write_cpu(profile, out);
  if (profile.gpu.summary.traced) write_gpu(profile, gpu, out);
  html::write_metrics_section(profile, out);
  write_threads(profile, percent, out);
  if (!profile.flows.empty()) write_critical_path_html(profile, out);
  write_insights(profile, out);
  write_completeness(profile, out);
  write_diagnostics(profile, out);
  write_footer(profile, out);
  stream << out;
}

void HtmlExporter::write(const Profile& profile, std::ostream& out) const {
  write_html_report(profile, out);
  if (!out) throw Error("could not write the HTML report: the output stream failed");
}

}  // namespace nnprof::io
