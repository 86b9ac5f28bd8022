import type { ThreadCpu } from '../cpu.js';
import type { RunResult } from '../driver.js';
import type { Workload } from '../flags.js';

/**
 * Shard scaling on paper (bench/README.md, "Shard scaling"): from runs of one workload at the
 * same offered load on 1, 2 and 4 shards, the CPU each message costs on each kind of thread,
 * and from that the throughput a node would reach with N shards on a host with a core per
 * thread.
 *
 * Per run (the busiest node: the one whose threads spent the most CPU per message), each
 * thread's CPU net of what it spends idle (ticks, timers: measured for 2 s before the run, a
 * per-second cost `f` in cores, not a per-message one):
 *   P  = Σ shard-thread CPU ÷ messages        shard work per message (each message is handled
 *                                             by one shard, plus a ring hop when it arrived on
 *                                             another)
 *   G  = "other" CPU ÷ messages               V8's platform pool (concurrent GC, compilers),
 *                                             libuv pool, piscina: helper threads
 *   Sm = metadata-worker CPU ÷ messages, Ss = supervisor CPU ÷ messages: node-wide threads,
 *                                             one each whatever the shard count (the serial part)
 *   serial share σ = (Sm + Ss) ÷ (P + G + Sm + Ss)
 *
 * Fit (least squares over the runs): P(N) = a + b·(1 − 1/N), G(N) = c + d·(1 − 1/N), neither
 * below the lowest measured value (no extrapolating a saving past what was seen). With
 * partitions spread evenly, a request lands on the shard that owns its partition with
 * probability 1/N and pays one ring crossing otherwise: (1 − 1/N) is the crossing share, b its
 * cost (the coherence term of the universal scalability law, bounded because a request crosses
 * at most once). Sm and Ss: the mean over the runs.
 *
 * Projection, one core per thread, helper pools sized to the shard count, partitions ≥ shards:
 *   X(N) = min( N·(1 − fP) ÷ P(N),  N ÷ G(N),  (1 − fm) ÷ Sm,  (1 − fs) ÷ Ss )   messages per second
 * the first term is the shards (fP: a shard's idle cores), the second the helpers, the last two
 * Amdahl's serial ceiling (fm, fs: the metadata worker's and the supervisor's idle cores).
 * Speed-up X(N) ÷ X(1).
 */
export interface ScalingThread {
  readonly name: string;
  readonly role: ThreadCpu['role'];
  /** CPU microseconds per message (= CPU seconds per million messages), net of idle when measured. */
  readonly usPerMessage: number;
  /** Gross: including the idle rate. */
  readonly grossUsPerMessage: number;
  /** Idle cores (null without a baseline). */
  readonly idleCores: number | null;
}

export interface ScalingPoint {
  readonly scenario: string;
  readonly shards: number;
  /** Offered load (msg/s, 0 = unpaced) and what the node carried. */
  readonly offered: number;
  readonly carried: number;
  readonly node: number;
  readonly threads: readonly ScalingThread[];
  /** P: shard CPU per message, summed over the shards (µs). */
  readonly shardUs: number;
  /** The busiest shard's CPU over the mean shard's (1 = even). */
  readonly shardImbalance: number;
  readonly otherUs: number;
  readonly metadataUs: number;
  readonly supervisorUs: number;
  readonly totalUs: number;
  /** σ = node-wide threads' CPU ÷ all CPU. */
  readonly serialShare: number;
  /** Idle cores per thread kind (a shard: the mean shard); 0 without a baseline. */
  readonly idle: { readonly shard: number; readonly metadata: number; readonly supervisor: number; readonly other: number };
  /** Whether the figures are net of an idle baseline. */
  readonly net: boolean;
}

