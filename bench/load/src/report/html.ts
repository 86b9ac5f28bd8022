import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { Histogram } from '../histogram.js';
import { percentileCurve } from '../histogram.js';
import { describeWorkload } from '../plan.js';
import { type BenchReport, findRun, isMeasured } from './model.js';
import { fixed, int, targetValue, threadLine } from './terminal.js';

/**
 * The self-contained HTML report: Chart.js (MIT, the UMD build from node_modules) is inlined, the
 * chart data and the whole JSON report are embedded, so the file opens offline in any browser.
 * Charts: throughput over time and the latency distribution per scenario, one curve per sweep,
 * and the Shoal / NATS ratios.
 */
export interface ChartSeries {
  readonly label: string;
  readonly points: readonly { readonly x: number; readonly y: number }[];
}

export interface ChartSpec {
  readonly id: string;
  readonly kind: 'timeline' | 'latency' | 'sweep' | 'ratios';
  readonly title: string;
  readonly xLabel: string;
  readonly yLabel: string;
  readonly series: readonly ChartSeries[];
  /** Category labels (ratios chart). */
  readonly labels?: readonly string[];
  /** Logarithmic x axis (sweeps over a wide range). */
  readonly logX?: boolean;
}

/** x of a percentile on the latency-distribution axis: 1 / (1 − p), so 90 % → 10, 99 % → 100. */
export function percentileX(p: number): number {
  return p >= 100 ? 1e7 : 1 / (1 - p / 100);
}

export function chartSpecs(report: BenchReport): ChartSpec[] {
  const charts: ChartSpec[] = [];
  for (const s of report.scenarios) {
    const measured = s.runs.filter(isMeasured).filter((r) => r.produce !== null);
    if (measured.length === 0) continue;
    charts.push({
      id: `timeline-${s.id}`, kind: 'timeline', title: `${s.id}: produce throughput over time`, xLabel: 'seconds (≤ 0: warmup)', yLabel: 'messages / s',
      series: measured.map((r) => ({ label: `${r.system}/${r.path}`, points: (r.produce?.timeline ?? []).map((p) => ({ x: p.t, y: p.msgsPerSec })) })),
    });
    charts.push({
      id: `latency-${s.id}`, kind: 'latency', title: `${s.id}: produce latency distribution (per request)`, xLabel: 'percentile', yLabel: 'ms',
      series: measured.map((r) => {
        const curve = r.produce === null ? [] : percentileCurve(Histogram.fromJSON(r.produce.histogram));
        const last = curve.length >= 2 ? curve[curve.length - 2] : undefined;
        return {
          label: `${r.system}/${r.path}`,
          // The maximum is drawn one doubling to the right of the last finite percentile.
          points: curve.map((c) => ({ x: c.percentile >= 100 ? percentileX(last?.percentile ?? 0) * 2 : percentileX(c.percentile), y: c.valueMs })),
        };
      }),
    });
  }
  for (const sweep of report.sweeps) {
    const systems = [...new Set(report.scenarios.filter((s) => sweep.scenarioIds.includes(s.id)).flatMap((s) => s.runs.map((r) => r.system)))];
    const spread = Math.max(...sweep.values) / Math.max(1e-9, Math.min(...sweep.values));
    charts.push({
      id: `sweep-${sweep.key}`, logX: spread >= 10, kind: 'sweep', title: `sweep ${sweep.key}: produce throughput`, xLabel: sweep.key, yLabel: 'messages / s',
      series: systems.map((sys) => ({
        label: sys,
        points: sweep.values.flatMap((value, i) => {
          const r = findRun(report, sweep.scenarioIds[i] as string, sys);
          return r?.produce === null || r === null ? [] : [{ x: value, y: r.produce.msgsPerSec }];
        }),
      })),
    });
  }
  if (report.comparisons.length > 0) {
    const labels = report.comparisons.map((c) => `${c.scenario}: ${c.metric}${c.better === 'lower' ? ' (lower is better)' : ''}`);
    charts.push({
      id: 'ratios', kind: 'ratios', title: 'Shoal / NATS, same run and workload (1 = parity)', xLabel: 'ratio', yLabel: '', labels,
      series: [{ label: 'Shoal / NATS', points: report.comparisons.map((c, i) => ({ x: i, y: c.ratio })) }],
    });
  }
  // A chart without a single point (every run skipped) is left out.
  return charts.filter((c) => c.series.some((series) => series.points.length > 0));
}

function escapeHtml(text: string): string {
  return text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;');
}

/** JSON safe inside a <script> element. */
function scriptJson(value: unknown): string {
  return JSON.stringify(value).replace(/</g, '\\u003c').replace(/\u2028/g, '\\u2028').replace(/\u2029/g, '\\u2029');
}

let chartJsSource: string | null = null;

