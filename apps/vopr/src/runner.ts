/**
 * Many seeds on worker threads: a shared queue of seeds (each worker asks for the next one, so a
 * slow seed never holds a whole stripe back), a progress line every `progressSeconds`, an
 * append-only results file (one JSON line per seed) that `--resume` reads back to skip what is
 * done, and a summary: pass/fail, wall time, time per 1,000 seeds, and how many seeds reached
 * each coverage mark.
 *
 *   main ──"run seed S"──▶ worker 1..W ──result──▶ main: results file, tally, progress
 *        ◀──"ready"───────┘
 */
import { appendFileSync, existsSync, readFileSync } from 'node:fs';
import { performance } from 'node:perf_hooks';
import { Worker } from 'node:worker_threads';
import { EXPECTED_MARKS, MarkTally, Simulation, optionsForSeed, type SimulationResult } from '@shoal/simulator';

/** Cluster size of a seed when not forced: 1 and 2 now and then, mostly 3 and 5. */
export function replicasForSeed(seed: number): number {
  const r = seed % 10;
  if (r === 0) return 1;
  if (r === 1) return 2;
  return r < 6 ? 3 : 5;
}

/** A seed's cluster size: forced by a list (seed mod its length picks), or from the seed. */
export function clusterSize(seed: number, replicas: readonly number[] | null): number {
  if (replicas === null || replicas.length === 0) return replicasForSeed(seed);
  return replicas[seed % replicas.length] as number;
}

export function runSeed(seed: number, replicas: number): SimulationResult {
  return new Simulation(optionsForSeed(seed, replicas)).run();
}

/** One line of the results file. */
export interface SeedRecord {
  readonly seed: number;
  readonly replicas: number;
  readonly ok: boolean;
  readonly failure: string | null;
  readonly ticks: number;
  readonly committedOps: number;
  readonly traceHash: string;
  readonly ms: number;
  readonly marks: Record<string, number>;
}

export interface ManyOptions {
  readonly seeds: number;
  readonly seedStart: number;
  readonly replicas: readonly number[] | null;
  readonly workers: number;
  readonly out: string | null;
  readonly resume: boolean;
  readonly progressSeconds: number;
  readonly verbose: boolean;
  readonly requireMarks: boolean;
  readonly log: (line: string) => void;
}

export interface ManySummary {
  readonly passed: number;
  readonly failed: SeedRecord[];
  readonly seconds: number;
  readonly tally: MarkTally;
  /** Seeds skipped because the results file had them. */
  readonly resumed: number;
}

type ToWorker = { readonly kind: 'run'; readonly seed: number; readonly replicas: number } | { readonly kind: 'stop' };
type FromWorker = { readonly kind: 'ready' } | { readonly kind: 'result'; readonly record: SeedRecord };

export function describe(r: { seed: number; replicas: number; ok: boolean; ticks: number; committedOps: number; traceHash: string }): string {
  return `seed ${r.seed} (replicas ${r.replicas}): ${r.ok ? 'ok' : 'FAILED'} ticks=${r.ticks} committed_ops=${r.committedOps} trace=${r.traceHash}`;
}

export function replayCommand(r: { seed: number; replicas: number }): string {
  return `npm run vopr -- --seed ${r.seed} --replicas ${r.replicas}`;
}

/** Results already in the file, by seed (the last line of a seed wins). */
function readResults(path: string): Map<number, SeedRecord> {
  const done = new Map<number, SeedRecord>();
  if (!existsSync(path)) return done;
  for (const line of readFileSync(path, 'utf8').split('\n')) {
    if (line.trim() === '') continue;
    try {
      const r = JSON.parse(line) as SeedRecord;
      if (Number.isSafeInteger(r.seed)) done.set(r.seed, r);
    } catch {
      // a line cut by an interrupted run: that seed runs again
    }
  }
  return done;
}

