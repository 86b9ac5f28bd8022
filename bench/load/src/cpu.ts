import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';

/**
 * CPU accounting. Server processes: utime + stime of /proc/<pid>/stat (fields 14 and 15, in
 * clock ticks; every thread of the process counts, so worker threads and Go threads are
 * included). The bench client: its own `process.cpuUsage()` (all its threads), reported apart:
 * on a 2-core machine the client competes with the servers for the same cores.
 */
let ticksPerSecond: number | null = null;

function clockTicks(): number {
  if (ticksPerSecond !== null) return ticksPerSecond;
  try {
    ticksPerSecond = Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).trim()) || 100;
  } catch {
    ticksPerSecond = 100;
  }
  return ticksPerSecond;
}

/** CPU seconds (user + system) a process has used, or null when it is gone or not readable. */
export function processCpuSeconds(pid: number): number | null {
  return statCpuSeconds(`/proc/${pid}/stat`);
}

/** CPU seconds of one thread of a process (`/proc/<pid>/task/<tid>/stat`), or null. */
export function threadCpuSeconds(pid: number, tid: number): number | null {
  return statCpuSeconds(`/proc/${pid}/task/${tid}/stat`);
}

function statCpuSeconds(path: string): number | null {
  let stat: string;
  try {
    stat = readFileSync(path, 'utf8');
  } catch {
    return null;
  }
  // The command name (field 2) is in parentheses and may hold spaces: split after the last ')'.
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  // fields[0] is field 3 (state): utime is field 14 → index 11, stime field 15 → index 12.
  const utime = Number(fields[11]);
  const stime = Number(fields[12]);
  if (!Number.isFinite(utime) || !Number.isFinite(stime)) return null;
  return (utime + stime) / clockTicks();
}

/** One named thread of a server process (Shoal's `runtime/threads.json`). */
export interface ServerThread {
  /** `supervisor`, `metadata`, `shard-<n>`. */
  readonly name: string;
  readonly role: 'supervisor' | 'metadata' | 'shard';
  readonly tid: number;
  /** Peer replicas whose replica link this thread holds. */
  readonly links: readonly number[];
}

/** The named threads of one server process (node `node` of the cluster). */
export interface NodeThreads {
  readonly node: number;
  readonly pid: number;
  readonly threads: readonly ServerThread[];
}

export interface CpuSnapshot {
  readonly at: number;
  readonly servers: ReadonlyMap<number, number>;
  readonly client: NodeJS.CpuUsage;
  /** Per named thread, keyed `pid:tid` (empty when the system names no threads). */
  readonly threads: ReadonlyMap<string, number>;
  readonly table: readonly NodeThreads[];
}

export function cpuSnapshot(pids: readonly number[], table: readonly NodeThreads[] = []): CpuSnapshot {
  const servers = new Map<number, number>();
  for (const pid of pids) {
    const s = processCpuSeconds(pid);
    if (s !== null) servers.set(pid, s);
  }
  const threads = new Map<string, number>();
  for (const node of table) {
    for (const t of node.threads) {
      const s = threadCpuSeconds(node.pid, t.tid);
      if (s !== null) threads.set(`${node.pid}:${t.tid}`, s);
    }
  }
  return { at: performance.now(), servers, client: process.cpuUsage(), threads, table };
}

/**
 * CPU of one thread over a phase. `other` (one per node) is the process's CPU minus its named
 * threads: V8's platform workers (concurrent GC, compilers), the libuv pool, piscina.
 */
export interface ThreadCpu {
  readonly node: number;
  readonly name: string;
  readonly role: ServerThread['role'] | 'other';
  readonly links: readonly number[];
  readonly seconds: number;
  /** Seconds per million messages (null without messages). */
  readonly secondsPerMillion: number | null;
  /**
   * The thread's CPU while the node was idle (cores: CPU seconds per wall second; ticks,
   * timers, parked loops), when an idle baseline was taken before the run, else null.
   */
  readonly idleCores: number | null;
  /** `seconds` minus the idle rate over the phase, per million messages: the load's own cost. */
  readonly netSecondsPerMillion: number | null;
}

