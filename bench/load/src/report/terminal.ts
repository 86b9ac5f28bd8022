import type { RunResult } from '../driver.js';
import { describeWorkload } from '../plan.js';
import type { ThreadCpu } from '../cpu.js';
import { type BenchReport, type TargetCheck, findRun, isMeasured } from './model.js';
import type { ScalingReport } from './scaling.js';

/** The compact terminal report: one table per scenario, sweeps, Shoal / NATS ratios, targets. */
export function formatTable(header: readonly string[], rows: readonly (readonly string[])[]): string {
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] ?? '').length)));
  const line = (cells: readonly string[]): string =>
    cells.map((cell, i) => (i === 0 ? cell.padEnd(widths[i] ?? 0) : cell.padStart(widths[i] ?? 0))).join('  ').trimEnd();
  return [line(header), widths.map((w) => '-'.repeat(w)).join('  '), ...rows.map(line)].join('\n');
}

export function int(n: number | null | undefined): string {
  return n === null || n === undefined || !Number.isFinite(n) ? 'n/a' : Math.round(n).toLocaleString('en-US');
}

export function fixed(n: number | null | undefined, digits = 2): string {
  return n === null || n === undefined || !Number.isFinite(n) ? 'n/a' : n.toFixed(digits);
}

function ms(n: number | null | undefined, count: number | undefined): string {
  return count === 0 || count === undefined ? 'n/a' : fixed(n, 3);
}

const RUN_HEADER = ['system/path', 'msg/s', 'MB/s', 'p50 ms', 'p90 ms', 'p99 ms', 'p99.9 ms', 'max ms', 'consume msg/s', 'srv CPU s/M', 'cli CPU s/M', 'exactly-once'];

export function runRow(r: RunResult): string[] {
  const p = r.produce;
  const eo = r.exactlyOnce;
  const check = eo === null ? 'n/a' : eo.ok ? `ok ${int(eo.acknowledged)}` : `FAIL lost ${eo.lost} dup ${eo.duplicated}`;
  if (p === null) return [`${r.system}/${r.path}`, 'failed', '', '', '', '', '', '', '', '', '', check];
  const n = p.latency.count;
  return [
    `${r.system}/${r.path}`, int(p.msgsPerSec), fixed(p.mbPerSec, 1), ms(p.latency.p50, n), ms(p.latency.p90, n), ms(p.latency.p99, n),
    ms(p.latency.p999, n), ms(p.latency.max, n), int(r.consume?.msgsPerSec), fixed(p.cpu.serverSecondsPerMillion, 1),
    fixed(p.cpu.clientSecondsPerMillion, 1), check,
  ];
}

/** A target's measured figure in its unit: a share, seconds, or a ratio. */
export function targetValue(t: TargetCheck): string {
  if (t.value === null) return 'n/a';
  if (t.id === 'copy-bound') return `${(t.value * 100).toFixed(0)}%`;
  if (t.id === 'cpu-per-million') return `${fixed(t.value, 1)} s`;
  return `${fixed(t.value, 2)}×`;
}

export function formatReport(report: BenchReport): string {
  const out: string[] = [];
  const m = report.machine;
  out.push(`\n${report.command}`);
  out.push(`${m.cpuModel}, ${m.cores} cores, ${(m.memoryBytes / 2 ** 30).toFixed(0)} GiB, node ${m.node}, commit ${m.gitCommit?.slice(0, 12) ?? 'unknown'}${m.gitDirty === true ? ' (dirty)' : ''}`);
  if (report.copyBound !== null) {
    out.push(`copy bound: loopback TCP ${int(report.copyBound.loopbackMBps)} MB/s (64 KiB writes) ÷ 3 = ${int(report.copyBound.boundMBps)} MB/s`);
  }
  const unavailable = Object.entries(report.systems).filter((e): e is [string, { readonly unavailable: string }] => 'unavailable' in e[1]);
  for (const [key, entry] of unavailable) out.push(`${key}: not measured: ${entry.unavailable}`);
  for (const s of report.scenarios) {
    out.push(`\n${s.id}: ${describeWorkload(s.workload)}`);
    const rows: string[][] = [];
    const footnotes: string[] = [];
    for (const r of s.runs) {
      if (isMeasured(r)) {
        rows.push(runRow(r));
        const threads = r.produce?.cpu.threads ?? [];
        if (threads.length > 0) footnotes.push(`  ${r.system}/${r.path} produce CPU µs per message by thread: ${threadLine(threads)}`);
        if (r.status === 'failed' && r.error !== null) footnotes.push(`  ${r.system}/${r.path} failed: ${r.error}`);
      } else {
        rows.push([`${r.system}/${r.path}`, 'skipped']);
        if (!unavailable.some(([, e]) => e.unavailable === r.reason)) footnotes.push(`  ${r.system}/${r.path} skipped: ${r.reason}`);
      }
    }
    out.push(formatTable(RUN_HEADER, rows), ...footnotes);
  }
  for (const sweep of report.sweeps) {
    out.push(`\nsweep ${sweep.key}:`);
    const systems = [...new Set(report.scenarios.filter((s) => sweep.scenarioIds.includes(s.id)).flatMap((s) => s.runs.map((r) => r.system)))];
    const header = [sweep.key, ...systems.flatMap((sys) => [`${sys} msg/s`, `${sys} p99 ms`])];
    const rows = sweep.values.map((value, i) => {
      const id = sweep.scenarioIds[i] as string;
      return [String(value), ...systems.flatMap((sys) => {
        const r = findRun(report, id, sys);
        return [int(r?.produce?.msgsPerSec), r === null ? 'n/a' : ms(r.produce?.latency.p99, r.produce?.latency.count)];
      })];
    });
    out.push(formatTable(header, rows));
  }
  if (report.scaling !== null) out.push(formatScaling(report.scaling));
  if (report.comparisons.length > 0) {
    out.push('\nShoal / NATS (same run, same workload, lean paths):');
    out.push(formatTable(['scenario', 'metric', 'shoal', 'nats', 'ratio'], report.comparisons.map((c) => [
      c.scenario, `${c.metric} (${c.better} is better)`, c.unit === 'ms' || c.unit === 's' ? fixed(c.shoal, 3) : int(c.shoal),
      c.unit === 'ms' || c.unit === 's' ? fixed(c.nats, 3) : int(c.nats), `${fixed(c.ratio, 2)}×`,
    ])));
  }
  if (report.targets.length > 0) {
    out.push('\nIssue targets:');
    out.push(formatTable(['target', 'rule', 'measured', 'verdict'], report.targets.map((t) => [
      t.description, t.rule, targetValue(t),
      t.met === null ? 'not measured' : t.met ? 'met' : 'NOT MET',
    ])));
  }
  for (const note of report.notes) out.push(`note: ${note}`);
  return out.join('\n');
}