export interface ScalingFit {
  /** P(N) = shardA + shardB·(1 − 1/N), µs per message. */
  readonly shardA: number;
  readonly shardB: number;
  /** G(N) = otherA + otherB·(1 − 1/N). */
  readonly otherA: number;
  readonly otherB: number;
  readonly metadataUs: number;
  readonly supervisorUs: number;
  /** Idle cores of one shard, the metadata worker, the supervisor (means over the runs). */
  readonly shardIdle: number;
  readonly metadataIdle: number;
  readonly supervisorIdle: number;
  /** The lowest measured P and G: the fitted curves are not taken below them. */
  readonly shardFloor: number;
  readonly otherFloor: number;
}

export type ScalingLimit = 'shards' | 'helpers' | 'metadata' | 'supervisor';

export interface ScalingProjection {
  readonly shards: number;
  readonly msgsPerSec: number;
  readonly limitedBy: ScalingLimit;
  /** X(N) ÷ X(1). */
  readonly speedup: number;
}

export interface ScalingReport {
  readonly scenarioIds: readonly string[];
  readonly points: readonly ScalingPoint[];
  readonly fit: ScalingFit | null;
  readonly projections: readonly ScalingProjection[];
  readonly formula: string;
}

export const SCALING_FORMULA =
  'X(N) = min(N·(1 − fP) / P(N), N / G(N), (1 − fm) / Sm, (1 − fs) / Ss), P(N) = a + b·(1 − 1/N), G(N) = c + d·(1 − 1/N); ' +
  'P shard CPU per message, G helper-thread CPU per message, Sm metadata worker, Ss supervisor, f idle cores (bench/README.md "Shard scaling")';

export const PROJECTED_SHARDS = [1, 2, 4, 8, 16] as const;

/** The scaling point of one run, or null when it carried nothing or named no threads. */
export function scalingPoint(scenario: string, shards: number, offered: number, run: RunResult): ScalingPoint | null {
  const produce = run.produce;
  if (produce === null || produce.messages === 0) return null;
  const byNode = new Map<number, ThreadCpu[]>();
  for (const t of produce.cpu.threads) {
    const list = byNode.get(t.node) ?? [];
    list.push(t);
    byNode.set(t.node, list);
  }
  let best: ScalingPoint | null = null;
  for (const [node, threads] of byNode) {
    const net = threads.every((t) => t.netSecondsPerMillion !== null);
    const us = (t: ThreadCpu): number => (net ? t.netSecondsPerMillion : t.secondsPerMillion) ?? 0;
    const sum = (role: ThreadCpu['role']): number => threads.filter((t) => t.role === role).reduce((n, t) => n + us(t), 0);
    const idle = (role: ThreadCpu['role']): number => {
      const list = threads.filter((t) => t.role === role);
      return list.length === 0 ? 0 : list.reduce((n, t) => n + (t.idleCores ?? 0), 0) / list.length;
    };
    const shardList = threads.filter((t) => t.role === 'shard');
    if (shardList.length === 0) continue;
    const shardUs = sum('shard');
    const mean = shardUs / shardList.length;
    const point: ScalingPoint = {
      scenario, shards, offered, carried: produce.msgsPerSec, node,
      threads: threads.map((t) => ({ name: t.name, role: t.role, usPerMessage: us(t), grossUsPerMessage: t.secondsPerMillion ?? 0, idleCores: t.idleCores })),
      idle: { shard: idle('shard'), metadata: idle('metadata'), supervisor: idle('supervisor'), other: idle('other') },
      net,
      shardUs,
      shardImbalance: mean > 0 ? Math.max(...shardList.map(us)) / mean : 1,
      otherUs: sum('other'),
      metadataUs: sum('metadata'),
      supervisorUs: sum('supervisor'),
      totalUs: threads.reduce((n, t) => n + us(t), 0),
      serialShare: 0,
    };
    const withShare = { ...point, serialShare: point.totalUs > 0 ? (point.metadataUs + point.supervisorUs) / point.totalUs : 0 };
    if (best === null || withShare.totalUs > best.totalUs) best = withShare;
  }
  return best;
}

