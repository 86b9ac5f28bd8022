import { randomBytes } from 'node:crypto';
import { type CopyBoundResult, measureCopyBound } from './copy-bound.js';
import { type RunResult, runBenchmark } from './driver.js';
import { ExactlyOnceChecker } from './exactly-once.js';
import { type BenchOptions, type Workload, commandLine } from './flags.js';
import { machineFacts } from './machine.js';
import { NatsLauncher } from './nats/launcher.js';
import { NatsSystem } from './nats/system.js';
import { type Plan, type Scenario, buildPlan, describeWorkload } from './plan.js';
import type { Progress } from './progress.js';
import {
  type BenchReport, REPORT_SCHEMA, type ScenarioReport, type ScenarioRun, comparisons, isMeasured, scalingOf, targetChecks,
} from './report/model.js';
import { ShoalLauncher, repoRoot } from './shoal/launcher.js';
import { ShoalSystem } from './shoal/system.js';
import { type BenchSystem, type SystemName, TargetUnavailableError } from './target.js';

/**
 * The orchestration of one invocation: the copy bound, then every scenario of the plan on every
 * system it names (clusters started on demand, kept while a later scenario needs the same shape,
 * stopped as soon as none does), then ratios, targets and the exit code.
 */
export const EXIT = { ok: 0, failed: 1, usage: 2, unavailable: 3 } as const;

export interface BenchIo {
  readonly progress: Progress;
  /** Lines for the user (stderr): phases, cluster starts, warnings. */
  readonly log: (line: string) => void;
}

export interface BenchDeps {
  /** Overridable for tests. */
  readonly shoalLauncher?: ShoalLauncher;
  readonly natsLauncher?: () => NatsLauncher;
  readonly copyBound?: (() => Promise<CopyBoundResult>) | null;
  /** How long a consumer waits without progress for missing messages (default 10 s). */
  readonly idleMs?: number;
}

type SystemEntry = { readonly system: BenchSystem } | { readonly unavailable: string; readonly failed: boolean };

function systemKey(name: SystemName, w: Workload, options: BenchOptions): string {
  if (name === 'nats') return `nats-${Math.max(3, w.replicas)}`;
  return options.target !== null ? 'shoal-target' : `shoal-${w.replicas}x${w.shards}`;
}

class Systems {
  readonly #options: BenchOptions;
  readonly #io: BenchIo;
  readonly #deps: BenchDeps;
  readonly #running = new Map<string, SystemEntry>();
  readonly facts: Record<string, Readonly<Record<string, string | number | boolean>> | { readonly unavailable: string }> = {};

  constructor(options: BenchOptions, io: BenchIo, deps: BenchDeps) {
    this.#options = options;
    this.#io = io;
    this.#deps = deps;
  }