/** `n0 shard-0 12.31 (links 1,2), metadata 0.10, …; n1 …`: CPU µs per message (= s per M). */
export function threadLine(threads: readonly ThreadCpu[]): string {
  const nodes = [...new Set(threads.map((t) => t.node))];
  return nodes.map((node) => `n${node} ` + threads.filter((t) => t.node === node).map((t) =>
    `${t.name} ${fixed(t.secondsPerMillion, 2)}${t.links.length > 0 ? ` (links ${t.links.join(',')})` : ''}`).join(', ')).join('; ');
}

export function formatScaling(s: ScalingReport): string {
  const net = s.points.length > 0 && s.points.every((p) => p.net);
  const out: string[] = [`\nshard scaling (same offered load; CPU µs per message on the busiest node${net ? ', net of each thread\'s idle CPU' : ''}; bench/README.md "Shard scaling"):`];
  out.push(formatTable(
    ['scenario', 'shards', 'offered msg/s', 'carried msg/s', 'P shards', 'per shard', 'imbalance', 'G other', 'Sm metadata', 'Ss supervisor', 'total', 'serial share', 'idle cores shard/meta/sup'],
    s.points.map((p) => [
      p.scenario, String(p.shards), p.offered > 0 ? int(p.offered) : 'unpaced', int(p.carried), fixed(p.shardUs, 2),
      p.threads.filter((t) => t.role === 'shard').map((t) => fixed(t.usPerMessage, 2)).join(' / '), `${fixed(p.shardImbalance, 2)}×`,
      fixed(p.otherUs, 2), fixed(p.metadataUs, 3), fixed(p.supervisorUs, 3), fixed(p.totalUs, 2), `${fixed(p.serialShare * 100, 2)}%`,
      p.net ? `${fixed(p.idle.shard, 3)}/${fixed(p.idle.metadata, 3)}/${fixed(p.idle.supervisor, 3)}` : 'n/a',
    ]),
  ));
  if (s.fit === null) {
    out.push('  no run with per-thread CPU: no projection');
    return out.join('\n');
  }
  const f = s.fit;
  out.push(`  fit: P(N) = ${fixed(f.shardA, 2)} + ${fixed(f.shardB, 2)}·(1 − 1/N) µs (≥ ${fixed(f.shardFloor, 2)}), G(N) = ${fixed(f.otherA, 2)} + ${fixed(f.otherB, 2)}·(1 − 1/N) µs (≥ ${fixed(f.otherFloor, 2)}), ` +
    `Sm = ${fixed(f.metadataUs, 3)} µs, Ss = ${fixed(f.supervisorUs, 3)} µs; idle cores fP ${fixed(f.shardIdle, 3)}, fm ${fixed(f.metadataIdle, 3)}, fs ${fixed(f.supervisorIdle, 3)}`);
  out.push(`  model: ${s.formula}`);
  out.push(formatTable(['projected shards', 'msg/s', 'vs 1 shard', 'limited by'], s.projections.map((p) => [
    String(p.shards), int(p.msgsPerSec), `${fixed(p.speedup, 2)}×`, p.limitedBy,
  ])));
  return out.join('\n');
}
