import { type BenchOptions, type SweepKey, type Workload, withValue } from './flags.js';
import type { SystemName } from './target.js';

/**
 * What one invocation runs: a list of scenarios (a workload and the systems that run it), and
 * the sweeps that group some of them.
 *
 * - Default (no shape flag): the standard suite, one scenario per issue target (below).
 * - Any shape flag (replicas, shards, partitions, producers, consumers, message size, batch,
 *   in flight): that one workload ("custom"). Run-length flags (messages, duration, warmup) only
 *   shorten or lengthen whatever runs.
 * - `--sweep key=v1,v2`: one scenario per value, on top of the flags given.
 * NATS runs a scenario when `--compare nats` is given, except shard sweeps (NATS has no shards).
 */
export interface Scenario {
  readonly id: string;
  readonly title: string;
  readonly workload: Workload;
  readonly systems: readonly SystemName[];
  readonly sweep: { readonly key: SweepKey; readonly value: number } | null;
  /** Needs a cluster shape the bench starts itself (skipped with --target). */
  readonly needsLauncher: boolean;
}

export interface SweepPlan {
  readonly key: SweepKey;
  readonly values: readonly number[];
  readonly scenarioIds: readonly string[];
}

export interface Plan {
  readonly kind: 'suite' | 'custom' | 'sweep';
  readonly scenarios: readonly Scenario[];
  readonly sweeps: readonly SweepPlan[];
  /**
   * Scenarios of one workload that differ only in the shard count, for the shard-scaling
   * analysis (report/scaling.ts): the suite's paced 1/2/4-shard runs, or a `--sweep shards=…`.
   */
  readonly scaling: readonly string[];
}

/**
 * Offered load of the suite's shard-scaling runs (msg/s): the same for 1, 2 and 4 shards, below
 * what one shard carries on the 2-core development host, so every shard count carries all of it
 * and CPU per message compares like with like.
 */
export const SCALING_RATE = 40_000;

const SHAPE_KEYS = ['replicas', 'shards', 'partitions', 'producers', 'consumers', 'messageSize', 'batch', 'inFlight', 'rate', 'entry'] as const;

/** Scenario ids of the standard suite (the issue's targets refer to them). */
export const SUITE = {
  batch1000: 'r3-batch-1000',
  window256: 'r3-window-256',
  viaBackup: 'r3-via-backup',
  spread3: 'r3-spread-3',
  oneAtATime: 'r3-one-at-a-time',
  shards1: 'single-node-shards-1',
  shards2: 'single-node-shards-2',
  scaling1: 'scaling-shards-1',
  scaling2: 'scaling-shards-2',
  scaling4: 'scaling-shards-4',
} as const;

