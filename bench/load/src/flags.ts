import { parseArgs } from 'node:util';
import { IDENTITY_BYTES } from './exactly-once.js';

/**
 * Command-line flags of `npm run bench` / `shoal bench` (issue 8), parsed into `BenchOptions`.
 * Parsing is pure (argv in, options or a usage error out) so the tests can pin it.
 */
export interface Workload {
  readonly replicas: 1 | 3 | 5;
  readonly shards: number;
  readonly partitions: number;
  readonly producers: number;
  readonly consumers: number;
  readonly messageSize: number;
  /** Messages per request (Shoal: per SendMessages; NATS: published back to back before waiting). */
  readonly batch: number;
  /** Requests in flight per producer. */
  readonly inFlight: number;
  /**
   * Offered load: messages per second over all producers (requests paced at `batch / rate`
   * seconds apart, never faster; a cluster that cannot keep up carries less), or 0 = as fast as
   * the windows allow. The shard-scaling runs offer the same load to 1, 2 and 4 shards.
   */
  readonly rate: number;
  /** Measured messages (after the warmup), or null when `durationS` bounds the run. */
  readonly messages: number | null;
  readonly durationS: number | null;
  readonly warmupS: number;
  /**
   * Where Shoal's producers connect: each partition's primary (from the GetClusterMetadata
   * extension), or a node that does not lead it, so every write is forwarded to the primary
   * (docs/cluster.md "Forwarded partition requests"). NATS clients always connect as usual.
   */
  readonly entry: Entry;
}

export const ENTRIES = ['primary', 'backup'] as const;
export type Entry = (typeof ENTRIES)[number];

/** Workload keys a sweep may vary, by flag name. */
export const SWEEP_KEYS = {
  replicas: 'replicas',
  shards: 'shards',
  partitions: 'partitions',
  producers: 'producers',
  consumers: 'consumers',
  'message-size': 'messageSize',
  batch: 'batch',
  'in-flight': 'inFlight',
  rate: 'rate',
  messages: 'messages',
  duration: 'durationS',
  warmup: 'warmupS',
} as const satisfies Record<string, keyof Workload>;

export type SweepKey = keyof typeof SWEEP_KEYS;

export interface Sweep {
  readonly key: SweepKey;
  readonly values: readonly number[];
}

export interface BenchOptions {
  /** The workload every scenario starts from (flags over defaults). */
  readonly base: Workload;
  /** Workload keys given on the command line (a custom run instead of the default suite). */
  readonly explicit: ReadonlySet<keyof Workload>;
  readonly sweeps: readonly Sweep[];
  readonly compare: 'nats' | null;
  /** Client addresses of an existing Shoal cluster (the bench starts none). */
  readonly target: readonly string[] | null;
  readonly jsonPath: string | null;
  readonly htmlPath: string | null;
  readonly failover: boolean;
  readonly help: boolean;
}

export const DEFAULT_WORKLOAD: Workload = Object.freeze({
  replicas: 3,
  shards: 1,
  partitions: 1,
  producers: 1,
  consumers: 1,
  messageSize: 1024,
  batch: 1000,
  inFlight: 8,
  rate: 0,
  messages: null,
  durationS: 5,
  warmupS: 1,
  entry: 'primary',
});

export class UsageError extends Error {
  override readonly name = 'UsageError';
}

export const USAGE = `Usage: npm run bench -- [flags]          (or: shoal bench [flags])

Without workload flags it runs the standard suite (the issue's targets): 3 replicas with
batches of 1,000, batch 1 with 256 in flight, one message at a time, and 1 vs 2 shards on a
single node. Any workload flag runs that one workload instead.

Cluster
  --replicas 1|3|5        replicas (nodes) of the cluster the bench starts       [3]
  --shards N              shard workers per node                                 [1]
  --target host:port[,…]  use an existing Shoal cluster (the bench starts none)
  --compare nats          also run the identical workload on a 3-node NATS JetStream cluster
Workload
  --partitions P          partitions of the topic                                 [1]
  --producers K           producer connections                                   [1]
  --consumers K           consumer connections                                   [1]
  --message-size B        payload bytes per message (>= ${IDENTITY_BYTES})                      [1024]
  --batch M               messages per request                                   [1000]
  --in-flight W           requests in flight per producer                        [8]
  --rate R                offered messages/s over all producers (0 = unpaced)    [0]
  --messages N            measured messages (after the warmup), or
  --duration S            measured seconds                                       [5]
  --warmup S              warmup seconds (sent and checked, not measured)        [1]
  --entry primary|backup  Shoal producers connect to each partition's primary, or
                          to a node that forwards to it                          [primary]
  --sweep key=v1,v2,…     one run per value (repeatable): ${Object.keys(SWEEP_KEYS).join(', ')}
Modes
  --failover              SIGKILL the primary of a 3-node Shoal cluster during a steady
                          produce; report the time to the first acknowledged write after it
Report
  --json FILE             every number, the command line and the machine
  --html FILE             self-contained report with charts (opens offline)
  --help                  this text

Exit codes: 0 done; 1 acknowledged data lost or duplicated, or a run failed; 2 usage error;
3 a target could not run (nats-server missing, Shoal server not built, target unreachable).`;

