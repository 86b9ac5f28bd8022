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
  let stat: string;
  try {
    stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
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

export interface CpuSnapshot {
  readonly at: number;
  readonly servers: ReadonlyMap<number, number>;
  readonly client: NodeJS.CpuUsage;
}

export function cpuSnapshot(pids: readonly number[]): CpuSnapshot {
  const servers = new Map<number, number>();
  for (const pid of pids) {
    const s = processCpuSeconds(pid);
    if (s !== null) servers.set(pid, s);
  }
  return { at: performance.now(), servers, client: process.cpuUsage() };
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
}

/** CPU used between two snapshots, normalised by `messages`. A process that died counts up to its last reading. */
export function cpuBetween(start: CpuSnapshot, end: CpuSnapshot, messages: number): CpuUsage {
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
    wallSeconds: wall,
    serverSeconds: seen === 0 ? null : server,
    clientSeconds: client,
    serverSecondsPerMillion: seen === 0 ? null : perMillion(server),
    clientSecondsPerMillion: perMillion(client),
    serverCores: seen === 0 ? null : server / wall,
    clientCores: client / wall,
  };
}
