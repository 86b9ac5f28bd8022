/**
 * `vopr`: the deterministic simulator runner.
 *
 *   npm run vopr -- --seed S [--replicas N]                    one run, replayed exactly; prints the trace hash
 *   npm run vopr -- --seeds N [--seed-start S] [--replicas N] [--workers W]
 *                                                              N runs; ends with "N passed, M failed"
 *   npm run vopr -- --bench [--replicas N]                     simulator speed (calm cluster, heavy load)
 *
 * Without --replicas the cluster size comes from the seed (1, 2, 3 or 5: mostly 3 and 5), so a
 * failing seed printed by a --seeds run replays with --seed alone. --seeds runs spread over worker
 * threads (default: 2). Exit code 1 when any seed failed.
 */
import { Worker, isMainThread, parentPort, workerData } from 'node:worker_threads';
import { performance } from 'node:perf_hooks';
import { Simulation, optionsForSeed, type SimulationResult } from '@shoal/simulator';
import { bench } from './bench.js';

/** Cluster size of a seed when not forced: 1 and 2 now and then, mostly 3 and 5. */
export function replicasForSeed(seed: number): number {
  const r = seed % 10;
  if (r === 0) return 1;
  if (r === 1) return 2;
  return r < 6 ? 3 : 5;
}

export function runSeed(seed: number, replicas: number | null): SimulationResult {
  return new Simulation(optionsForSeed(seed, replicas ?? replicasForSeed(seed))).run();
}

interface Args {
  seed: number | null;
  seeds: number | null;
  seedStart: number;
  replicas: number | null;
  workers: number;
  verbose: boolean;
  bench: boolean;
}

function parseArgs(argv: readonly string[]): Args {
  const args: Args = { seed: null, seeds: null, seedStart: 1, replicas: null, workers: 2, verbose: false, bench: false };
  for (let i = 0; i < argv.length; i++) {
    const flag = argv[i];
    const value = (): number => {
      const v = Number(argv[++i]);
      if (!Number.isSafeInteger(v) || v < 0) throw new Error(`${flag} needs a non-negative integer`);
      return v;
    };
    switch (flag) {
      case '--seed': args.seed = value(); break;
      case '--seeds': args.seeds = value(); break;
      case '--seed-start': args.seedStart = value(); break;
      case '--replicas': {
        const n = value();
        if (![1, 2, 3, 5].includes(n)) throw new Error('--replicas must be 1, 2, 3 or 5');
        args.replicas = n;
        break;
      }
      case '--workers': args.workers = Math.max(1, value()); break;
      case '--verbose': args.verbose = true; break;
      case '--bench': args.bench = true; break;
      default: throw new Error(`unknown argument ${flag ?? ''}`);
    }
  }
  if (!args.bench && (args.seed === null) === (args.seeds === null)) throw new Error('give exactly one of --seed S, --seeds N or --bench');
  return args;
}

function describe(r: SimulationResult): string {
  const s = r.stats;
  return `seed ${r.seed} (replicas ${r.replicas}): ${r.ok ? 'ok' : 'FAILED'} ticks=${r.ticks} committed_ops=${r.committedOps} `
    + `crashes=${s.crashes} partitions=${s.partitions} acks=${s.metadataAcks}+${s.sendAcks} trace=${r.traceHash}`;
}

interface WorkerTask {
  readonly seeds: readonly number[];
  readonly replicas: number | null;
}

type WorkerReply = { readonly kind: 'result'; readonly result: SimulationResult } | { readonly kind: 'done' };

function runWorker(): void {
  const task = workerData as WorkerTask;
  const port = parentPort;
  if (port === null) return;
  for (const seed of task.seeds) {
    const result = runSeed(seed, task.replicas);
    port.postMessage({ kind: 'result', result } satisfies WorkerReply);
  }
  port.postMessage({ kind: 'done' } satisfies WorkerReply);
}

/**
 * A worker running this same module. Under tsx (the `npm run vopr` path) the worker registers
 * tsx's loader itself before importing the TypeScript entry; compiled, it imports the .js.
 */
function spawnWorker(task: WorkerTask): Worker {
  const url = import.meta.url;
  if (!url.endsWith('.ts')) return new Worker(new URL(url), { workerData: task });
  const boot = `import('tsx/esm/api').then(({ register }) => { register(); return import(${JSON.stringify(url)}); })`;
  return new Worker(boot, { eval: true, workerData: task, execArgv: ['--conditions=source'] });
}

async function runMany(args: Args & { seeds: number }): Promise<number> {
  const started = performance.now();
  const all = Array.from({ length: args.seeds }, (_, i) => args.seedStart + i);
  const workers = Math.min(args.workers, all.length);
  const failures: SimulationResult[] = [];
  let passed = 0;
  let ops = 0;
  const onResult = (r: SimulationResult): void => {
    ops += r.committedOps;
    if (r.ok) passed++;
    else {
      failures.push(r);
      console.log(`${describe(r)}\n  ${r.failure ?? ''}`);
    }
    if (args.verbose && r.ok) console.log(describe(r));
  };
  if (workers <= 1) {
    for (const seed of all) onResult(runSeed(seed, args.replicas));
  } else {
    await Promise.all(Array.from({ length: workers }, (_, w) => new Promise<void>((resolve, reject) => {
      const seeds = all.filter((_, i) => i % workers === w);
      const worker = spawnWorker({ seeds, replicas: args.replicas });
      worker.on('message', (m: WorkerReply) => {
        if (m.kind === 'result') onResult(m.result);
        else void worker.terminate().then(() => resolve());
      });
      worker.on('error', reject);
    })));
  }
  const seconds = (performance.now() - started) / 1000;
  if (failures.length > 0) console.log(`failing seeds: ${failures.map((f) => f.seed).sort((a, b) => a - b).join(' ')}`);
  console.log(`${passed} passed, ${failures.length} failed (${seconds.toFixed(1)} s, ${Math.round(ops / seconds)} committed ops/s)`);
  return failures.length === 0 ? 0 : 1;
}

async function main(): Promise<number> {
  const args = parseArgs(process.argv.slice(2));
  if (args.bench) {
    bench(args.replicas ?? 3, 500); // warm-up (JIT)
    const r = bench(args.replicas ?? 3);
    console.log(`bench: ${r.replicas} replicas, ${r.ticks} ticks, ${r.committedOps} committed ops in ${r.seconds.toFixed(2)} s: `
      + `${Math.round(r.opsPerSecond)} simulated committed ops/s; primary ${r.primaryMicrosPerOp.toFixed(1)} µs CPU per committed op`);
    return 0;
  }
  if (args.seed !== null) {
    const started = performance.now();
    const r = runSeed(args.seed, args.replicas);
    console.log(describe(r));
    if (!r.ok) console.log(r.failure);
    console.log(`trace hash: ${r.traceHash} (${((performance.now() - started) / 1000).toFixed(2)} s)`);
    return r.ok ? 0 : 1;
  }
  return runMany({ ...args, seeds: args.seeds as number });
}

if (isMainThread) {
  main().then((code) => {
    process.exitCode = code;
  }, (error: unknown) => {
    console.error(error instanceof Error ? error.message : error);
    process.exitCode = 2;
  });
} else {
  runWorker();
}
