import { describe, expect, it } from 'vitest';
import type { PhaseResult, RunResult } from '../src/driver.js';
import { DEFAULT_WORKLOAD, type Workload } from '../src/flags.js';
import { Histogram, latencySummary } from '../src/histogram.js';
import type { MachineFacts } from '../src/machine.js';
import { SUITE } from '../src/plan.js';
import { chartSpecs, renderHtml } from '../src/report/html.js';
import type { ThreadCpu } from '../src/cpu.js';
import { type BenchReport, REPORT_SCHEMA, type ScenarioReport, comparisons, scalingOf, targetChecks } from '../src/report/model.js';
import { fitLine, projectThroughput } from '../src/report/scaling.js';
import { formatReport } from '../src/report/terminal.js';

/** A synthetic suite report (no cluster needed): every figure chosen so each target's verdict is known. */
function phase(msgsPerSec: number, latenciesMs: readonly number[], size = 1024): PhaseResult {
  const h = new Histogram();
  for (const ms of latenciesMs) h.record(ms * 1e6);
  return {
    messages: msgsPerSec * 5, bytes: msgsPerSec * 5 * size, seconds: 5, msgsPerSec, mbPerSec: (msgsPerSec * size) / 1e6,
    latency: latencySummary(h), histogram: h.toJSON(), timeline: [0, 1, 2, 3, 4, 5].map((t) => ({ t, msgsPerSec: msgsPerSec * (t === 0 ? 0.5 : 1) })),
    cpu: { wallSeconds: 5, serverSeconds: 4, clientSeconds: 1, serverSecondsPerMillion: 4 / (msgsPerSec * 5 / 1e6), clientSecondsPerMillion: 1 / (msgsPerSec * 5 / 1e6), serverCores: 0.8, clientCores: 0.2, threads: [] },
    requests: latenciesMs.length,
  };
}

function run(system: string, path: string, produce: number, latencyMs: number, consume: number): RunResult {
  const latencies = Array.from({ length: 200 }, (_, i) => latencyMs * (1 + i / 200));
  return {
    system, path, description: `${system} ${path}`, status: 'ok', error: null, produce: phase(produce, latencies), consume: phase(consume, [1, 2, 3]),
    warmupMessages: 10, exactlyOnce: { ok: true, sent: 100, acknowledged: 100, consumed: 100, lost: 0, duplicated: 0, misplaced: 0, phantom: 0, reordered: 0, retryDuplicates: 0, unacknowledgedPresent: 0, examples: [] },
  };
}

/**
 * A paced single-node run whose threads cost, per message: shards P(N) = 10 + 4·(1 − 1/N) µs in
 * total (split evenly), other 2 µs, metadata 0.05 µs, supervisor 0.01 µs.
 */
function scalingRun(shards: number): RunResult {
  const base = run('shoal', 'lean', 40_000, 10, 1);
  const produce = base.produce as PhaseResult;
  const shardUs = 10 + 4 * (1 - 1 / shards);
  const t = (name: string, role: ThreadCpu['role'], us: number): ThreadCpu => ({
    node: 0, name, role, links: [], seconds: (us * produce.messages) / 1e6, secondsPerMillion: us, idleCores: null, netSecondsPerMillion: null,
  });
  const threads = [
    t('supervisor', 'supervisor', 0.01), t('metadata', 'metadata', 0.05),
    ...Array.from({ length: shards }, (_, k) => t(`shard-${k}`, 'shard', shardUs / shards)), t('other', 'other', 2),
  ];
  return { ...base, produce: { ...produce, cpu: { ...produce.cpu, threads } } };
}

function scenario(id: string, workload: Partial<Workload>, runs: RunResult[], sweep: ScenarioReport['sweep'] = null): ScenarioReport {
  return { id, title: id, workload: { ...DEFAULT_WORKLOAD, ...workload }, sweep, runs };
}

const machine: MachineFacts = {
  cpuModel: 'Test CPU', cores: 2, memoryBytes: 24 * 2 ** 30, node: 'v20.20.2', platform: 'linux/x64', kernel: '6.1', gitCommit: 'a'.repeat(40),
  gitDirty: false, loadAverage: [0.5, 0.5, 0.5], hostname: 'test',
};

