import type { CopyBoundResult } from '../copy-bound.js';
import type { RunResult } from '../driver.js';
import type { Workload } from '../flags.js';
import type { MachineFacts } from '../machine.js';
import { SUITE, type Scenario, type SweepPlan } from '../plan.js';
import { type ScalingReport, scalingReport } from './scaling.js';

/**
 * The report: everything one invocation measured, as plain JSON (`--json`), and what the
 * terminal table and the HTML page are drawn from. Ratios and targets are computed here, from
 * numbers of the same run.
 */
export const REPORT_SCHEMA = 'shoal-bench-load/1';

export interface SkippedRun {
  readonly system: string;
  readonly path: string;
  readonly status: 'skipped';
  readonly reason: string;
}

export type ScenarioRun = RunResult | SkippedRun;

export interface ScenarioReport {
  readonly id: string;
  readonly title: string;
  readonly workload: Workload;
  readonly sweep: Scenario['sweep'];
  readonly runs: readonly ScenarioRun[];
}

export interface Comparison {
  readonly scenario: string;
  readonly metric: string;
  readonly unit: string;
  readonly shoal: number;
  readonly nats: number;
  /** shoal / nats. */
  readonly ratio: number;
  readonly better: 'higher' | 'lower';
}

export interface TargetCheck {
  readonly id: string;
  readonly description: string;
  /** The measured figure the rule applies to (a ratio, or milliseconds for p99). */
  readonly value: number | null;
  readonly rule: string;
  readonly met: boolean | null;
  /** Why it could not be evaluated, when `met` is null. */
  readonly reason: string | null;
  readonly inputs: string;
}

export interface BenchReport {
  readonly schema: typeof REPORT_SCHEMA;
  readonly startedAt: string;
  readonly finishedAt: string;
  readonly command: string;
  readonly argv: readonly string[];
  readonly machine: MachineFacts;
  readonly plan: 'suite' | 'custom' | 'sweep' | 'failover';
  readonly systems: Readonly<Record<string, Readonly<Record<string, string | number | boolean>> | { readonly unavailable: string }>>;
  readonly copyBound: CopyBoundResult | null;
  readonly scenarios: readonly ScenarioReport[];
  readonly sweeps: readonly SweepPlan[];
  readonly comparisons: readonly Comparison[];
  /** Shard scaling on paper (report/scaling.ts), when the plan has a scaling set. */
  readonly scaling: ScalingReport | null;
  readonly targets: readonly TargetCheck[];
  readonly exitCode: number;
  readonly notes: readonly string[];
}

export function isMeasured(run: ScenarioRun | undefined): run is RunResult {
  return run !== undefined && run.status !== 'skipped';
}

export function findRun(report: Pick<BenchReport, 'scenarios'>, scenario: string, system: string, path = 'lean'): RunResult | null {
  const s = report.scenarios.find((x) => x.id === scenario);
  const run = s?.runs.find((r) => r.system === system && r.path === path);
  return isMeasured(run) && run.status === 'ok' ? run : null;
}

function whyMissing(report: Pick<BenchReport, 'scenarios'>, scenario: string, system: string, path = 'lean'): string {
  const s = report.scenarios.find((x) => x.id === scenario);
  if (s === undefined) return `${scenario} did not run in this invocation`;
  const run = s.runs.find((r) => r.system === system && r.path === path);
  if (run === undefined) return `${system}/${path} did not run ${scenario}`;
  if (run.status === 'skipped') return `${system} not measured in ${scenario}: ${run.reason}`;
  return `${system}/${path} ${scenario} failed: ${run.error ?? 'unknown'}`;
}