export function buildPlan(options: BenchOptions): Plan {
  const base = options.base;
  const withNats = (systems: SystemName[], allowed = true): SystemName[] => (options.compare === 'nats' && allowed ? [...systems, 'nats'] : systems);
  if (options.sweeps.length > 0) {
    const scenarios: Scenario[] = [];
    const sweeps: SweepPlan[] = [];
    for (const sweep of options.sweeps) {
      const ids: string[] = [];
      for (const value of sweep.values) {
        const id = `sweep-${sweep.key}-${value}`;
        ids.push(id);
        scenarios.push({
          id,
          title: `${sweep.key} = ${value}`,
          workload: withValue(base, sweep.key, value),
          systems: withNats(['shoal'], sweep.key !== 'shards'),
          sweep: { key: sweep.key, value },
          needsLauncher: sweep.key === 'replicas' || sweep.key === 'shards',
        });
      }
      sweeps.push({ key: sweep.key, values: sweep.values, scenarioIds: ids });
    }
    const shardSweep = sweeps.find((s) => s.key === 'shards');
    return { kind: 'sweep', scenarios, sweeps, scaling: shardSweep === undefined ? [] : shardSweep.scenarioIds };
  }
  if (SHAPE_KEYS.some((k) => options.explicit.has(k))) {
    return {
      kind: 'custom',
      scenarios: [{ id: 'custom', title: describeWorkload(base), workload: base, systems: withNats(['shoal']), sweep: null, needsLauncher: false }],
      sweeps: [],
      scaling: [],
    };
  }
  const r3: Workload = { ...base, replicas: 3, shards: 1, partitions: 1, producers: 1, consumers: 1, messageSize: 1024 };
  const single: Workload = { ...base, replicas: 1, partitions: 8, producers: 2, consumers: 1, messageSize: 1024, batch: 1000, inFlight: 8 };
  return {
    kind: 'suite',
    scenarios: [
      { id: SUITE.batch1000, title: '3 replicas, batches of 1,000, 8 in flight', workload: { ...r3, batch: 1000, inFlight: 8 }, systems: withNats(['shoal']), sweep: null, needsLauncher: false },
      { id: SUITE.window256, title: '3 replicas, batch 1, 256 in flight', workload: { ...r3, batch: 1, inFlight: 256 }, systems: withNats(['shoal']), sweep: null, needsLauncher: false },
      {
        id: SUITE.viaBackup, title: '3 replicas, batches of 1,000, 8 in flight, producer connected to a backup (forwarded)',
        workload: { ...r3, batch: 1000, inFlight: 8, entry: 'backup' }, systems: ['shoal'], sweep: null, needsLauncher: false,
      },
      {
        id: SUITE.spread3, title: '3 replicas, 3 partitions each led by a different node, 3 producers, batches of 1,000, 8 in flight',
        workload: { ...r3, partitions: 3, producers: 3, consumers: 3, batch: 1000, inFlight: 8 }, systems: withNats(['shoal']), sweep: null, needsLauncher: false,
      },
      { id: SUITE.oneAtATime, title: '3 replicas, one message at a time', workload: { ...r3, batch: 1, inFlight: 1 }, systems: withNats(['shoal']), sweep: null, needsLauncher: false },
      { id: SUITE.shards1, title: 'single node, 1 shard, 8 partitions, batches of 1,000', workload: { ...single, shards: 1 }, systems: ['shoal'], sweep: { key: 'shards', value: 1 }, needsLauncher: true },
      { id: SUITE.shards2, title: 'single node, 2 shards, 8 partitions, batches of 1,000', workload: { ...single, shards: 2 }, systems: ['shoal'], sweep: { key: 'shards', value: 2 }, needsLauncher: true },
      ...([[SUITE.scaling1, 1], [SUITE.scaling2, 2], [SUITE.scaling4, 4]] as const).map(([id, shards]): Scenario => ({
        id, title: `single node, ${shards} shard${shards === 1 ? '' : 's'}, 8 partitions, offered ${SCALING_RATE.toLocaleString('en-US')} msg/s (shard scaling)`,
        workload: { ...single, shards, rate: SCALING_RATE }, systems: ['shoal'], sweep: null, needsLauncher: true,
      })),
    ],
    sweeps: [{ key: 'shards', values: [1, 2], scenarioIds: [SUITE.shards1, SUITE.shards2] }],
    scaling: [SUITE.scaling1, SUITE.scaling2, SUITE.scaling4],
  };
}

export function describeWorkload(w: Workload): string {
  const length = w.messages !== null ? `${w.messages.toLocaleString('en-US')} messages` : `${w.durationS ?? 0} s`;
  return `${w.replicas} replica${w.replicas === 1 ? '' : 's'}, ${w.shards} shard${w.shards === 1 ? '' : 's'}, ${w.partitions} partition${w.partitions === 1 ? '' : 's'}, ` +
    `${w.producers}P/${w.consumers}C, ${w.messageSize} B, batch ${w.batch}, ${w.inFlight} in flight${w.rate > 0 ? `, offered ${w.rate.toLocaleString('en-US')} msg/s` : ''}` +
    `${w.entry === 'backup' ? ', via a backup' : ''}, ${length} (+${w.warmupS} s warmup)`;
}
