/**
 * `vopr`: the deterministic simulator runner.
 *
 *   npm run vopr -- --seed S [--replicas N] [--html FILE]   one run, replayed exactly; prints the trace
 *                                                            hash and the marks; --html writes its timeline
 *   npm run vopr -- --seeds N [--seed-start S] [--replicas N|3,5] [--workers W]
 *                  [--out FILE.jsonl [--resume]] [--progress SECONDS] [--require-marks] [--verbose]
 *                                                            N runs; ends with the coverage marks and
 *                                                            "N passed, M failed"
 *   npm run vopr -- --bench [--replicas N]                  simulator speed (calm cluster, heavy load)
 *
 * Without --replicas the cluster size comes from the seed (1, 2, 3 or 5: mostly 3 and 5), so a
 * failing seed printed by a --seeds run replays with --seed alone; a list (`--replicas 3,5`)
 * picks by seed mod its length, and the failure line prints the exact replay command. --seeds
 * runs spread over worker threads (default 2). --out appends one JSON line per seed; with
 * --resume the seeds already in that file are not run again (their results count in the
 * summary), so an interrupted long run continues where it stopped. Exit code 1 when any seed
 * failed (or, with --require-marks, when an expected mark was never reached).
 */
import { writeFileSync } from 'node:fs';
import { performance } from 'node:perf_hooks';
import { Worker, isMainThread, parentPort } from 'node:worker_threads';
import { EXPECTED_MARKS, Simulation, Timeline, optionsForSeed, profileForSeed } from '@shoal/simulator';
import { bench } from './bench.js';
import { clusterSize, describe, formatSummary, runMany, workerLoop } from './runner.js';
import { renderTimeline } from './timeline-html.js';

export { replicasForSeed, runSeed } from './runner.js';

interface Args {
  seed: number | null;
  seeds: number | null;
  seedStart: number;
  replicas: number[] | null;
  workers: number;
  verbose: boolean;
  bench: boolean;
  html: string | null;
  out: string | null;
  resume: boolean;
  progress: number;
  requireMarks: boolean;
  /** --group-wait-depth N (with --seed): replay with this wait depth instead of the drawn one. */
  groupWaitDepth: number | null;
  /** --inline-frontier (with --seed): replay with the partition frontier written inline (as before the disk thread). */
  inlineFrontier: boolean;
}

function parseArgs(argv: readonly string[]): Args {
  const args: Args = {
    seed: null, seeds: null, seedStart: 1, replicas: null, workers: 2, verbose: false, bench: false, html: null, out: null,
    resume: false, progress: 30, requireMarks: false, groupWaitDepth: null, inlineFrontier: false,
  };
  for (let i = 0; i < argv.length; i++) {
    const flag = argv[i];
    const text = (): string => {
      const v = argv[++i];
      if (v === undefined) throw new Error(`${flag} needs a value`);
      return v;
    };
    const value = (): number => {
      const v = Number(text());
      if (!Number.isSafeInteger(v) || v < 0) throw new Error(`${flag} needs a non-negative integer`);
      return v;
    };
    switch (flag) {
      case '--seed': args.seed = value(); break;
      case '--seeds': args.seeds = value(); break;
      case '--seed-start': args.seedStart = value(); break;
      case '--replicas': {
        const list = text().split(',').map(Number);
        if (list.length === 0 || list.some((n) => ![1, 2, 3, 5].includes(n))) throw new Error('--replicas must be 1, 2, 3 or 5, or a list like 3,5');
        args.replicas = list;
        break;
      }
      case '--workers': args.workers = Math.max(1, value()); break;
      case '--verbose': args.verbose = true; break;
      case '--bench': args.bench = true; break;
      case '--html': args.html = text(); break;
      case '--out': args.out = text(); break;
      case '--resume': args.resume = true; break;
      case '--progress': args.progress = value(); break;
      case '--require-marks': args.requireMarks = true; break;
      case '--group-wait-depth': args.groupWaitDepth = Math.max(1, value()); break;
      case '--inline-frontier': args.inlineFrontier = true; break;
      default: throw new Error(`unknown argument ${flag ?? ''}`);
    }
  }
  if (!args.bench && (args.seed === null) === (args.seeds === null)) throw new Error('give exactly one of --seed S, --seeds N or --bench');
  if (args.html !== null && args.seed === null) throw new Error('--html goes with --seed S');
  if (args.resume && args.out === null) throw new Error('--resume needs --out FILE');
  if (args.groupWaitDepth !== null && args.seed === null) throw new Error('--group-wait-depth goes with --seed S');
  if (args.inlineFrontier && args.seed === null) throw new Error('--inline-frontier goes with --seed S');
  return args;
}

