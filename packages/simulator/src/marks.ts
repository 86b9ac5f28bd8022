/**
 * Coverage marks (TigerBeetle-style): named points a run reached. A run counts how often it hit
 * each mark; the runner reports, over N seeds, how many seeds reached each one, so a fault mix
 * that stops reaching a fallback path shows up as a zero instead of as silence.
 *
 *   core marks       the consensus core's fallback and rare paths (@shoal/consensus marks.ts),
 *                    reported by the core as `event` effects named `mark`; counted per plane
 *                    (`core.vote_blind@partition`) and for either plane (`core.vote_blind`)
 *   simulator marks  the fault kinds the run injected and the checks it ran (`fault.*`,
 *                    `phase.*`, `check.*`, `workload.*`)
 *
 * `EXPECTED_MARKS` is the catalogue a long run must cover: every core mark on some plane, and
 * every simulator mark. Per-plane counts are reported beside it.
 */
import { MARKS } from '@shoal/consensus';

export type Plane = 'metadata' | 'partition';

export interface MarkInfo {
  readonly name: string;
  readonly what: string;
}

const SIMULATOR_MARKS: readonly MarkInfo[] = [
  { name: 'fault.crash_power', what: 'a replica lost power (unsynced writes lost)' },
  { name: 'fault.crash_process', what: 'a replica process was killed (page cache kept)' },
  { name: 'fault.crash_while_other_recovers', what: 'a crash while another replica was down or still catching up' },
  { name: 'fault.crash_of_recovering', what: 'a restarted replica crashed again before it caught up' },
  { name: 'fault.crash_during_repair', what: 'a crash of a replica repairing its journal (normal, commit_min < commit_max)' },
  { name: 'fault.crash_during_transfer', what: 'a crash of a replica in the middle of a state transfer' },
  { name: 'fault.rolling_restart', what: 'every replica restarted in turn' },
  { name: 'fault.rolling_restart_overlap', what: 'a rolling restart killed the next replica before the previous one caught up' },
  { name: 'fault.cluster_kill', what: 'every replica killed at once (only when no kill can lose an acknowledged op)' },
  { name: 'fault.process_pause', what: 'a replica process paused (SIGSTOP, GC): it neither ran nor read for a while' },
  { name: 'fault.partition_short', what: 'a network partition that healed within 2,000 ticks' },
  { name: 'fault.partition_long', what: 'a network partition held for at least 2,000 ticks' },
  { name: 'fault.journal_lost', what: 'a down replica lost its partition journals (they abstain, then vote blind)' },
  { name: 'fault.isolate_after_restart', what: 'a replica isolated for long while a restarted one was catching up' },
  { name: 'fault.view_change_stalled', what: 'a group stayed in view change on a replica for 2,000 ticks' },
  { name: 'fault.peer_queue_overrun', what: 'a replica dropped a frame at a full per-peer queue (peer_queue_capacity)' },
  { name: 'fault.link_eviction', what: 'a bounded in-flight link evicted a random packet' },
  { name: 'fault.power_loss_partition_data', what: 'a power loss discarded unsynced partition-plane bytes' },
  { name: 'fault.torn_partition_write', what: 'a power loss tore or reordered a partition-plane write (faulty disk)' },
  { name: 'fault.disk_write_error', what: 'a faulty disk failed writes (EIO / ENOSPC)' },
  { name: 'fault.disk_error_exit', what: 'a driver stopped on a disk error and its process exited (then restarted)' },
  { name: 'fault.disk_read_fault', what: 'a faulty disk flipped bits on a read' },
  { name: 'phase.degraded_liveness', what: 'f replicas permanently down: the rest made progress and converged' },
  { name: 'phase.degraded_then_restored', what: 'the f downed replicas came back after the degraded phase and caught up' },
  { name: 'check.consumer_offsets', what: 'acknowledged consumer-offset writes were checked against every replica' },
  { name: 'check.dvc_acks', what: 'DoViewChanges were checked against the ops their senders acknowledged (ack-oracle.ts)' },
  { name: 'check.liveness_beyond_budget', what: 'a run stuck while more replicas than the loss budget were lossy: convergence not owed' },
  { name: 'workload.groups_64', what: 'a run with at least 64 partition groups' },
];

/** Marks a long run must reach: every core mark (on either plane) and every simulator mark. */
export const EXPECTED_MARKS: readonly MarkInfo[] = [
  ...MARKS.map((m) => ({ name: `core.${m}`, what: `core mark ${m} (docs/internals-consensus-core.md)` })),
  ...SIMULATOR_MARKS,
];

/** The core mark an `event` effect reports (`mark` events: the detail starts with the mark), or null. */
export function coreMarkOfEvent(name: string, detail: string): string | null {
  if (name !== 'mark') return null;
  const mark = detail.split(' ', 1)[0] ?? '';
  return mark === '' ? null : mark;
}

/** One run's mark counts. */
export class Marks {
  readonly #counts = new Map<string, number>();

  hit(name: string, times = 1): void {
    this.#counts.set(name, (this.#counts.get(name) ?? 0) + times);
  }

  has(name: string): boolean {
    return this.#counts.has(name);
  }

  count(name: string): number {
    return this.#counts.get(name) ?? 0;
  }

  /** A core event of `plane`: a `mark` is counted for the plane and for either plane. Returns the mark or null. */
  event(plane: Plane, name: string, detail: string): string | null {
    const mark = coreMarkOfEvent(name, detail);
    if (mark === null) return null;
    this.hit(`core.${mark}`);
    this.hit(`core.${mark}@${plane}`);
    return mark;
  }

  /** Name → count, sorted by name (a plain object: it crosses worker threads). */
  toRecord(): Record<string, number> {
    const out: Record<string, number> = {};
    for (const name of [...this.#counts.keys()].sort()) out[name] = this.#counts.get(name) as number;
    return out;
  }
}

/** Seeds that reached each mark, over many runs. */
export class MarkTally {
  readonly seeds = new Map<string, number>();
  runs = 0;

  add(marks: Readonly<Record<string, number>>): void {
    this.runs++;
    for (const name of Object.keys(marks)) this.seeds.set(name, (this.seeds.get(name) ?? 0) + 1);
  }

  merge(other: { readonly runs: number; readonly seeds: Readonly<Record<string, number>> }): void {
    this.runs += other.runs;
    for (const [name, n] of Object.entries(other.seeds)) this.seeds.set(name, (this.seeds.get(name) ?? 0) + n);
  }

  /** Expected marks no seed reached. */
  missing(expected: readonly MarkInfo[] = EXPECTED_MARKS): string[] {
    return expected.filter((m) => !this.seeds.has(m.name)).map((m) => m.name);
  }

  toJSON(): { runs: number; seeds: Record<string, number> } {
    const seeds: Record<string, number> = {};
    for (const name of [...this.seeds.keys()].sort()) seeds[name] = this.seeds.get(name) as number;
    return { runs: this.runs, seeds };
  }

  /** The table the runner prints: every expected mark (zeros included), then any others. */
  format(expected: readonly MarkInfo[] = EXPECTED_MARKS): string {
    const names = [...expected.map((m) => m.name), ...[...this.seeds.keys()].filter((n) => !expected.some((m) => m.name === n)).sort()];
    const width = Math.max(...names.map((n) => n.length));
    const lines = names.map((n) => {
      const seeds = this.seeds.get(n) ?? 0;
      return `  ${n.padEnd(width)}  ${String(seeds).padStart(7)}${seeds === 0 ? '  <- never reached' : ''}`;
    });
    return `coverage marks (seeds that reached each, of ${this.runs}):\n${lines.join('\n')}`;
  }
}