function positiveInt(flag: string, text: string, min = 1, max = Number.MAX_SAFE_INTEGER): number {
  if (!/^\d+$/.test(text.trim())) throw new UsageError(`--${flag}: expected a whole number, got '${text}'`);
  const value = Number(text);
  if (value < min || value > max) throw new UsageError(`--${flag}: must be between ${min} and ${max}, got ${value}`);
  return value;
}

function seconds(flag: string, text: string, allowZero: boolean): number {
  if (!/^\d+(\.\d+)?$/.test(text.trim())) throw new UsageError(`--${flag}: expected seconds (e.g. 5 or 0.5), got '${text}'`);
  const value = Number(text);
  if (!allowZero && value <= 0) throw new UsageError(`--${flag}: must be above 0`);
  if (value > 86_400) throw new UsageError(`--${flag}: at most 86400 seconds`);
  return value;
}

/** Validates one workload value by flag name; returns the parsed number. */
export function parseWorkloadValue(flag: SweepKey, text: string): number {
  switch (flag) {
    case 'replicas': {
      const n = positiveInt(flag, text);
      if (n !== 1 && n !== 3 && n !== 5) throw new UsageError(`--replicas: must be 1, 3 or 5, got ${n}`);
      return n;
    }
    case 'shards': return positiveInt(flag, text, 1, 256);
    case 'partitions': return positiveInt(flag, text, 1, 65_535);
    case 'producers': return positiveInt(flag, text, 1, 1024);
    case 'consumers': return positiveInt(flag, text, 1, 1024);
    case 'message-size': return positiveInt(flag, text, IDENTITY_BYTES, 16 * 1024 * 1024);
    case 'batch': return positiveInt(flag, text, 1, 100_000);
    case 'in-flight': return positiveInt(flag, text, 1, 4096);
    case 'rate': return positiveInt(flag, text, 0, 100_000_000);
    case 'messages': return positiveInt(flag, text, 1);
    case 'duration': return seconds(flag, text, false);
    case 'warmup': return seconds(flag, text, true);
  }
}

/** Applies one workload value to a workload (duration and messages exclude each other). */
export function withValue(workload: Workload, key: SweepKey, value: number): Workload {
  const field = SWEEP_KEYS[key];
  if (field === 'messages') return { ...workload, messages: value, durationS: null };
  if (field === 'durationS') return { ...workload, durationS: value, messages: null };
  return { ...workload, [field]: value } as Workload;
}

export function parseSweep(text: string): Sweep {
  const eq = text.indexOf('=');
  if (eq <= 0) throw new UsageError(`--sweep: expected key=v1,v2,…, got '${text}'`);
  const key = text.slice(0, eq).trim();
  if (!(key in SWEEP_KEYS)) throw new UsageError(`--sweep: unknown key '${key}' (one of ${Object.keys(SWEEP_KEYS).join(', ')})`);
  const parts = text.slice(eq + 1).split(',').map((v) => v.trim()).filter((v) => v !== '');
  if (parts.length < 2) throw new UsageError(`--sweep ${key}: give at least two values`);
  const values = parts.map((v) => parseWorkloadValue(key as SweepKey, v));
  if (new Set(values).size !== values.length) throw new UsageError(`--sweep ${key}: values repeat`);
  return { key: key as SweepKey, values };
}