function syntheticReport(): BenchReport {
  const scenarios = [
    scenario(SUITE.batch1000, { batch: 1000 }, [run('shoal', 'lean', 200_000, 40, 400_000), run('nats', 'lean', 8_000, 600, 60_000)]),
    scenario(SUITE.window256, { batch: 1, inFlight: 256 }, [run('shoal', 'lean', 15_000, 12, 90_000), run('shoal', 'sdk', 9_000, 20, 80_000), run('nats', 'lean', 13_000, 15, 70_000), run('nats', 'jetstream-api', 9_000, 25, 70_000)]),
    scenario(SUITE.oneAtATime, { batch: 1, inFlight: 1 }, [run('shoal', 'lean', 1_500, 0.5, 20_000), run('nats', 'lean', 1_200, 0.6, 30_000)]),
    scenario(SUITE.shards1, { replicas: 1, shards: 1, partitions: 8 }, [run('shoal', 'lean', 100_000, 10, 1)], { key: 'shards', value: 1 }),
    scenario(SUITE.shards2, { replicas: 1, shards: 2, partitions: 8 }, [run('shoal', 'lean', 150_000, 10, 1)], { key: 'shards', value: 2 }),
    ...([[SUITE.scaling1, 1], [SUITE.scaling2, 2], [SUITE.scaling4, 4]] as const).map(([id, shards]) =>
      scenario(id, { replicas: 1, shards, partitions: 8, rate: 40_000 }, [scalingRun(shards)])),
  ];
  const scaling = scalingOf({ scenarios }, [SUITE.scaling1, SUITE.scaling2, SUITE.scaling4]);
  const copyBound = { loopbackMBps: 1500, boundMBps: 500, rounds: [1400, 1500, 1600], chunkBytes: 65536 };
  return {
    schema: REPORT_SCHEMA, startedAt: '2026-01-01T00:00:00.000Z', finishedAt: '2026-01-01T00:02:00.000Z', command: 'npm run bench -- --compare nats',
    argv: ['--compare', 'nats'], machine, plan: 'suite', systems: { 'nats-3': { nodes: 3 }, 'shoal-3x1': { replicas: 3 } }, copyBound, scenarios,
    sweeps: [{ key: 'shards', values: [1, 2], scenarioIds: [SUITE.shards1, SUITE.shards2] }],
    comparisons: comparisons({ scenarios }), scaling, targets: targetChecks({ scenarios, copyBound, scaling }), exitCode: 0, notes: [],
  };
}