/** Least squares y = a + b·x; one distinct x gives b = 0. */
export function fitLine(points: readonly { readonly x: number; readonly y: number }[]): { a: number; b: number } {
  const n = points.length;
  if (n === 0) return { a: 0, b: 0 };
  const mx = points.reduce((s, p) => s + p.x, 0) / n;
  const my = points.reduce((s, p) => s + p.y, 0) / n;
  const sxx = points.reduce((s, p) => s + (p.x - mx) ** 2, 0);
  if (sxx === 0) return { a: my, b: 0 };
  const b = points.reduce((s, p) => s + (p.x - mx) * (p.y - my), 0) / sxx;
  return { a: my - b * mx, b };
}

const crossing = (shards: number): number => 1 - 1 / shards;

export function fitScaling(points: readonly ScalingPoint[]): ScalingFit | null {
  if (points.length === 0) return null;
  const shard = fitLine(points.map((p) => ({ x: crossing(p.shards), y: p.shardUs })));
  const other = fitLine(points.map((p) => ({ x: crossing(p.shards), y: p.otherUs })));
  const mean = (f: (p: ScalingPoint) => number): number => points.reduce((s, p) => s + f(p), 0) / points.length;
  return {
    shardA: shard.a, shardB: shard.b, otherA: other.a, otherB: other.b, metadataUs: mean((p) => p.metadataUs), supervisorUs: mean((p) => p.supervisorUs),
    shardIdle: mean((p) => p.idle.shard), metadataIdle: mean((p) => p.idle.metadata), supervisorIdle: mean((p) => p.idle.supervisor),
    shardFloor: Math.min(...points.map((p) => p.shardUs)), otherFloor: Math.min(...points.map((p) => p.otherUs)),
  };
}

/** X(N) of the model, with the term that bounds it. */
export function projectThroughput(fit: ScalingFit, shards: number): { msgsPerSec: number; limitedBy: ScalingLimit } {
  const perSecond = (us: number): number => (us > 0 ? 1e6 / us : Number.POSITIVE_INFINITY);
  const free = (idle: number): number => Math.max(0, 1 - idle);
  const terms: [ScalingLimit, number][] = [
    ['shards', shards * free(fit.shardIdle) * perSecond(Math.max(fit.shardFloor, fit.shardA + fit.shardB * crossing(shards)))],
    ['helpers', shards * perSecond(Math.max(fit.otherFloor, fit.otherA + fit.otherB * crossing(shards)))],
    ['metadata', free(fit.metadataIdle) * perSecond(fit.metadataUs)],
    ['supervisor', free(fit.supervisorIdle) * perSecond(fit.supervisorUs)],
  ];
  let best = terms[0] as [ScalingLimit, number];
  for (const t of terms) if (t[1] < best[1]) best = t;
  return { msgsPerSec: best[1], limitedBy: best[0] };
}

/** One scenario of a scaling set: its workload and its Shoal run (null when it did not run). */
export interface ScalingEntry {
  readonly id: string;
  readonly workload: Workload;
  readonly run: RunResult | null;
}

/** The scaling report over scenarios of one workload that differ only in their shard count. */
export function scalingReport(entries: readonly ScalingEntry[]): ScalingReport {
  const scenarioIds = entries.map((e) => e.id);
  const points: ScalingPoint[] = [];
  for (const e of entries) {
    const point = e.run === null ? null : scalingPoint(e.id, e.workload.shards, e.workload.rate, e.run);
    if (point !== null) points.push(point);
  }
  const fit = fitScaling(points);
  const projections: ScalingProjection[] = [];
  if (fit !== null) {
    const one = projectThroughput(fit, 1).msgsPerSec;
    for (const n of PROJECTED_SHARDS) {
      const x = projectThroughput(fit, n);
      projections.push({ shards: n, msgsPerSec: x.msgsPerSec, limitedBy: x.limitedBy, speedup: one > 0 ? x.msgsPerSec / one : 0 });
    }
  }
  return { scenarioIds, points, fit, projections, formula: SCALING_FORMULA };
}