/**
 * A worker running this same module. Under tsx (the `npm run vopr` path) the worker registers
 * tsx's loader itself before importing the TypeScript entry; compiled, it imports the .js.
 */
function spawnWorker(): Worker {
  const url = import.meta.url;
  if (!url.endsWith('.ts')) return new Worker(new URL(url));
  const boot = `import('tsx/esm/api').then(({ register }) => { register(); return import(${JSON.stringify(url)}); })`;
  return new Worker(boot, { eval: true, execArgv: ['--conditions=source'] });
}

function runOne(args: Args & { seed: number }): number {
  const started = performance.now();
  const replicas = clusterSize(args.seed, args.replicas);
  const drawn = optionsForSeed(args.seed, replicas);
  const options = {
    ...drawn,
    ...(args.groupWaitDepth === null ? {} : { partitionGroupWaitDepth: args.groupWaitDepth }),
    ...(args.inlineFrontier ? { asyncFrontier: false } : {}),
  };
  const timeline = args.html === null ? null : new Timeline(args.seed, replicas, options.clients);
  const r = new Simulation(options, {}, timeline).run();
  console.log(`${describe(r)} profile=${profileForSeed(args.seed)} crashes=${r.stats.crashes} partitions=${r.stats.partitions} `
    + `acks=${r.stats.metadataAcks}+${r.stats.sendAcks}+${r.stats.offsetAcks}`);
  if (!r.ok) console.log(r.failure);
  const names = Object.keys(r.marks);
  const expected = new Set(EXPECTED_MARKS.map((m) => m.name));
  console.log(`marks: ${names.filter((n) => expected.has(n)).map((n) => `${n}×${r.marks[n]}`).join(' ') || '(none)'}`);
  if (timeline !== null && args.html !== null) {
    timeline.data.summary = {
      ok: r.ok, failure: r.failure, traceHash: r.traceHash, committedOps: r.committedOps, marks: r.marks,
      options: { profile: profileForSeed(args.seed), ...JSON.parse(JSON.stringify(options)) as Record<string, unknown> },
    };
    writeFileSync(args.html, renderTimeline(timeline.data));
    console.log(`timeline: ${args.html}`);
  }
  console.log(`trace hash: ${r.traceHash} (${((performance.now() - started) / 1000).toFixed(2)} s)`);
  return r.ok ? 0 : 1;
}

async function main(): Promise<number> {
  const args = parseArgs(process.argv.slice(2));
  if (args.bench) {
    const replicas = args.replicas?.[0] ?? 3;
    bench(replicas, 500); // warm-up (JIT)
    const r = bench(replicas);
    console.log(`bench: ${r.replicas} replicas, ${r.ticks} ticks, ${r.committedOps} committed ops in ${r.seconds.toFixed(2)} s: `
      + `${Math.round(r.opsPerSecond)} simulated committed ops/s; primary ${r.primaryMicrosPerOp.toFixed(1)} µs CPU per committed op`);
    return 0;
  }
  if (args.seed !== null) return runOne({ ...args, seed: args.seed });
  const seeds = args.seeds as number;
  const summary = await runMany({
    seeds, seedStart: args.seedStart, replicas: args.replicas, workers: args.workers, out: args.out, resume: args.resume,
    progressSeconds: args.progress, verbose: args.verbose, requireMarks: args.requireMarks, log: (line) => console.log(line),
  }, spawnWorker);
  console.log(formatSummary(summary, { seeds }));
  if (summary.failed.length > 0) return 1;
  if (args.requireMarks && summary.tally.missing().length > 0) return 1;
  return 0;
}

if (isMainThread) {
  main().then((code) => {
    process.exitCode = code;
  }, (error: unknown) => {
    console.error(error instanceof Error ? error.message : error);
    process.exitCode = 2;
  });
} else if (parentPort !== null) {
  const port = parentPort;
  workerLoop({ postMessage: (m) => port.postMessage(m), on: (event, cb) => port.on(event, cb) });
}
