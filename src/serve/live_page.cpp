#include "serve/live_page.hpp"

#include <fmt/format.h>

namespace nnprof::serve {

namespace {

constexpr std::string_view kStyle = R"CSS(
:root{--fg:#1d2330;--muted:#667085;--line:#e3e6ec;--bg:#f7f8fa;--panel:#fff;--accent:#2f6fde;--warn:#b54708;--bad:#b42318}
*{box-sizing:border-box}
body{margin:0;font:13px/1.4 system-ui,-apple-system,Segoe UI,Roboto,sans-serif;color:var(--fg);background:var(--bg)}
header{display:flex;flex-wrap:wrap;gap:16px;align-items:baseline;padding:10px 16px;background:var(--panel);border-bottom:1px solid var(--line)}
header h1{font-size:16px;margin:0}
header .fact{color:var(--muted)}
header .fact b{color:var(--fg);font-weight:600}
#status.stale{color:var(--bad)}
main{display:grid;grid-template-columns:repeat(auto-fit,minmax(520px,1fr));gap:12px;padding:12px}
section{background:var(--panel);border:1px solid var(--line);border-radius:6px;padding:10px 12px;min-width:0}
section.wide{grid-column:1/-1}
h2{font-size:14px;margin:0 0 8px}
h2 small{font-weight:400;color:var(--muted)}
table{border-collapse:collapse;width:100%}
th,td{padding:3px 6px;border-bottom:1px solid var(--line);text-align:right;white-space:nowrap}
th:first-child,td:first-child{text-align:left}
td.name{text-align:left;max-width:420px;overflow:hidden;text-overflow:ellipsis}
th{color:var(--muted);font-weight:600}
.tree td.name{font-family:ui-monospace,monospace;font-size:12px}
canvas{width:100%;display:block}
.charts{display:grid;grid-template-columns:repeat(auto-fit,minmax(240px,1fr));gap:8px}
.chart h3{font-size:12px;margin:0 0 2px;font-weight:600}
.chart .last{color:var(--muted);font-weight:400}
.empty{color:var(--muted);font-style:italic}
ul.findings{margin:0;padding-left:18px}
ul.findings li{margin-bottom:6px}
.sev-high{color:var(--bad);font-weight:600}.sev-medium{color:var(--warn);font-weight:600}.sev-low{color:var(--muted);font-weight:600}
#flame-tip{position:fixed;pointer-events:none;background:#1d2330;color:#fff;padding:3px 6px;border-radius:3px;font-size:12px;display:none;max-width:600px}
button{font:inherit}
)CSS";

constexpr std::string_view kScript = R"JS(
'use strict';
const params = new URLSearchParams(location.search);
const token = params.get('token');
const withToken = (path) => token ? path + (path.includes('?') ? '&' : '?') + 'token=' + encodeURIComponent(token) : path;
const $ = (id) => document.getElementById(id);
const el = (tag, text, cls) => { const e = document.createElement(tag); if (text !== undefined && text !== null) e.textContent = String(text); if (cls) e.className = cls; return e; };

function fmtDuration(s) {
  if (s === null || s === undefined || !isFinite(s)) return '–';
  const a = Math.abs(s);
  if (a >= 3600) return (s / 3600).toFixed(2) + ' h';
  if (a >= 60) return (s / 60).toFixed(2) + ' min';
  if (a >= 1) return s.toFixed(3) + ' s';
  if (a >= 1e-3) return (s * 1e3).toFixed(3) + ' ms';
  if (a >= 1e-6) return (s * 1e6).toFixed(3) + ' µs';
  return (s * 1e9).toFixed(0) + ' ns';
}
function fmtBytes(b) {
  if (b === null || b === undefined || !isFinite(b)) return '–';
  const units = ['B', 'KiB', 'MiB', 'GiB', 'TiB'];
  let i = 0; let v = b;
  while (Math.abs(v) >= 1024 && i < units.length - 1) { v /= 1024; i++; }
  return (i === 0 ? v.toFixed(0) : v.toFixed(2)) + ' ' + units[i];
}
function fmtNumber(v) {
  if (v === null || v === undefined || !isFinite(v)) return '–';
  if (Math.abs(v) >= 1e6 || (Math.abs(v) < 1e-3 && v !== 0)) return v.toExponential(3);
  return Number.isInteger(v) ? v.toLocaleString('en') : v.toFixed(3);
}
function fmtUnit(v, unit) {
  if (unit === 'bytes' || unit === 'B') return fmtBytes(v);
  if (unit === 'ns') return fmtDuration(v === null ? null : v * 1e-9);
  if (unit === 'bytes/s') return fmtBytes(v) + '/s';
  if (unit === 'percent') return fmtNumber(v) + ' %';
  return fmtNumber(v) + (unit ? ' ' + unit : '');
}

function fillTable(tbody, rows, cells) {
  const fresh = document.createDocumentFragment();
  for (const row of rows) {
    const tr = document.createElement('tr');
    for (const [text, value, cls] of cells(row)) {
      const td = el('td', text, cls);
      if (value !== undefined) td.dataset.v = String(value);
      tr.appendChild(td);
    }
    fresh.appendChild(tr);
  }
  tbody.replaceChildren(fresh);
}

function sizeCanvas(canvas, height) {
  const ratio = window.devicePixelRatio || 1;
  const width = Math.max(canvas.clientWidth, 200);
  canvas.style.height = height + 'px';
  canvas.width = Math.round(width * ratio);
  canvas.height = Math.round(height * ratio);
  const ctx = canvas.getContext('2d');
  ctx.setTransform(ratio, 0, 0, ratio, 0, 0);
  return [ctx, width, height];
}

const palette = ['#2f6fde', '#d9480f', '#2b8a3e', '#862e9c', '#e67700', '#0b7285'];
function lineChart(canvas, t, series, unit) {
  const [ctx, w, h] = sizeCanvas(canvas, 120);
  ctx.clearRect(0, 0, w, h);
  let lo = Infinity, hi = -Infinity;
  for (const s of series) for (const v of s.values) if (v !== null && isFinite(v)) { lo = Math.min(lo, v); hi = Math.max(hi, v); }
  ctx.font = '11px system-ui, sans-serif';
  ctx.fillStyle = '#667085';
  if (!t.length || lo === Infinity) { ctx.fillText('no data yet', 8, h / 2); return; }
  if (lo > 0) lo = 0;
  if (hi === lo) hi = lo + 1;
  const left = 70, right = w - 6, top = 6, bottom = h - 18;
  const t0 = t[0], t1 = t[t.length - 1] > t0 ? t[t.length - 1] : t0 + 1;
  const x = (v) => left + (v - t0) / (t1 - t0) * (right - left);
  const y = (v) => bottom - (v - lo) / (hi - lo) * (bottom - top);
  ctx.strokeStyle = '#e3e6ec'; ctx.lineWidth = 1;
  ctx.beginPath(); ctx.moveTo(left, top); ctx.lineTo(left, bottom); ctx.lineTo(right, bottom); ctx.stroke();
  ctx.fillText(fmtUnit(hi, unit), 2, top + 8);
  ctx.fillText(fmtUnit(lo, unit), 2, bottom);
  ctx.fillText(fmtDuration(t0), left, h - 4);
  const end = fmtDuration(t1); ctx.fillText(end, right - ctx.measureText(end).width, h - 4);
  series.forEach((s, k) => {
    ctx.strokeStyle = s.color || palette[k % palette.length]; ctx.lineWidth = 1.5; ctx.beginPath();
    let pen = false;
    s.values.forEach((v, i) => {
      if (v === null || !isFinite(v)) { pen = false; return; }
      if (pen) ctx.lineTo(x(t[i]), y(v)); else { ctx.moveTo(x(t[i]), y(v)); pen = true; }
    });
    ctx.stroke();
  });
}

function chartBox(parent, title, last) {
  const box = el('div', null, 'chart');
  const h = el('h3', title);
  h.appendChild(el('span', last ? '  ' + last : '', 'last'));
  box.appendChild(h);
  const canvas = document.createElement('canvas');
  box.appendChild(canvas);
  parent.appendChild(box);
  return canvas;
}

let flameRects = [];
function drawFlame(root) {
  const canvas = $('flame');
  const rowHeight = 17;
  let depth = 0;
  const measure = (n, d) => { depth = Math.max(depth, d); for (const c of n.c) measure(c, d + 1); };
  measure(root, 1);
  const [ctx, w, h] = sizeCanvas(canvas, Math.min(depth, 40) * rowHeight + 2);
  ctx.clearRect(0, 0, w, h);
  flameRects = [];
  ctx.font = '11px ui-monospace, monospace';
  if (!root.v) { ctx.fillStyle = '#667085'; ctx.fillText('no CPU samples in this window', 8, 13); return; }
  const place = (n, x0, width, d) => {
    if (width < 0.5 || d >= 40) return;
    const y0 = d * rowHeight;
    const hue = 20 + (n.n.length * 37 + n.n.charCodeAt(0)) % 40;
    ctx.fillStyle = d === 0 ? '#c8ccd4' : 'hsl(' + hue + ',80%,' + (62 + (n.n.length % 10)) + '%)';
    ctx.fillRect(x0, y0, Math.max(width - 0.5, 0.5), rowHeight - 1);
    flameRects.push({x0, x1: x0 + width, y0, y1: y0 + rowHeight, n});
    if (width > 30) {
      ctx.fillStyle = '#1d2330';
      let label = n.n;
      const room = Math.floor((width - 6) / 6.6);
      if (label.length > room) label = label.slice(0, Math.max(room - 1, 0)) + '…';
      ctx.fillText(label, x0 + 3, y0 + 12);
    }
    let cx = x0;
    for (const c of n.c) { const cw = width * c.v / n.v; place(c, cx, cw, d + 1); cx += cw; }
  };
  place(root, 0, w, 0);
  canvas.dataset.total = String(root.v);
}
function flameHover(ev) {
  const tip = $('flame-tip');
  const r = ev.target.getBoundingClientRect();
  const px = ev.clientX - r.left, py = ev.clientY - r.top;
  const hit = flameRects.find((f) => px >= f.x0 && px < f.x1 && py >= f.y0 && py < f.y1);
  if (!hit) { tip.style.display = 'none'; return; }
  const total = Number($('flame').dataset.total) || 1;
  tip.textContent = hit.n.n + ' — ' + hit.n.v + ' samples (' + (100 * hit.n.v / total).toFixed(1) + '%)';
  tip.style.left = (ev.clientX + 12) + 'px'; tip.style.top = (ev.clientY + 12) + 'px'; tip.style.display = 'block';
}

function renderFindings(list, items, empty, text) {
  const fresh = document.createDocumentFragment();
  if (!items.length) fresh.appendChild(el('li', empty, 'empty'));
  for (const item of items) fresh.appendChild(text(item));
  list.replaceChildren(fresh);
}

let lastFrameAt = 0;
let framesShown = 0;
function render(f) {
  lastFrameAt = Date.now();
  framesShown += 1;
  $('status').dataset.frames = String(framesShown);
  if (!$('scopes-recorded').dataset.first) $('scopes-recorded').dataset.first = String(f.summary.scopes_recorded);
  $('command').textContent = f.meta.command || '(this process)';
  $('pid').textContent = f.meta.pid;
  $('duration').textContent = fmtDuration(f.meta.duration_s);
  $('duration').dataset.v = String(f.meta.duration_s);
  $('scopes-recorded').textContent = fmtNumber(f.summary.scopes_recorded);
  $('scopes-recorded').dataset.v = String(f.summary.scopes_recorded);
  $('samples').textContent = f.summary.sampled ? fmtNumber(f.summary.cpu_samples) : 'off';
  $('heap').textContent = f.memory.tracked ? fmtBytes(f.memory.live_bytes) : 'not tracked';
  $('clients').textContent = f.server.live_clients;

  fillTable($('hot-body'), f.hot, (r) => [[r.name, undefined, 'name'], [fmtNumber(r.calls), r.calls], [fmtDuration(r.total_s), r.total_s],
    [fmtDuration(r.self_s), r.self_s], [fmtDuration(r.mean_s), r.mean_s], [fmtDuration(r.p95_s), r.p95_s]]);
  if (!f.hot.length) {
    const tr = el('tr');
    const td = el('td', 'no scope has closed yet', 'empty');
    td.colSpan = 6;
    tr.appendChild(td);
    $('hot-body').replaceChildren(tr);
  }

  fillTable($('tree-body'), f.tree, (r) => [['\u2502 '.repeat(Math.max(r.depth - 1, 0)) + r.name, undefined, 'name'],
    [fmtNumber(r.calls), r.calls], [fmtDuration(r.total_s), r.total_s], [fmtDuration(r.self_s), r.self_s]]);
  $('tree-note').textContent = f.tree_omitted ? f.tree_omitted + ' nodes not shown' : '';

  $('flame-window').textContent = 'last ' + fmtDuration(f.flame_window_s) + ', ' + fmtNumber(f.flame.v) + ' samples';
  drawFlame(f.flame);
  fillTable($('functions-body'), f.functions, (r) => [[r.name, undefined, 'name'], [fmtNumber(r.self), r.self],
    [fmtNumber(r.total), r.total], [r.self_share === null ? '–' : (100 * r.self_share).toFixed(1) + ' %', r.self_share]]);

  const memory = $('memory-charts');
  memory.replaceChildren();
  if (f.memory.t.length) {
    lineChart(chartBox(memory, 'Heap in use', fmtBytes(f.memory.heap[f.memory.heap.length - 1])), f.memory.t, [{values: f.memory.heap}], 'bytes');
    lineChart(chartBox(memory, 'Resident memory (RSS)', fmtBytes(f.memory.rss[f.memory.rss.length - 1])), f.memory.t, [{values: f.memory.rss, color: palette[1]}], 'bytes');
  } else {
    memory.appendChild(el('p', f.memory.tracked ? 'no memory timeline yet' : 'heap tracking is off (nnprof record tracks it; or link nnprof::memory)', 'empty'));
  }
  const system = $('system-charts');
  system.replaceChildren();
  if (!f.system.monitored) system.appendChild(el('p', 'the system monitor is off (nnprof record --system, or nnprof::SystemMonitor)', 'empty'));
  for (const track of f.system.tracks.slice(0, 12)) {
    const last = track.values.length ? track.values[track.values.length - 1] : null;
    lineChart(chartBox(system, track.name, fmtUnit(last, track.unit)), f.system.t, [{values: track.values}], track.unit);
  }
  const metrics = $('metric-charts');
  metrics.replaceChildren();
  if (!f.metrics.length) metrics.appendChild(el('p', 'the program records no metrics (nnprof::Metrics)', 'empty'));
  for (const m of f.metrics.slice(0, 12))
    lineChart(chartBox(metrics, m.name + ' (' + m.kind + ')', fmtUnit(m.last, m.unit)), m.t || [], [{values: m.v || []}], m.unit);

  renderFindings($('bottlenecks'), f.bottlenecks, 'no bottleneck found so far', (b) => {
    const li = el('li');
    li.appendChild(el('span', b.severity + ' ', 'sev-' + b.severity));
    li.appendChild(el('b', b.title + ': '));
    li.appendChild(document.createTextNode(b.description + ' ' + b.suggestion));
    return li;
  });
  renderFindings($('anomalies'), f.anomalies.slice(-50).reverse(), 'no anomaly (anomalies come from continuous runs: nnprof record --continuous)', (a) => {
    const li = el('li');
    li.appendChild(el('b', a.kind + ' in ' + a.metric + ': '));
    li.appendChild(document.createTextNode(a.description));
    return li;
  });
  renderFindings($('trends'), f.trends, 'no trend yet', (t) => el('li', t.metric + ': ' + (t.relative_slope_per_hour === null ? '–' :
    (100 * t.relative_slope_per_hour).toFixed(2) + ' % per hour') + (t.significant ? ' (significant)' : '')));
  $('status').textContent = 'updated ' + new Date(f.meta.sent_unix_ms).toLocaleTimeString();
  $('status').className = '';
}

function load() {
  fetch(withToken('/api/v1/live')).then((r) => {
    if (!r.ok) throw new Error('HTTP ' + r.status);
    return r.json();
  }).then(render).catch((e) => { $('status').textContent = 'could not load: ' + e.message; $('status').className = 'stale'; });
}

function follow() {
  const source = new EventSource(withToken('/events'));
  source.addEventListener('frame', (ev) => render(JSON.parse(ev.data)));
  source.onerror = () => { $('status').textContent = 'connection lost, retrying…'; $('status').className = 'stale'; };
}

$('flame').addEventListener('mousemove', flameHover);
$('flame').addEventListener('mouseleave', () => { $('flame-tip').style.display = 'none'; });
$('reload').addEventListener('click', load);
// The frame the server put into the page: shown before anything else loads.
const initial = $('initial-frame');
if (initial && initial.textContent) render(JSON.parse(initial.textContent)); else load();
if (document.body.dataset.live === '1' && window.EventSource) {
  follow();
  setInterval(() => { if (lastFrameAt && Date.now() - lastFrameAt > 5000) { $('status').className = 'stale'; } }, 1000);
}
)JS";

constexpr std::string_view kBody = R"HTML(
<header>
  <h1>nnprof live</h1>
  <span class="fact">program <b id="command">…</b></span>
  <span class="fact">pid <b id="pid">…</b></span>
  <span class="fact">running <b id="duration">…</b></span>
  <span class="fact">scopes closed <b id="scopes-recorded">…</b></span>
  <span class="fact">CPU samples <b id="samples">…</b></span>
  <span class="fact">heap <b id="heap">…</b></span>
  <span class="fact">pages open <b id="clients">…</b></span>
  <span class="fact" id="status">connecting…</span>
  <button id="reload" type="button">Reload</button>
</header>
<main>
  <section class="wide"><h2>Flame graph <small id="flame-window"></small></h2><canvas id="flame"></canvas></section>
  <section><h2>Hot paths <small>by total time</small></h2>
    <table id="hot"><thead><tr><th>scope</th><th>calls</th><th>total</th><th>self</th><th>mean</th><th>p95</th></tr></thead><tbody id="hot-body"></tbody></table></section>
  <section><h2>Hot functions <small id="functions-window">CPU samples of the last window</small></h2>
    <table id="functions"><thead><tr><th>function</th><th>self</th><th>total</th><th>self share</th></tr></thead><tbody id="functions-body"></tbody></table></section>
  <section><h2>Call tree <small id="tree-note"></small></h2>
    <table id="tree" class="tree"><thead><tr><th>scope</th><th>calls</th><th>total</th><th>self</th></tr></thead><tbody id="tree-body"></tbody></table></section>
  <section><h2>Bottlenecks</h2><ul id="bottlenecks" class="findings"></ul></section>
  <section><h2>Memory</h2><div id="memory-charts" class="charts"></div></section>
  <section><h2>System</h2><div id="system-charts" class="charts"></div></section>
  <section><h2>Metrics</h2><div id="metric-charts" class="charts"></div></section>
  <section><h2>Anomalies and trends</h2><ul id="anomalies" class="findings"></ul><ul id="trends" class="findings"></ul></section>
</main>
<div id="flame-tip"></div>
)HTML";

}  // namespace