/** Shoal / NATS per metric, for every scenario both ran (lean paths). */
export function comparisons(report: Pick<BenchReport, 'scenarios'>): Comparison[] {
  const out: Comparison[] = [];
  for (const s of report.scenarios) {
    const shoal = findRun(report, s.id, 'shoal');
    const nats = findRun(report, s.id, 'nats');
    if (shoal === null || nats === null) continue;
    const add = (metric: string, unit: string, a: number | null | undefined, b: number | null | undefined, better: 'higher' | 'lower'): void => {
      if (a === null || a === undefined || b === null || b === undefined || b === 0 || a === 0) return;
      out.push({ scenario: s.id, metric, unit, shoal: a, nats: b, ratio: a / b, better });
    };
    add('produce msgs/s', 'msg/s', shoal.produce?.msgsPerSec, nats.produce?.msgsPerSec, 'higher');
    add('produce MB/s', 'MB/s', shoal.produce?.mbPerSec, nats.produce?.mbPerSec, 'higher');
    add('produce p50', 'ms', shoal.produce?.latency.p50, nats.produce?.latency.p50, 'lower');
    add('produce p99', 'ms', shoal.produce?.latency.p99, nats.produce?.latency.p99, 'lower');
    add('produce p99.9', 'ms', shoal.produce?.latency.p999, nats.produce?.latency.p999, 'lower');
    add('consume msgs/s', 'msg/s', shoal.consume?.msgsPerSec, nats.consume?.msgsPerSec, 'higher');
    add('server CPU s / M msgs (produce)', 's', shoal.produce?.cpu.serverSecondsPerMillion, nats.produce?.cpu.serverSecondsPerMillion, 'lower');
    add('client CPU s / M msgs (produce)', 's', shoal.produce?.cpu.clientSecondsPerMillion, nats.produce?.cpu.clientSecondsPerMillion, 'lower');
  }
  return out;
}

/** The scaling report of the plan's scaling set (null when it has none). */
export function scalingOf(report: Pick<BenchReport, 'scenarios'>, ids: readonly string[]): ScalingReport | null {
  if (ids.length === 0) return null;
  return scalingReport(ids.flatMap((id) => {
    const s = report.scenarios.find((x) => x.id === id);
    return s === undefined ? [] : [{ id, workload: s.workload, run: findRun(report, id, 'shoal') }];
  }));
}