  async get(name: SystemName, w: Workload): Promise<SystemEntry> {
    const key = systemKey(name, w, this.#options);
    const existing = this.#running.get(key);
    if (existing !== undefined) return existing;
    let entry: SystemEntry;
    try {
      entry = { system: await this.#start(name, w) };
      this.facts[key] = entry.system.facts;
    } catch (error) {
      const message = error instanceof Error ? error.message : String(error);
      entry = { unavailable: message, failed: !(error instanceof TargetUnavailableError) };
      this.facts[key] = { unavailable: message };
      this.#io.log(`${name}: ${entry.failed ? 'failed to start' : 'unavailable'}: ${message}`);
    }
    this.#running.set(key, entry);
    return entry;
  }

  async #start(name: SystemName, w: Workload): Promise<BenchSystem> {
    if (name === 'nats') {
      const launcher = this.#deps.natsLauncher?.() ?? new NatsLauncher();
      this.#io.log(`starting a ${Math.max(3, w.replicas)}-node NATS JetStream cluster (${launcher.binary})…`);
      const cluster = await launcher.start({ replicas: w.replicas, shards: w.shards });
      return new NatsSystem(cluster, launcher.binary);
    }
    if (this.#options.target !== null) {
      const system = new ShoalSystem({ addresses: this.#options.target, cluster: null, facts: { source: `--target ${this.#options.target.join(',')}` } });
      try {
        await system.client.ping({ timeoutMs: 5000 });
      } catch (error) {
        await system.close();
        throw new TargetUnavailableError('shoal', `--target ${this.#options.target.join(',')} unreachable: ${error instanceof Error ? error.message : String(error)}`);
      }
      return system;
    }
    const launcher = this.#deps.shoalLauncher ?? new ShoalLauncher();
    launcher.check();
    this.#io.log(`starting a Shoal cluster: ${w.replicas} replica(s) × ${w.shards} shard(s)…`);
    const cluster = await launcher.start({ replicas: w.replicas, shards: w.shards });
    return new ShoalSystem({
      addresses: cluster.addresses, cluster, credentials: launcher.credentials,
      facts: { source: launcher.entry, replicas: w.replicas, shards: w.shards },
    });
  }

  /** Stops every running system whose key is not in `keep`. */
  async release(keep: ReadonlySet<string>): Promise<void> {
    for (const [key, entry] of this.#running) {
      if (keep.has(key) || !('system' in entry)) continue;
      this.#running.delete(key);
      if (entry.system instanceof ShoalSystem && entry.system.addresses.length > 1) {
        const changes = entry.system.viewChanges;
        this.#io.log(`${key}: view changes during its runs: metadata ${changes.metadata}, partitions ${changes.partition} (0: none, as a fault-free load must give)`);
      }
      await entry.system.close().catch((error: unknown) => this.#io.log(`stopping ${key}: ${String(error)}`));
    }
  }

  async closeAll(): Promise<void> {
    await this.release(new Set());
  }

  keyOf(name: SystemName, w: Workload): string {
    return systemKey(name, w, this.#options);
  }
}

function runId(scenario: string, path: string): string {
  return `${scenario}-${path}-${randomBytes(3).toString('hex')}`;
}

function randomTag(): number {
  return randomBytes(4).readUInt32LE(0);
}

/** Idle CPU measured before each shard-scaling run (driver.ts `idleBaselineMs`). */
const IDLE_BASELINE_MS = 2000;

async function runScenario(scenario: Scenario, systems: Systems, options: BenchOptions, io: BenchIo, idleMs: number | undefined, scaling: boolean): Promise<ScenarioReport> {
  const runs: ScenarioRun[] = [];
  for (const name of scenario.systems) {
    if (name === 'shoal' && scenario.needsLauncher && options.target !== null) {
      runs.push({ system: name, path: 'lean', status: 'skipped', reason: 'needs a cluster shape the bench starts itself (not available with --target)' });
      continue;
    }
    const entry = await systems.get(name, scenario.workload);
    if (!('system' in entry)) {
      runs.push({ system: name, path: 'lean', status: 'skipped', reason: entry.unavailable });
      continue;
    }
    for (const target of entry.system.targets(scenario.workload)) {
      const run = { id: runId(scenario.id, target.path), workload: scenario.workload, runTag: randomTag() };
      const label = `${scenario.id} · ${name}/${target.path}`;
      let result: RunResult;
      try {
        await target.prepare(run, null);
        result = await runBenchmark(target, run, { progress: io.progress, label, serverPids: () => entry.system.serverPids(), serverThreads: () => entry.system.serverThreads?.() ?? [], ...(scaling ? { idleBaselineMs: IDLE_BASELINE_MS } : {}), ...(idleMs === undefined ? {} : { idleMs }) }, new ExactlyOnceChecker(run.runTag));
      } catch (error) {
        result = {
          system: name, path: target.path, description: target.description, status: 'failed',
          error: `setup: ${error instanceof Error ? error.message : String(error)}`, produce: null, consume: null, warmupMessages: 0, exactlyOnce: null,
        };
      }
      await target.cleanup().catch(() => undefined);
      io.log(summaryLine(label, result));
      runs.push(result);
    }
  }
  return { id: scenario.id, title: scenario.title, workload: scenario.workload, sweep: scenario.sweep, runs };
}

export function summaryLine(label: string, r: RunResult): string {
  if (r.status !== 'ok' || r.produce === null) {
    const eo = r.exactlyOnce;
    const detail = eo === null ? '' : ` (lost ${eo.lost}, duplicated ${eo.duplicated}, misplaced ${eo.misplaced}, phantom ${eo.phantom}, reordered ${eo.reordered})`;
    return `${label}: FAILED: ${r.error ?? 'unknown'}${detail}`;
  }
  const p = r.produce;
  const c = r.consume;
  return `${label}: ${Math.round(p.msgsPerSec).toLocaleString('en-US')} msg/s, ${p.mbPerSec.toFixed(1)} MB/s, ` +
    `p50 ${p.latency.p50.toFixed(3)} ms, p99 ${p.latency.p99.toFixed(3)} ms; consume ${Math.round(c?.msgsPerSec ?? 0).toLocaleString('en-US')} msg/s; ` +
    `exactly-once ok (${r.exactlyOnce?.acknowledged.toLocaleString('en-US') ?? 0} acknowledged)`;
}

/** Which systems each remaining scenario needs (to stop clusters nobody needs any more). */
function keysNeeded(plan: Plan, from: number, systems: Systems): Set<string> {
  const keep = new Set<string>();
  for (const s of plan.scenarios.slice(from)) for (const name of s.systems) keep.add(systems.keyOf(name, s.workload));
  return keep;
}

export function exitCodeFor(scenarios: readonly ScenarioReport[]): number {
  let unavailable = false;
  for (const s of scenarios) {
    for (const r of s.runs) {
      if (isMeasured(r) && r.status === 'failed') return EXIT.failed;
      if (!isMeasured(r)) unavailable = true;
    }
  }
  return unavailable ? EXIT.unavailable : EXIT.ok;
}

export async function runBench(options: BenchOptions, argv: readonly string[], io: BenchIo, deps: BenchDeps = {}): Promise<BenchReport> {
  const startedAt = new Date().toISOString();
  const plan = buildPlan(options);
  const needsNats = plan.scenarios.some((s) => s.systems.includes('nats'));
  if (needsNats && deps.natsLauncher === undefined) new NatsLauncher(); // throws TargetUnavailableError with the install hint
  const machine = machineFacts(repoRoot());
  let copyBound: CopyBoundResult | null = null;
  if (deps.copyBound !== null) {
    io.log('measuring the copy bound (loopback TCP, 64 KiB writes, 3 rounds)…');
    copyBound = await (deps.copyBound ?? (() => measureCopyBound()))();
    io.log(`copy bound: loopback ${copyBound.loopbackMBps.toFixed(0)} MB/s ÷ 3 = ${copyBound.boundMBps.toFixed(0)} MB/s`);
  }
  const systems = new Systems(options, io, deps);
  const scenarios: ScenarioReport[] = [];
  try {
    for (const [index, scenario] of plan.scenarios.entries()) {
      io.log(`\n== ${scenario.id}: ${describeWorkload(scenario.workload)}`);
      await systems.release(keysNeeded(plan, index, systems));
      scenarios.push(await runScenario(scenario, systems, options, io, deps.idleMs, plan.scaling.includes(scenario.id)));
    }
  } finally {
    await systems.closeAll();
  }
  const scaling = scalingOf({ scenarios }, plan.scaling);
  const partial = { scenarios, copyBound, scaling };
  const notes: string[] = [];
  if (machine.gitDirty === true) notes.push('the work tree had uncommitted changes when this run started');
  if (options.target !== null) notes.push(`--target ${options.target.join(',')}: replicas and shards are the given cluster's (the workload's values are not applied to it); server CPU is not measured`);
  return {
    schema: REPORT_SCHEMA,
    startedAt,
    finishedAt: new Date().toISOString(),
    command: commandLine(argv),
    argv: [...argv],
    machine,
    plan: plan.kind,
    systems: systems.facts,
    copyBound,
    scenarios,
    sweeps: plan.sweeps,
    comparisons: comparisons(partial),
    scaling,
    targets: plan.kind === 'suite' ? targetChecks(partial) : [],
    exitCode: exitCodeFor(scenarios),
    notes,
  };
}