/** The Chart.js UMD bundle from node_modules (inlined so the report needs no network). */
export function chartJs(): string {
  if (chartJsSource === null) {
    const require = createRequire(import.meta.url);
    const dist = dirname(require.resolve('chart.js'));
    chartJsSource = readFileSync(join(dist, 'chart.umd.min.js'), 'utf8');
  }
  return chartJsSource;
}

function table(header: readonly string[], rows: readonly (readonly string[])[]): string {
  return `<table><thead><tr>${header.map((h) => `<th>${escapeHtml(h)}</th>`).join('')}</tr></thead><tbody>${
    rows.map((r) => `<tr>${r.map((c, i) => `<td${i === 0 ? '' : ' class="num"'}>${c}</td>`).join('')}</tr>`).join('')
  }</tbody></table>`;
}

function runsTable(report: BenchReport, scenarioId: string): string {
  const s = report.scenarios.find((x) => x.id === scenarioId);
  if (s === undefined) return '';
  const rows = s.runs.map((r) => {
    if (!isMeasured(r)) return [`${r.system}/${r.path}`, '<span class="na">skipped</span>', '', '', '', '', '', '', '', '', `<span class="na">${escapeHtml(r.reason.slice(0, 120))}</span>`];
    const p = r.produce;
    const eo = r.exactlyOnce;
    const check = eo === null ? 'n/a' : eo.ok ? `<span class="ok">ok</span> (${int(eo.acknowledged)})` : `<span class="bad">FAILED</span> lost ${eo.lost}, duplicated ${eo.duplicated}, misplaced ${eo.misplaced}, phantom ${eo.phantom}`;
    const lat = (v: number | undefined): string => (p === null || p.latency.count === 0 ? 'n/a' : fixed(v, 3));
    const status = r.status === 'failed' ? `<br><span class="bad">${escapeHtml(r.error ?? '')}</span>` : '';
    return [
      `${r.system}/${r.path}${status}<div class="desc">${escapeHtml(r.description)}</div>`, int(p?.msgsPerSec), fixed(p?.mbPerSec, 1), lat(p?.latency.p50), lat(p?.latency.p90),
      lat(p?.latency.p99), lat(p?.latency.p999), lat(p?.latency.max), `${int(r.consume?.msgsPerSec)}`,
      `${fixed(p?.cpu.serverSecondsPerMillion, 1)} / ${fixed(p?.cpu.clientSecondsPerMillion, 1)}`, check,
    ];
  });
  const threads = s.runs.filter(isMeasured).filter((r) => (r.produce?.cpu.threads.length ?? 0) > 0)
    .map((r) => `<p class="desc">${escapeHtml(`${r.system}/${r.path}`)} produce CPU µs per message by thread: ${escapeHtml(threadLine(r.produce?.cpu.threads ?? []))}</p>`);
  return table(['system/path', 'msg/s', 'MB/s', 'p50 ms', 'p90 ms', 'p99 ms', 'p99.9 ms', 'max ms', 'consume msg/s', 'CPU s/M msgs server / client', 'exactly-once'], rows) + threads.join('');
}

const STYLE = `
body { font: 14px/1.45 system-ui, sans-serif; margin: 2rem auto; max-width: 1200px; padding: 0 1rem; color: #1d2330; }
h1 { font-size: 1.6rem; } h2 { margin-top: 2.2rem; border-bottom: 1px solid #ccd; } h3 { margin-top: 1.6rem; }
table { border-collapse: collapse; margin: .6rem 0; font-size: 13px; } th, td { padding: .25rem .55rem; border-bottom: 1px solid #e3e6ee; vertical-align: top; }
th { text-align: left; background: #f3f5fa; } td.num { text-align: right; font-variant-numeric: tabular-nums; }
.ok { color: #187a3a; font-weight: 600; } .bad { color: #b3261e; font-weight: 600; } .na { color: #888; }
.desc { color: #667; font-size: 12px; max-width: 28rem; } code { background: #f3f5fa; padding: 0 .25rem; }
.charts { display: grid; grid-template-columns: 1fr 1fr; gap: 1rem; } .chart { height: 320px; position: relative; }
.wide { grid-column: 1 / span 2; height: 420px; }
`;