std::string live_page_html(std::string_view nonce, bool real_time, std::string_view initial_frame) {
  // JSON in a data block: every '<' (only ever inside a JSON string) is written \u003c, the
  // same string to JSON, so that no text in it can close the element or open a comment.
  std::string data;
  data.reserve(initial_frame.size());
  for (const char c : initial_frame) {
    if (c == '<')
      data += "\\u003c";
    else
      data += c;
  }
  return fmt::format(
      "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
      "<meta name=\"viewport\" content=\"width=device-width,initial-scale=1\">"
      "<title>nnprof live</title><link rel=\"icon\" href=\"data:,\">"
      "<style nonce=\"{0}\">{1}</style></head>\n<body data-live=\"{2}\">{3}"
      "<script type=\"application/json\" id=\"initial-frame\">{5}</script>"
      "<script nonce=\"{0}\">{4}</script></body></html>\n",
      nonce, kStyle, real_time ? "1" : "0", kBody, kScript, data);
}

std::string live_page_policy(std::string_view nonce) {
  return fmt::format(
      "default-src 'none'; script-src 'nonce-{0}'; style-src 'nonce-{0}'; connect-src 'self'; img-src data:; "
      "base-uri 'none'; form-action 'none'; frame-ancestors 'none'",
      nonce);
}

}  // namespace nnprof::serve