export function parseTarget(text: string): string[] {
  const addresses = text.split(',').map((a) => a.trim()).filter((a) => a !== '');
  if (addresses.length === 0) throw new UsageError('--target: expected host:port[,host:port…]');
  for (const address of addresses) {
    const m = /^(\[[0-9a-fA-F:]+\]|[^:\s]+):(\d+)$/.exec(address);
    const port = m === null ? NaN : Number(m[2]);
    if (m === null || !(port >= 1 && port <= 65_535)) throw new UsageError(`--target: '${address}' is not host:port`);
  }
  return addresses;
}

export function parseFlags(argv: readonly string[]): BenchOptions {
  let parsed;
  try {
    parsed = parseArgs({
      args: [...argv],
      strict: true,
      allowPositionals: false,
      options: {
        replicas: { type: 'string' },
        shards: { type: 'string' },
        partitions: { type: 'string' },
        producers: { type: 'string' },
        consumers: { type: 'string' },
        'message-size': { type: 'string' },
        batch: { type: 'string' },
        'in-flight': { type: 'string' },
        rate: { type: 'string' },
        messages: { type: 'string' },
        duration: { type: 'string' },
        warmup: { type: 'string' },
        entry: { type: 'string' },
        json: { type: 'string' },
        html: { type: 'string' },
        sweep: { type: 'string', multiple: true },
        compare: { type: 'string' },
        target: { type: 'string' },
        failover: { type: 'boolean' },
        help: { type: 'boolean', short: 'h' },
      },
    });
  } catch (error) {
    throw new UsageError(error instanceof Error ? error.message : String(error));
  }
  const values = parsed.values;
  if (values.messages !== undefined && values.duration !== undefined) throw new UsageError('--messages and --duration exclude each other');
  let base: Workload = DEFAULT_WORKLOAD;
  const explicit = new Set<keyof Workload>();
  for (const flag of Object.keys(SWEEP_KEYS) as SweepKey[]) {
    const text = values[flag];
    if (text === undefined) continue;
    base = withValue(base, flag, parseWorkloadValue(flag, text));
    explicit.add(SWEEP_KEYS[flag]);
  }
  if (values.entry !== undefined) {
    if (!(ENTRIES as readonly string[]).includes(values.entry)) throw new UsageError(`--entry: primary or backup, got '${values.entry}'`);
    base = { ...base, entry: values.entry as Entry };
    explicit.add('entry');
  }
  const sweeps = (values.sweep ?? []).map(parseSweep);
  const keys = sweeps.map((s) => s.key);
  if (new Set(keys).size !== keys.length) throw new UsageError('--sweep: one sweep per key');
  for (const sweep of sweeps) {
    if (values[sweep.key] !== undefined) throw new UsageError(`--${sweep.key} and --sweep ${sweep.key}=… exclude each other`);
    if ((sweep.key === 'messages' && values.duration !== undefined) || (sweep.key === 'duration' && values.messages !== undefined)) {
      throw new UsageError('--messages and --duration exclude each other (a sweep counts)');
    }
  }
  let compare: 'nats' | null = null;
  if (values.compare !== undefined) {
    if (values.compare !== 'nats') throw new UsageError(`--compare: only 'nats' is supported, got '${values.compare}'`);
    compare = 'nats';
  }
  const target = values.target === undefined ? null : parseTarget(values.target);
  if (target !== null) {
    for (const sweep of sweeps) {
      if (sweep.key === 'replicas' || sweep.key === 'shards') {
        throw new UsageError(`--sweep ${sweep.key}: needs clusters the bench starts itself (not with --target)`);
      }
    }
  }
  const failover = values.failover === true;
  if (failover && sweeps.length > 0) throw new UsageError('--failover runs one workload: no --sweep');
  if (failover && values.replicas !== undefined && base.replicas !== 3) throw new UsageError('--failover needs --replicas 3');
  return {
    base,
    explicit,
    sweeps,
    compare,
    target,
    jsonPath: values.json ?? null,
    htmlPath: values.html ?? null,
    failover,
    help: values.help === true,
  };
}

/** The command line that reproduces a run. */
export function commandLine(argv: readonly string[]): string {
  const quoted = argv.map((a) => (/^[\w@%+=:,./-]+$/.test(a) ? a : `'${a.replace(/'/g, "'\\''")}'`));
  return ['npm', 'run', 'bench', ...(quoted.length > 0 ? ['--', ...quoted] : [])].join(' ');
}