const DRAW = `
const data = JSON.parse(document.getElementById('chart-data').textContent);
const colors = ['#2f6fdb', '#e0672b', '#1f9d55', '#9b4dca', '#c2185b', '#00838f', '#6d4c41'];
const pctLabel = (x) => { const p = 100 * (1 - 1 / x); return (Math.round(p * 1000) / 1000) + '%'; };
for (const spec of data) {
  const canvas = document.getElementById(spec.id);
  if (!canvas) continue;
  if (spec.kind === 'ratios') {
    new Chart(canvas, { type: 'bar', data: { labels: spec.labels, datasets: [{ label: spec.series[0].label, data: spec.series[0].points.map((p) => p.y),
      backgroundColor: spec.series[0].points.map((p, i) => (spec.labels[i].includes('lower is better') ? (p.y <= 1 ? '#1f9d55' : '#e0672b') : (p.y >= 1 ? '#1f9d55' : '#e0672b'))) }] },
      options: { indexAxis: 'y', maintainAspectRatio: false, plugins: { title: { display: true, text: spec.title }, legend: { display: false } },
        scales: { x: { type: 'logarithmic', title: { display: true, text: 'Shoal / NATS (log scale)' } } } } });
    continue;
  }
  const datasets = spec.series.map((s, i) => ({ label: s.label, data: s.points, borderColor: colors[i % colors.length], backgroundColor: colors[i % colors.length], showLine: true, pointRadius: 2, tension: 0 }));
  const x = spec.kind === 'latency'
    ? { type: 'logarithmic', title: { display: true, text: spec.xLabel }, ticks: { callback: (v) => ([2, 10, 100, 1000, 10000, 100000].includes(v) ? pctLabel(v) : '') } }
    : { type: spec.logX ? 'logarithmic' : 'linear', title: { display: true, text: spec.xLabel } };
  const y = { type: spec.kind === 'latency' ? 'logarithmic' : 'linear', beginAtZero: spec.kind !== 'latency', title: { display: true, text: spec.yLabel } };
  new Chart(canvas, { type: 'scatter', data: { datasets }, options: { maintainAspectRatio: false, animation: false,
    plugins: { title: { display: true, text: spec.title }, tooltip: { callbacks: { label: (c) => c.dataset.label + ': ' + (spec.kind === 'latency' ? pctLabel(c.parsed.x) + ' → ' + c.parsed.y.toFixed(3) + ' ms' : c.parsed.x + ' → ' + Math.round(c.parsed.y).toLocaleString()) } } },
    scales: { x, y } } });
}
`;