export async function runMany(o: ManyOptions, spawn: () => Worker): Promise<ManySummary> {
  const started = performance.now();
  const tally = new MarkTally();
  const failed: SeedRecord[] = [];
  let passed = 0;
  let resumed = 0;
  const previous = o.resume && o.out !== null ? readResults(o.out) : new Map<number, SeedRecord>();
  const queue: { seed: number; replicas: number }[] = [];
  const record = (r: SeedRecord): void => {
    tally.add(r.marks);
    if (r.ok) passed++;
    else failed.push(r);
  };
  for (let seed = o.seedStart; seed < o.seedStart + o.seeds; seed++) {
    const replicas = clusterSize(seed, o.replicas);
    const done = previous.get(seed);
    if (done !== undefined && done.replicas === replicas) {
      resumed++;
      record(done);
      continue;
    }
    queue.push({ seed, replicas });
  }
  const total = queue.length;
  let finished = 0;
  let lastProgress = performance.now();
  const onResult = (r: SeedRecord): void => {
    finished++;
    record(r);
    if (o.out !== null) appendFileSync(o.out, `${JSON.stringify(r)}\n`);
    if (!r.ok) o.log(`${describe(r)}\n  ${r.failure ?? ''}\n  replay: ${replayCommand(r)}`);
    else if (o.verbose) o.log(describe(r));
    const now = performance.now();
    if (o.progressSeconds > 0 && now - lastProgress >= o.progressSeconds * 1000) {
      lastProgress = now;
      const rate = finished / ((now - started) / 1000);
      const eta = rate > 0 ? (total - finished) / rate : 0;
      o.log(`progress: ${finished}/${total} (${failed.length} failed so far), ${rate.toFixed(1)} seeds/s, eta ${formatSeconds(eta)}`);
    }
  };
  const workers = Math.max(1, Math.min(o.workers, total));
  if (total > 0 && o.workers <= 1) {
    for (const { seed, replicas } of queue) onResult(runRecord(seed, replicas));
  } else if (total > 0) {
    let next = 0;
    await Promise.all(Array.from({ length: workers }, () => new Promise<void>((resolve, reject) => {
      const worker = spawn();
      const feed = (): void => {
        const item = queue[next++];
        worker.postMessage((item === undefined ? { kind: 'stop' } : { kind: 'run', ...item }) satisfies ToWorker);
        if (item === undefined) void worker.terminate().then(() => resolve());
      };
      worker.on('message', (m: FromWorker) => {
        if (m.kind === 'result') onResult(m.record);
        feed();
      });
      worker.on('error', reject);
    })));
  }
  const summary: ManySummary = { passed, failed, seconds: (performance.now() - started) / 1000, tally, resumed };
  return summary;
}

export function runRecord(seed: number, replicas: number): SeedRecord {
  const t = performance.now();
  const r = runSeed(seed, replicas);
  return {
    seed, replicas, ok: r.ok, failure: r.failure, ticks: r.ticks, committedOps: r.committedOps, traceHash: r.traceHash,
    ms: Math.round(performance.now() - t), marks: r.marks,
  };
}

/** The worker side: ask for a seed, run it, send the record, repeat. */
export function workerLoop(port: { postMessage(m: FromWorker): void; on(event: 'message', cb: (m: ToWorker) => void): void }): void {
  port.on('message', (m) => {
    if (m.kind !== 'run') return;
    port.postMessage({ kind: 'result', record: runRecord(m.seed, m.replicas) });
  });
  port.postMessage({ kind: 'ready' });
}

export function formatSummary(s: ManySummary, o: Pick<ManyOptions, 'seeds'>): string {
  const lines: string[] = [];
  if (s.failed.length > 0) lines.push(`failing seeds: ${s.failed.map((f) => `${f.seed}/${f.replicas}`).sort().join(' ')}`);
  const ran = o.seeds - s.resumed;
  const per1000 = ran > 0 ? (s.seconds / ran) * 1000 : 0;
  lines.push(s.tally.format());
  const missing = s.tally.missing(EXPECTED_MARKS);
  if (missing.length > 0) lines.push(`marks never reached: ${missing.join(' ')}`);
  lines.push(`${s.passed} passed, ${s.failed.length} failed (${s.seconds.toFixed(1)} s wall for ${ran} seeds run`
    + `${s.resumed > 0 ? `, ${s.resumed} from the results file` : ''}; ${per1000.toFixed(0)} s per 1,000 seeds)`);
  return lines.join('\n');
}

function formatSeconds(s: number): string {
  if (s < 120) return `${s.toFixed(0)} s`;
  if (s < 7200) return `${(s / 60).toFixed(0)} min`;
  return `${(s / 3600).toFixed(1)} h`;
}