describe('report', () => {
  it('targets: each verdict from same-run numbers', () => {
    const report = syntheticReport();
    const verdict = Object.fromEntries(report.targets.map((t) => [t.id, [t.met, Math.round((t.value ?? 0) * 1000) / 1000]]));
    expect(verdict).toEqual({
      'copy-bound': [true, 0.41], // 204.8 MB/s ÷ 500 MB/s
      'batch-1000-vs-nats': [true, 25], // 200,000 ÷ 8,000 (both batch 1,000)
      'window-256-vs-nats': [false, 1.154], // 15,000 ÷ 13,000 < 1.5
      'one-at-a-time-p99': [false, 0.833], // > 0.8
      'consume-vs-nats': [true, 6.667], // 400,000 ÷ 60,000
      'shards-2-vs-1': [true, 1.5],
      'projected-16-vs-1': [false, 11.636], // 16 ÷ (10 + 4·15/16) × 10
      'cpu-per-million': [true, 4], // 4 s ÷ 1 M messages
    });
  });

  it('a target without its inputs is "not measured" with the reason, not a verdict', () => {
    const report = syntheticReport();
    const scenarios = report.scenarios.map((s) => (s.id === SUITE.window256
      ? { ...s, runs: [{ system: 'shoal', path: 'lean', status: 'skipped' as const, reason: 'server not built' }, ...s.runs.filter((r) => r.system === 'nats')] }
      : s));
    const checks = targetChecks({ scenarios, copyBound: null, scaling: null });
    const window = checks.find((t) => t.id === 'window-256-vs-nats');
    expect(window).toMatchObject({ met: null, value: null });
    expect(window?.reason).toContain('server not built');
    expect(checks.find((t) => t.id === 'copy-bound')).toMatchObject({ met: null, reason: 'copy bound not measured' });
  });

  it('comparisons: Shoal / NATS per metric for scenarios both ran', () => {
    const report = syntheticReport();
    const produce = report.comparisons.filter((c) => c.metric === 'produce msgs/s');
    expect(produce.map((c) => c.scenario)).toEqual([SUITE.batch1000, SUITE.window256, SUITE.oneAtATime]);
    expect(produce[1]?.ratio).toBeCloseTo(15_000 / 13_000, 6);
    expect(report.comparisons.find((c) => c.metric === 'produce p99')?.better).toBe('lower');
  });

  it('JSON: every section present and serialisable, histograms re-loadable', () => {
    const report = syntheticReport();
    const json = JSON.parse(JSON.stringify(report)) as Record<string, unknown>;
    for (const key of ['schema', 'command', 'argv', 'machine', 'copyBound', 'scenarios', 'sweeps', 'comparisons', 'targets', 'exitCode', 'systems']) expect(json).toHaveProperty(key);
    expect(json['schema']).toBe('shoal-bench-load/1');
    const first = (json['scenarios'] as { runs: { produce: { histogram: { count: number; buckets: unknown[] }; timeline: unknown[]; latency: Record<string, number> } }[] }[])[0];
    const produce = first?.runs[0]?.produce;
    expect(produce?.histogram.count).toBe(200);
    expect(produce?.histogram.buckets.length).toBeGreaterThan(0);
    expect(Object.keys(produce?.latency ?? {})).toEqual(expect.arrayContaining(['p50', 'p90', 'p99', 'p999', 'max']));
    expect(produce?.timeline).toHaveLength(6);
  });

  it('HTML: self-contained, Chart.js inlined, one canvas per chart, the data embedded', () => {
    const report = syntheticReport();
    const html = renderHtml(report);
    expect(html.startsWith('<!doctype html>')).toBe(true);
    expect(html).not.toMatch(/<script[^>]+src=/);
    expect(html).not.toMatch(/<link[^>]+href=/);
    expect(html).toContain('Chart.js v4');
    const specs = chartSpecs(report);
    const kinds = specs.map((s) => s.kind);
    expect(kinds.filter((k) => k === 'timeline')).toHaveLength(8);
    expect(kinds.filter((k) => k === 'latency')).toHaveLength(8);
    expect(kinds).toContain('sweep');
    expect(kinds).toContain('ratios');
    for (const spec of specs) expect(html).toContain(`<canvas id="${spec.id}">`);
    const embedded = /<script type="application\/json" id="chart-data">([\s\S]*?)<\/script>/.exec(html)?.[1] ?? '';
    expect(JSON.parse(embedded)).toHaveLength(specs.length);
    const data = /<script type="application\/json" id="report-data">([\s\S]*?)<\/script>/.exec(html)?.[1] ?? '';
    expect((JSON.parse(data) as BenchReport).targets).toHaveLength(8);
    expect(html).toContain('not met');
    const sweep = specs.find((s) => s.kind === 'sweep');
    expect(sweep?.series[0]?.points).toEqual([{ x: 1, y: 100_000 }, { x: 2, y: 150_000 }]);
  });

  it('HTML escapes what it embeds', () => {
    const report = { ...syntheticReport(), command: 'npm run bench -- --json "</script><b>x"' };
    const html = renderHtml(report);
    expect(html).not.toContain('</script><b>x');
    expect(html).toContain('&lt;/script&gt;&lt;b&gt;x');
  });

  it('terminal: compact tables, ratios and met / NOT MET', () => {
    const text = formatReport(syntheticReport());
    expect(text).toContain('npm run bench -- --compare nats');
    expect(text).toContain('copy bound: loopback TCP 1,500 MB/s');
    expect(text).toMatch(/shoal\/lean\s+200,000/);
    expect(text).toContain('sweep shards:');
    expect(text).toContain('Shoal / NATS');
    expect(text).toContain('NOT MET');
    expect(text).toMatch(/batch 1,000: Shoal ≥ 4× NATS.*25\.00×\s+met/);
    expect(text).toMatch(/server CPU ≤ 8 s per million.*4\.0 s\s+met/);
    expect(text).toMatch(/shoal\/lean produce CPU µs per message by thread: n0 supervisor 0\.01, metadata 0\.05, shard-0 10\.00, other 2\.00/);
  });

  it('shard scaling: per-message CPU by thread kind, the fit and the projection', () => {
    const scaling = syntheticReport().scaling;
    expect(scaling?.points.map((p) => [p.shards, Math.round(p.shardUs * 100) / 100, Math.round(p.serialShare * 1e5) / 1e5])).toEqual([
      [1, 10, Math.round((0.06 / 12.06) * 1e5) / 1e5], [2, 12, Math.round((0.06 / 14.06) * 1e5) / 1e5], [4, 13, Math.round((0.06 / 15.06) * 1e5) / 1e5],
    ]);
    expect(scaling?.points.every((p) => Math.abs(p.shardImbalance - 1) < 1e-9)).toBe(true);
    const fit = scaling?.fit;
    expect(fit?.shardA).toBeCloseTo(10, 9);
    expect(fit?.shardB).toBeCloseTo(4, 9);
    expect(fit?.otherA).toBeCloseTo(2, 9);
    expect(fit?.otherB).toBeCloseTo(0, 9);
    const x = Object.fromEntries((scaling?.projections ?? []).map((p) => [p.shards, [Math.round(p.msgsPerSec), p.limitedBy]]));
    expect(x).toEqual({
      1: [100_000, 'shards'], 2: [166_667, 'shards'], 4: [307_692, 'shards'], 8: [592_593, 'shards'], 16: [1_163_636, 'shards'],
    });
    // The serial ceiling binds once the shards outrun it: Sm = 1 µs caps at 1,000,000 msg/s.
    const capped = projectThroughput({ ...(fit as NonNullable<typeof fit>), metadataUs: 1 }, 16);
    expect(capped).toEqual({ msgsPerSec: 1_000_000, limitedBy: 'metadata' });
    expect(fitLine([{ x: 0, y: 1 }, { x: 1, y: 3 }, { x: 2, y: 5 }])).toEqual({ a: 1, b: 2 });
    expect(fitLine([{ x: 0.5, y: 7 }])).toEqual({ a: 7, b: 0 });
    const text = formatReport(syntheticReport());
    expect(text).toContain('shard scaling');
    expect(text).toMatch(/16\s+1,163,636\s+11\.64×\s+shards/);
  });

  it('shard scaling net of idle CPU: per-message cost without the idle rate, capacity less the idle cores', () => {
    const withIdle = (shards: number): RunResult => {
      const r = scalingRun(shards);
      const produce = r.produce as PhaseResult;
      // Every thread idles at 0.1 core and pays 1 µs more per message gross than net.
      const threads = produce.cpu.threads.map((t) => ({ ...t, idleCores: 0.1, netSecondsPerMillion: t.secondsPerMillion, secondsPerMillion: (t.secondsPerMillion ?? 0) + 1 }));
      return { ...r, produce: { ...produce, cpu: { ...produce.cpu, threads } } };
    };
    const scenarios = ([[SUITE.scaling1, 1], [SUITE.scaling2, 2], [SUITE.scaling4, 4]] as const).map(([id, shards]) =>
      scenario(id, { replicas: 1, shards, partitions: 8, rate: 40_000 }, [withIdle(shards)]));
    const scaling = scalingOf({ scenarios }, [SUITE.scaling1, SUITE.scaling2, SUITE.scaling4]);
    expect(scaling?.points.every((p) => p.net)).toBe(true);
    expect(scaling?.points.map((p) => p.shardUs)).toEqual([10, 12, 13]);
    expect(scaling?.fit?.shardIdle).toBeCloseTo(0.1, 9);
    // X(1) = 0.9 / 10 µs; X(16) = 16 · 0.9 / 13.75 µs: the speed-up is unchanged, the capacity is 90 %.
    const p = Object.fromEntries((scaling?.projections ?? []).map((x) => [x.shards, Math.round(x.msgsPerSec)]));
    expect(p[1]).toBe(90_000);
    expect(p[16]).toBe(1_047_273);
  });
});