export function renderHtml(report: BenchReport): string {
  const charts = chartSpecs(report);
  const canvas = (id: string, wide = false): string => (charts.some((c) => c.id === id) ? `<div class="chart${wide ? ' wide' : ''}"><canvas id="${id}"></canvas></div>` : '');
  const m = report.machine;
  const parts: string[] = [];
  parts.push(`<h1>Shoal load benchmark</h1>`);
  parts.push(`<p><code>${escapeHtml(report.command)}</code><br>${escapeHtml(report.startedAt)} → ${escapeHtml(report.finishedAt)}; exit code ${report.exitCode}</p>`);
  parts.push(table(['machine', ''], [
    ['CPU', escapeHtml(`${m.cpuModel}, ${m.cores} cores`)], ['memory', `${(m.memoryBytes / 2 ** 30).toFixed(1)} GiB`], ['node', escapeHtml(m.node)],
    ['kernel', escapeHtml(`${m.platform} ${m.kernel}`)], ['commit', escapeHtml(`${m.gitCommit ?? 'unknown'}${m.gitDirty === true ? ' (uncommitted changes)' : ''}`)],
    ['load average at start', m.loadAverage.join(' ')],
  ]));
  if (report.copyBound !== null) {
    parts.push(`<p>Copy bound: loopback TCP between two processes, 64 KiB writes: <b>${int(report.copyBound.loopbackMBps)} MB/s</b> (rounds: ${report.copyBound.rounds.map((r) => int(r)).join(', ')}); ÷ 3 for client → primary → backup → backup = <b>${int(report.copyBound.boundMBps)} MB/s</b>.</p>`);
  }
  for (const [key, facts] of Object.entries(report.systems)) {
    if ('unavailable' in facts) parts.push(`<p class="bad">${escapeHtml(key)} not measured: ${escapeHtml(String(facts.unavailable))}</p>`);
  }
  const unavailableReasons = new Set(Object.values(report.systems).flatMap((f) => ('unavailable' in f ? [String(f.unavailable)] : [])));
  if (report.targets.length > 0) {
    parts.push('<h2>Issue targets</h2>');
    parts.push(table(['target', 'rule', 'measured', 'verdict', 'inputs'], report.targets.map((t) => [
      escapeHtml(t.description), escapeHtml(t.rule), escapeHtml(targetValue(t)),
      t.met === null ? `<span class="na">not measured${[...unavailableReasons].some((r) => (t.reason ?? '').endsWith(r)) ? ' (see above)' : `: ${escapeHtml(t.reason ?? '')}`}</span>` : t.met ? '<span class="ok">met</span>' : '<span class="bad">not met</span>',
      escapeHtml(t.inputs),
    ])));
  }
  if (report.comparisons.length > 0) {
    parts.push('<h2>Shoal / NATS JetStream, side by side</h2>');
    parts.push(`<div class="charts">${canvas('ratios', true)}</div>`);
    parts.push(table(['scenario', 'metric', 'Shoal', 'NATS', 'Shoal / NATS'], report.comparisons.map((c) => [
      c.scenario, `${escapeHtml(c.metric)} (${c.better} is better)`, c.unit === 'ms' || c.unit === 's' ? fixed(c.shoal, 3) : int(c.shoal),
      c.unit === 'ms' || c.unit === 's' ? fixed(c.nats, 3) : int(c.nats), `${fixed(c.ratio, 2)}×`,
    ])));
  }
  if (report.scaling !== null) {
    const s = report.scaling;
    parts.push('<h2>Shard scaling (on paper)</h2>');
    parts.push(`<p>Same offered load on each shard count; CPU microseconds per message on the busiest node, by thread kind. Model: <code>${escapeHtml(s.formula)}</code></p>`);
    parts.push(table(['scenario', 'shards', 'offered msg/s', 'carried msg/s', 'P shards µs', 'per shard µs', 'imbalance', 'G other µs', 'Sm metadata µs', 'Ss supervisor µs', 'serial share'], s.points.map((p) => [
      escapeHtml(p.scenario), String(p.shards), p.offered > 0 ? int(p.offered) : 'unpaced', int(p.carried), fixed(p.shardUs, 2),
      p.threads.filter((t) => t.role === 'shard').map((t) => fixed(t.usPerMessage, 2)).join(' / '), `${fixed(p.shardImbalance, 2)}×`,
      fixed(p.otherUs, 2), fixed(p.metadataUs, 3), fixed(p.supervisorUs, 3), `${fixed(p.serialShare * 100, 2)}%`,
    ])));
    if (s.fit !== null) {
      const f = s.fit;
      parts.push(`<p>Fit: P(N) = ${fixed(f.shardA, 2)} + ${fixed(f.shardB, 2)}·(1 − 1/N) µs (≥ ${fixed(f.shardFloor, 2)}); G(N) = ${fixed(f.otherA, 2)} + ${fixed(f.otherB, 2)}·(1 − 1/N) µs (≥ ${fixed(f.otherFloor, 2)}); Sm = ${fixed(f.metadataUs, 3)} µs; Ss = ${fixed(f.supervisorUs, 3)} µs; idle cores fP ${fixed(f.shardIdle, 3)}, fm ${fixed(f.metadataIdle, 3)}, fs ${fixed(f.supervisorIdle, 3)}.</p>`);
      parts.push(table(['projected shards', 'msg/s', 'vs 1 shard', 'limited by'], s.projections.map((p) => [String(p.shards), int(p.msgsPerSec), `${fixed(p.speedup, 2)}×`, p.limitedBy])));
    }
  }
  for (const sweep of report.sweeps) {
    parts.push(`<h2>Sweep: ${escapeHtml(sweep.key)}</h2>`);
    parts.push(`<div class="charts">${canvas(`sweep-${sweep.key}`, true)}</div>`);
    const systems = [...new Set(report.scenarios.filter((s) => sweep.scenarioIds.includes(s.id)).flatMap((s) => s.runs.map((r) => r.system)))];
    parts.push(table([sweep.key, ...systems.flatMap((s) => [`${s} msg/s`, `${s} MB/s`, `${s} p99 ms`])], sweep.values.map((v, i) => [String(v), ...systems.flatMap((sys) => {
      const r = findRun(report, sweep.scenarioIds[i] as string, sys);
      return [int(r?.produce?.msgsPerSec), fixed(r?.produce?.mbPerSec, 1), r?.produce?.latency.count ? fixed(r.produce.latency.p99, 3) : 'n/a'];
    })])));
  }
  parts.push('<h2>Scenarios</h2>');
  for (const s of report.scenarios) {
    parts.push(`<h3>${escapeHtml(s.id)}: ${escapeHtml(s.title)}</h3><p>${escapeHtml(describeWorkload(s.workload))}</p>`);
    parts.push(runsTable(report, s.id));
    parts.push(`<div class="charts">${canvas(`timeline-${s.id}`)}${canvas(`latency-${s.id}`)}</div>`);
  }
  parts.push('<h2>Systems</h2>');
  parts.push(table(['system', 'facts'], Object.entries(report.systems).map(([k, v]) => [escapeHtml(k), escapeHtml(JSON.stringify(v))])));
  for (const note of report.notes) parts.push(`<p class="na">note: ${escapeHtml(note)}</p>`);
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>Shoal load benchmark ${escapeHtml(report.startedAt)}</title>
<style>${STYLE}</style>
<script>${chartJs()}</script>
</head><body>
${parts.join('\n')}
<script type="application/json" id="chart-data">${scriptJson(charts)}</script>
<script type="application/json" id="report-data">${scriptJson(report)}</script>
<script>${DRAW}</script>
</body></html>
`;
}