/** Idle CPU per named thread (`<node>:<name>` → cores), measured with the cluster idle. */
export type IdleBaseline = ReadonlyMap<string, number>;

/** The idle baseline between two snapshots taken while nothing ran. */
export function idleBaseline(start: CpuSnapshot, end: CpuSnapshot): IdleBaseline {
  const wall = Math.max(1e-9, (end.at - start.at) / 1000);
  const out = new Map<string, number>();
  for (const t of threadsBetween(start, end, () => null, null, wall)) out.set(`${t.node}:${t.name}`, t.seconds / wall);
  return out;
}

export interface CpuUsage {
  readonly wallSeconds: number;
  /** CPU seconds of all server processes together (null when none could be read). */
  readonly serverSeconds: number | null;
  readonly clientSeconds: number;
  /** Per million messages (null without messages). */
  readonly serverSecondsPerMillion: number | null;
  readonly clientSecondsPerMillion: number | null;
  /** Average cores busy over the phase. */
  readonly serverCores: number | null;
  readonly clientCores: number;
  /** Per thread of every server process that names its threads (Shoal), else empty. */
  readonly threads: readonly ThreadCpu[];
}

/** CPU used between two snapshots, normalised by `messages`. A process that died counts up to its last reading. */
export function cpuBetween(start: CpuSnapshot, end: CpuSnapshot, messages: number, idle: IdleBaseline | null = null): CpuUsage {
  let server = 0;
  let seen = 0;
  for (const [pid, before] of start.servers) {
    const after = end.servers.get(pid);
    if (after === undefined) continue;
    server += after - before;
    seen++;
  }
  const client = (end.client.user - start.client.user + end.client.system - start.client.system) / 1e6;
  const wall = Math.max(1e-9, (end.at - start.at) / 1000);
  const perMillion = (s: number): number | null => (messages > 0 ? s / (messages / 1e6) : null);
  return {
    threads: threadsBetween(start, end, perMillion, idle, wall),
    wallSeconds: wall,
    serverSeconds: seen === 0 ? null : server,
    clientSeconds: client,
    serverSecondsPerMillion: seen === 0 ? null : perMillion(server),
    clientSecondsPerMillion: perMillion(client),
    serverCores: seen === 0 ? null : server / wall,
    clientCores: client / wall,
  };
}

/** Per-thread CPU between two snapshots; the thread table is the end's (link owners move). */
function threadsBetween(start: CpuSnapshot, end: CpuSnapshot, perMillion: (s: number) => number | null, idle: IdleBaseline | null, wall: number): ThreadCpu[] {
  const out: ThreadCpu[] = [];
  const entry = (node: number, name: string, role: ThreadCpu['role'], links: readonly number[], seconds: number): ThreadCpu => {
    const idleCores = idle?.get(`${node}:${name}`) ?? null;
    const net = idleCores === null ? null : perMillion(Math.max(0, seconds - idleCores * wall));
    return { node, name, role, links, seconds, secondsPerMillion: perMillion(seconds), idleCores, netSecondsPerMillion: net };
  };
  for (const node of end.table) {
    const before = start.servers.get(node.pid);
    const after = end.servers.get(node.pid);
    if (before === undefined || after === undefined) continue;
    let named = 0;
    for (const t of node.threads) {
      const key = `${node.pid}:${t.tid}`;
      const a = start.threads.get(key);
      const b = end.threads.get(key);
      if (a === undefined || b === undefined) continue;
      named += b - a;
      out.push(entry(node.node, t.name, t.role, t.links, b - a));
    }
    const other = Math.max(0, after - before - named);
    out.push(entry(node.node, 'other', 'other', [], other));
  }
  return out;
}
