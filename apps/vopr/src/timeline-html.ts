/**
 * One seed as a self-contained HTML page (`npm run vopr -- --seed S --html FILE`): the run's
 * timeline data inlined as JSON, rendered to SVG by an inline script; no stylesheet, font,
 * script or image is fetched, so the file opens offline in any browser.
 *
 *   header      seed, cluster size, result (the failure message when it failed), trace hash,
 *               fault profile, the marks the run reached
 *   phases      safety / degraded / liveness / final checks
 *   network     each partition: when, who was cut off, one-way or not
 *   replica i   metadata status band (normal, view change, recovering, down; the primary
 *               darker; the view written in), faults (kill, power loss, restart, caught up,
 *               pause, resume) and core marks as points (click: details),
 *               partition groups in a view change, commits per bucket (metadata / partition),
 *               client requests in and replies out per bucket
 *   clients     every client's answers per bucket (metadata, batch, offset, rejected, unknown)
 */
import type { TimelineData } from '@shoal/simulator';

export function renderTimeline(data: TimelineData): string {
  const ok = data.summary?.ok ?? true;
  const title = `VOPR seed ${data.seed} (${data.replicas} replicas): ${ok ? 'ok' : 'FAILED'}`;
  // `<` escaped so no string in the data can close the script element.
  const json = JSON.stringify(data).replace(/</g, '\\u003c');
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta http-equiv="Content-Security-Policy" content="default-src 'none'; style-src 'unsafe-inline'; script-src 'unsafe-inline'">
<title>${escapeHtml(title)}</title>
<style>${CSS}</style>
</head>
<body>
<header>
  <h1 id="title">${escapeHtml(title)}</h1>
  <div id="facts"></div>
  <pre id="failure" hidden></pre>
  <div id="marks"></div>
</header>
<div id="controls">
  <label>zoom <input id="zoom" type="range" min="1" max="30" value="1"></label>
  <label><input id="show-partition-marks" type="checkbox" checked> partition-plane marks</label>
  <span id="legend"></span>
</div>
<div id="scroller"><svg id="timeline" xmlns="http://www.w3.org/2000/svg"></svg></div>
<section id="details"><em>Click a point, a span or a bar for details.</em></section>
<script type="application/json" id="data">${json}</script>
<script>${SCRIPT}</script>
</body>
</html>
`;
}

function escapeHtml(s: string): string {
  return s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;');
}

const CSS = `
body { font: 13px/1.4 system-ui, sans-serif; margin: 0; color: #222; }
header { padding: 10px 16px; border-bottom: 1px solid #ddd; }
h1 { font-size: 18px; margin: 0 0 6px; }
h1.failed { color: #b00020; }
#facts span { margin-right: 14px; }
#failure { background: #fff0f0; border: 1px solid #f3b3b3; padding: 8px; white-space: pre-wrap; max-height: 12em; overflow: auto; }
#marks span { display: inline-block; margin: 2px 4px 2px 0; padding: 1px 6px; border-radius: 8px; background: #eef; font-size: 11px; }
#controls { padding: 6px 16px; border-bottom: 1px solid #eee; }
#controls label { margin-right: 16px; }
#legend span { margin-right: 10px; font-size: 11px; }
#legend i { display: inline-block; width: 10px; height: 10px; margin-right: 3px; vertical-align: -1px; }
#scroller { overflow-x: auto; }
svg text { font-size: 10px; fill: #333; }
svg .label { font-size: 11px; font-weight: 600; }
svg .clickable { cursor: pointer; }
svg .selected { stroke: #000; stroke-width: 2; }
#details { padding: 10px 16px; border-top: 1px solid #ddd; white-space: pre-wrap; font-family: ui-monospace, monospace; }
`;

/* The renderer (runs in the browser; plain ES2017, no modules). */
const SCRIPT = `
(function () {
  'use strict';
  var data = JSON.parse(document.getElementById('data').textContent);
  var NS = 'http://www.w3.org/2000/svg';
  var LEFT = 110, ROW = 18;
  var STATUS_COLORS = { normal: '#8bc34a', view_change: '#ff9800', recovering: '#64b5f6', down: '#bdbdbd' };
  var POINT_STYLE = {
    kill: { shape: 'x', color: '#d32f2f' }, 'power loss': { shape: 'x', color: '#6a1b9a' },
    restart: { shape: 'up', color: '#2e7d32' }, 'caught up': { shape: 'check', color: '#1565c0' },
    pause: { shape: 'pause', color: '#ef6c00' }, resume: { shape: 'up', color: '#ef6c00' }
  };
  var ANSWER_COLORS = { metadata: '#3f51b5', send: '#009688', offset: '#8d6e63', rejected: '#ffb300', unknown: '#e53935' };
  var svg = document.getElementById('timeline');
  var details = document.getElementById('details');

  function el(name, attrs, parent) {
    var e = document.createElementNS(NS, name);
    for (var k in attrs) e.setAttribute(k, attrs[k]);
    if (parent) parent.appendChild(e);
    return e;
  }
  function text(parent, x, y, s, cls) {
    var t = el('text', { x: x, y: y }, parent);
    if (cls) t.setAttribute('class', cls);
    t.textContent = s;
    return t;
  }
  function clickable(node, info) {
    node.setAttribute('class', (node.getAttribute('class') || '') + ' clickable');
    node.addEventListener('click', function () {
      var old = svg.querySelector('.selected');
      if (old) old.classList.remove('selected');
      node.classList.add('selected');
      details.textContent = info;
    });
    var title = el('title', {}, node);
    title.textContent = info;
  }

  // ---- header ----
  var s = data.summary;
  var facts = document.getElementById('facts');
  function fact(label, value) { var sp = document.createElement('span'); sp.textContent = label + ': ' + value; facts.appendChild(sp); }
  fact('ticks', data.ticks);
  if (s) {
    fact('trace hash', s.traceHash);
    fact('committed ops', s.committedOps);
    if (s.options && s.options.profile) fact('profile', s.options.profile);
    if (s.options && s.options.degraded) fact('degraded', s.options.degraded);
    if (!s.ok) {
      document.getElementById('title').classList.add('failed');
      var f = document.getElementById('failure');
      f.hidden = false;
      f.textContent = s.failure;
    }
    var marks = document.getElementById('marks');
    Object.keys(s.marks).sort().forEach(function (m) {
      var sp = document.createElement('span');
      sp.className = 'mark-chip';
      sp.textContent = m + ' \\u00d7' + s.marks[m];
      marks.appendChild(sp);
    });
  }
  var legend = document.getElementById('legend');
  function legendItem(color, label) { var sp = document.createElement('span'); sp.innerHTML = '<i style="background:' + color + '"></i>'; sp.appendChild(document.createTextNode(label)); legend.appendChild(sp); }
  legendItem(STATUS_COLORS.normal, 'normal'); legendItem('#33691e', 'primary'); legendItem(STATUS_COLORS.view_change, 'view change');
  legendItem(STATUS_COLORS.recovering, 'recovering'); legendItem(STATUS_COLORS.down, 'down'); legendItem('#7e57c2', 'mark');

  function drawPoint(parent, x, y, kind, info) {
    var style = POINT_STYLE[kind] || { shape: 'diamond', color: '#7e57c2' };
    var g = el('g', { 'class': 'point', 'data-kind': kind, transform: 'translate(' + x + ',' + y + ')' }, parent);
    if (style.shape === 'x') {
      el('path', { d: 'M-4,-4L4,4M-4,4L4,-4', stroke: style.color, 'stroke-width': 2.5 }, g);
    } else if (style.shape === 'up') {
      el('path', { d: 'M0,-5L5,4L-5,4Z', fill: style.color }, g);
    } else if (style.shape === 'pause') {
      el('path', { d: 'M-3,-4L-3,4M3,-4L3,4', stroke: style.color, 'stroke-width': 2.5 }, g);
    } else if (style.shape === 'check') {
      el('path', { d: 'M-4,0L-1,4L5,-4', stroke: style.color, 'stroke-width': 2, fill: 'none' }, g);
    } else {
      el('path', { d: 'M0,-4L4,0L0,4L-4,0Z', fill: style.color }, g);
    }
    el('rect', { x: -5, y: -6, width: 10, height: 12, fill: 'transparent' }, g);
    clickable(g, info);
    return g;
  }

  function bars(parent, series, y, height, color, scale, label, replica) {
    var max = 0;
    for (var i = 0; i < series.length; i++) max = Math.max(max, series[i] || 0);
    if (max === 0) return;
    for (var b = 0; b < series.length; b++) {
      var v = series[b] || 0;
      if (v === 0) continue;
      var h = Math.max(1, Math.round(v / max * height));
      var r = el('rect', { 'class': 'bar ' + label.replace(/ /g, '-'), x: LEFT + b * data.bucketTicks * scale, y: y + height - h,
        width: Math.max(1, data.bucketTicks * scale - 1), height: h, fill: color }, parent);
      clickable(r, label + (replica === null ? '' : ' at replica ' + replica) + ': ' + v + ' in ticks ' + b * data.bucketTicks + '..' + ((b + 1) * data.bucketTicks - 1));
    }
  }

  function render() {
    // px per tick: zoom 1 fits the whole run in the window
    var fit = Math.max(0.02, (Math.max(window.innerWidth, 600) - LEFT - 40) / Math.max(1, data.ticks));
    var scale = fit * Number(document.getElementById('zoom').value);
    var showPartitionMarks = document.getElementById('show-partition-marks').checked;
    while (svg.firstChild) svg.removeChild(svg.firstChild);
    var width = LEFT + Math.ceil(data.ticks * scale) + 20;
    var y = 4;
    // time axis
    var axis = el('g', { id: 'axis' }, svg);
    var step = Math.pow(10, Math.ceil(Math.log10(Math.max(1, 80 / scale))));
    if (step * scale > 400) step /= 2;
    for (var t = 0; t <= data.ticks; t += step) {
      el('line', { x1: LEFT + t * scale, y1: y + 12, x2: LEFT + t * scale, y2: y + 16, stroke: '#999' }, axis);
      text(axis, LEFT + t * scale + 2, y + 10, String(t));
    }
    text(axis, 4, y + 10, 'tick', 'label');
    y += 22;
    // phases
    var phases = el('g', { id: 'phases' }, svg);
    text(phases, 4, y + 12, 'phase', 'label');
    data.phases.forEach(function (p, i) {
      var end = i + 1 < data.phases.length ? data.phases[i + 1].tick : data.ticks;
      var r = el('rect', { 'class': 'phase', x: LEFT + p.tick * scale, y: y, width: Math.max(1, (end - p.tick) * scale), height: ROW - 2,
        fill: ['#e8f5e9', '#fff3e0', '#e3f2fd', '#f3e5f5', '#fce4ec'][i % 5], stroke: '#ccc' }, phases);
      clickable(r, 'phase ' + p.name + ': ticks ' + p.tick + '..' + end);
      if ((end - p.tick) * scale > p.name.length * 6) text(phases, LEFT + p.tick * scale + 3, y + 12, p.name);
    });
    y += ROW + 4;
    // network partitions
    var net = el('g', { id: 'network' }, svg);
    text(net, 4, y + 12, 'network', 'label');
    data.partitions.forEach(function (p) {
      var r = el('rect', { 'class': 'partition', x: LEFT + p.from * scale, y: y, width: Math.max(2, (p.to - p.from) * scale), height: ROW - 2,
        fill: p.oneWay ? '#ffe0b2' : '#ffccbc', stroke: '#e64a19' }, net);
      clickable(r, 'partition ' + (p.oneWay ? '(one-way) ' : '') + 'ticks ' + p.from + '..' + p.to + ' (' + (p.to - p.from) + ' ticks): cut off replicas ' + p.cut.join(', '));
      if ((p.to - p.from) * scale > 40) text(net, LEFT + p.from * scale + 3, y + 12, 'cut ' + p.cut.join(','));
    });
    y += ROW + 8;
    // replicas
    data.replicaSeries.forEach(function (series, i) {
      var lane = el('g', { 'class': 'replica-lane', 'data-replica': i }, svg);
      el('line', { x1: 0, y1: y - 3, x2: width, y2: y - 3, stroke: '#ddd' }, lane);
      text(lane, 4, y + 12, 'replica ' + i, 'label');
      series.spans.forEach(function (sp) {
        var color = sp.status === 'normal' && sp.primary ? '#33691e' : (STATUS_COLORS[sp.status] || '#999');
        var w = Math.max(1, (sp.to - sp.from + 1) * scale);
        var r = el('rect', { 'class': 'status-span', 'data-status': sp.status, x: LEFT + sp.from * scale, y: y, width: w, height: ROW - 2, fill: color }, lane);
        clickable(r, 'replica ' + i + ' metadata group: ' + sp.status + (sp.primary ? ' (primary)' : '') + (sp.view >= 0 ? ', view ' + sp.view : '') + ', ticks ' + sp.from + '..' + sp.to);
        if (sp.view >= 0 && w > 24) text(lane, LEFT + sp.from * scale + 2, y + 12, 'v' + sp.view).setAttribute('fill', '#fff');
      });
      y += ROW;
      text(lane, 4, y + 11, 'faults, marks');
      data.points.forEach(function (p) {
        if (p.replica !== i) return;
        if (!showPartitionMarks && /@partition$/.test(p.kind)) return;
        drawPoint(lane, LEFT + p.tick * scale, y + 7, p.kind, 'tick ' + p.tick + ', replica ' + i + ': ' + p.kind + (p.detail ? ' (' + p.detail + ')' : ''));
      });
      y += ROW;
      text(lane, 4, y + 11, 'groups in VC');
      var hosted = series.groups;
      series.groupsInViewChange.forEach(function (v, b) {
        if (!v) return;
        var of = hosted[b] || v;
        var r = el('rect', { 'class': 'vc-cell', x: LEFT + b * data.bucketTicks * scale, y: y + 2, width: Math.max(1, data.bucketTicks * scale - 1), height: ROW - 6,
          fill: '#ff9800', 'fill-opacity': Math.min(1, 0.2 + v / of) }, lane);
        clickable(r, 'replica ' + i + ': ' + v + ' of ' + of + ' partition groups in a view change, ticks ' + b * data.bucketTicks + '..' + ((b + 1) * data.bucketTicks - 1));
      });
      y += ROW;
      text(lane, 4, y + 11, 'commits');
      bars(lane, series.metadataCommits, y, ROW - 2, '#3f51b5', scale, 'metadata commits', i);
      y += ROW;
      bars(lane, series.partitionCommits, y, ROW - 2, '#009688', scale, 'partition commits', i);
      y += ROW;
      text(lane, 4, y + 11, 'client req/rep');
      bars(lane, series.requests, y, ROW - 2, '#9e9e9e', scale, 'client requests in', i);
      y += ROW;
      bars(lane, series.replies, y, ROW - 2, '#212121', scale, 'replies out', i);
      y += ROW + 10;
    });
    // clients
    var clients = el('g', { id: 'clients' }, svg);
    el('line', { x1: 0, y1: y - 3, x2: width, y2: y - 3, stroke: '#ddd' }, clients);
    data.clientSeries.forEach(function (c, k) {
      var row = el('g', { 'class': 'client-lane', 'data-client': k }, clients);
      text(row, 4, y + 11, 'client ' + k, 'label');
      c.answers.forEach(function (cell, b) {
        var kinds = Object.keys(cell);
        if (kinds.length === 0) return;
        var total = 0;
        kinds.forEach(function (kind) { total += cell[kind]; });
        var x = LEFT + b * data.bucketTicks * scale;
        var yy = y + ROW - 2;
        kinds.sort().forEach(function (kind) {
          var h = Math.max(1, Math.round(cell[kind] / Math.max(total, 8) * (ROW - 2)));
          yy -= h;
          el('rect', { 'class': 'answer', 'data-kind': kind, x: x, y: yy, width: Math.max(1, data.bucketTicks * scale - 1), height: h, fill: ANSWER_COLORS[kind] || '#999' }, row);
        });
        var hit = el('rect', { x: x, y: y, width: Math.max(1, data.bucketTicks * scale - 1), height: ROW - 2, fill: 'transparent' }, row);
        clickable(hit, 'client ' + k + ', ticks ' + b * data.bucketTicks + '..' + ((b + 1) * data.bucketTicks - 1) + ': '
          + kinds.map(function (kind) { return cell[kind] + ' ' + kind; }).join(', '));
      });
      y += ROW;
    });
    svg.setAttribute('width', width);
    svg.setAttribute('height', y + 10);
  }

  document.getElementById('zoom').addEventListener('input', render);
  document.getElementById('show-partition-marks').addEventListener('change', render);
  render();
  document.body.setAttribute('data-rendered', 'true');
})();
`;