/** The targets of issue 13 (this 2-core machine, 3 replicas, 1 KiB messages, same run). */
export function targetChecks(report: Pick<BenchReport, 'scenarios' | 'copyBound' | 'scaling'>): TargetCheck[] {
  const checks: TargetCheck[] = [];
  const ratioCheck = (
    id: string, description: string, rule: string, threshold: number,
    a: { scenario: string; system: string; pick: (r: RunResult) => number | undefined },
    b: { scenario: string; system: string; pick: (r: RunResult) => number | undefined },
  ): void => {
    const ra = findRun(report, a.scenario, a.system);
    const rb = findRun(report, b.scenario, b.system);
    const inputs = `${a.system} ${a.scenario} ÷ ${b.system} ${b.scenario}`;
    if (ra === null || rb === null) {
      checks.push({ id, description, rule, value: null, met: null, inputs, reason: ra === null ? whyMissing(report, a.scenario, a.system) : whyMissing(report, b.scenario, b.system) });
      return;
    }
    const va = a.pick(ra);
    const vb = b.pick(rb);
    const value = va === undefined || vb === undefined || vb === 0 ? null : va / vb;
    checks.push({ id, description, rule, value, met: value === null ? null : value >= threshold, inputs, reason: value === null ? 'no data' : null });
  };
  const produceRate = (r: RunResult): number | undefined => r.produce?.msgsPerSec;
  {
    const id = 'copy-bound';
    const description = 'batch 1,000: ≥ 40% of the copy bound (loopback TCP ÷ 3)';
    const shoal = findRun(report, SUITE.batch1000, 'shoal');
    const bound = report.copyBound;
    if (shoal === null || shoal.produce === null || bound === null) {
      checks.push({ id, description, rule: '≥ 40%', value: null, met: null, inputs: `shoal ${SUITE.batch1000} MB/s ÷ copy bound`, reason: shoal === null ? whyMissing(report, SUITE.batch1000, 'shoal') : 'copy bound not measured' });
    } else {
      const value = shoal.produce.mbPerSec / bound.boundMBps;
      checks.push({ id, description, rule: '≥ 40%', value, met: value >= 0.4, inputs: `${shoal.produce.mbPerSec.toFixed(1)} MB/s ÷ ${bound.boundMBps.toFixed(1)} MB/s`, reason: null });
    }
  }
  ratioCheck('batch-1000-vs-nats', 'batch 1,000: Shoal ≥ 4× NATS (both batch 1,000, 8 in flight)', '≥ 4×', 4,
    { scenario: SUITE.batch1000, system: 'shoal', pick: produceRate }, { scenario: SUITE.batch1000, system: 'nats', pick: produceRate });
  ratioCheck('window-256-vs-nats', 'batch 1 with 256 in flight: Shoal ≥ 1.5× NATS', '≥ 1.5×', 1.5,
    { scenario: SUITE.window256, system: 'shoal', pick: produceRate }, { scenario: SUITE.window256, system: 'nats', pick: produceRate });
  {
    const shoal = findRun(report, SUITE.oneAtATime, 'shoal');
    const nats = findRun(report, SUITE.oneAtATime, 'nats');
    const id = 'one-at-a-time-p99';
    const description = 'one message at a time: Shoal p99 ≤ 0.8× NATS p99';
    const rule = 'Shoal p99 ÷ NATS p99 ≤ 0.8';
    const inputs = `p99 of shoal and nats ${SUITE.oneAtATime}`;
    if (shoal === null || nats === null || shoal.produce === null || nats.produce === null) {
      checks.push({ id, description, rule, value: null, met: null, inputs, reason: shoal === null ? whyMissing(report, SUITE.oneAtATime, 'shoal') : whyMissing(report, SUITE.oneAtATime, 'nats') });
    } else {
      const value = shoal.produce.latency.p99 / nats.produce.latency.p99;
      checks.push({ id, description, rule, value, met: value <= 0.8, inputs: `${inputs} (${shoal.produce.latency.p99.toFixed(3)} ms vs ${nats.produce.latency.p99.toFixed(3)} ms)`, reason: null });
    }
  }
  ratioCheck('consume-vs-nats', 'consume (1 KiB, no per-message ack): Shoal ≥ 3× NATS', '≥ 3×', 3,
    { scenario: SUITE.batch1000, system: 'shoal', pick: (r) => r.consume?.msgsPerSec }, { scenario: SUITE.batch1000, system: 'nats', pick: (r) => r.consume?.msgsPerSec });
  ratioCheck('shards-2-vs-1', 'single node, 8 partitions: 2 shards ≥ 1.5× 1 shard', '≥ 1.5×', 1.5,
    { scenario: SUITE.shards2, system: 'shoal', pick: produceRate }, { scenario: SUITE.shards1, system: 'shoal', pick: produceRate });
  {
    const id = 'projected-16-vs-1';
    const description = 'single node, projected 16 shards ≥ 12× 1 shard (shard-scaling model)';
    const projection = report.scaling?.projections.find((p) => p.shards === 16);
    const points = report.scaling?.points.length ?? 0;
    if (projection === undefined || points < 2) {
      checks.push({ id, description, rule: '≥ 12×', value: null, met: null, inputs: 'scaling-shards-1/2/4', reason: `the scaling runs gave ${points} usable point(s) (need per-thread CPU of at least 2 shard counts)` });
    } else {
      checks.push({ id, description, rule: '≥ 12×', value: projection.speedup, met: projection.speedup >= 12, inputs: `X(16) ÷ X(1) of the model over ${points} runs (limited by ${projection.limitedBy})`, reason: null });
    }
  }
  {
    const id = 'cpu-per-million';
    const description = 'batch 1,000: server CPU ≤ 8 s per million messages (3 nodes together)';
    const shoal = findRun(report, SUITE.batch1000, 'shoal');
    const value = shoal?.produce?.cpu.serverSecondsPerMillion ?? null;
    if (value === null) {
      checks.push({ id, description, rule: '≤ 8 s', value: null, met: null, inputs: `server CPU of shoal ${SUITE.batch1000}`, reason: shoal === null ? whyMissing(report, SUITE.batch1000, 'shoal') : 'server CPU not measured' });
    } else {
      checks.push({ id, description, rule: '≤ 8 s', value, met: value <= 8, inputs: `server CPU s ÷ M messages of shoal ${SUITE.batch1000}`, reason: null });
    }
  }
  return checks;
}
