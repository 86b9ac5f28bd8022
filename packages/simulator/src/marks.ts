/**
 * Coverage marks (TigerBeetle-style): named points a run reached. A run counts how often it hit
 * each mark; the runner reports, over N seeds, how many seeds reached each one, so a fault mix
 * that stops reaching a fallback path shows up as a zero instead of as silence.
 *
 *   core marks       the consensus core's fallback paths, named from the core's `event` effects
 *                    (`coreMarksOfEvent`), one mark per plane: `core.vote_blind@partition`
 *   driver marks     the drivers' own events (superblock / checkpoint failures, refused offers)
 *   simulator marks  the fault kinds the run injected and the checks it ran (`fault.*`,
 *                    `phase.*`, `check.*`, `workload.*`)
 *
 * `EXPECTED_MARKS` is the catalogue a long run must cover; a mark outside it is still counted
 * (a new event name shows up in the summary as soon as the core emits it).
 */

export type Plane = 'metadata' | 'partition';

export interface MarkInfo {
  readonly name: string;
  readonly what: string;
}

/** Core fallback paths, per plane (suffix `@metadata` / `@partition`). */
const CORE_PATHS: readonly MarkInfo[] = [
  { name: 'core.view_change', what: 'a view change started (normal heartbeat timeout or a newer view seen)' },
  { name: 'core.view_change_escalate', what: 'a view change timed out (status timeout) and escalated to the next view' },
  { name: 'core.vote_abstain', what: 'a replica with an incomplete journal abstained from a view change' },
  { name: 'core.vote_blind', what: 'abstained two status timeouts: voting blind above the commit point' },
  { name: 'core.vote_short_log', what: 'blind vote did not finish a view: voting with the incomplete (short) journal' },
  { name: 'core.journal_complete', what: 'a restarted replica caught up and votes normally again' },
  { name: 'core.merge_awaiting_repair', what: 'the DVC merge waited for a canonical copy of an op' },
  { name: 'core.merge_deadlocked', what: 'the DVC merge found no way forward with every DVC in' },
  { name: 'core.merge_refused', what: 'the merged uncommitted suffix exceeded the pipeline' },
  { name: 'core.view_body_missing', what: 'a new primary waited for the body of an op nobody had sent' },
  { name: 'core.view_start', what: 'a primary started a view from the merged log' },
  { name: 'core.view_adopt', what: 'a backup adopted a StartView' },
  { name: 'core.probe_exhausted', what: 'a restarted replica probed for a view without an answer and elected' },
  { name: 'core.truncate_reconcile', what: 'journal truncated to reconcile with a StartView' },
  { name: 'core.truncate_integrity', what: 'journal truncated at a bogus (non-canonical) entry' },
  { name: 'core.truncate_rollback', what: 'journal truncated: rollback of an uncommitted suffix' },
  { name: 'core.truncate_install', what: 'journal truncated by a state-transfer install' },
  { name: 'core.repair_rotate', what: 'repair source evicted the range: rotated to another source' },
  { name: 'core.repair_to_transfer', what: 'repair range evicted everywhere asked: fell back to state transfer' },
  { name: 'core.transfer_request', what: 'a state transfer was requested' },
  { name: 'core.transfer_install', what: 'a state-transfer snapshot was installed' },
  { name: 'core.transfer_install_ahead', what: 'an installed snapshot was ahead of the local journal' },
  { name: 'core.transfer_abandoned', what: 'a state transfer was abandoned for journal repair' },
  { name: 'core.transfer_restart', what: 'a state transfer failed a step and restarted' },
];

/** Driver events (either plane). */
const DRIVER_PATHS: readonly MarkInfo[] = [
  { name: 'driver.superblock_write_failed', what: 'a superblock write failed (faulty disk)' },
];

const SIMULATOR_MARKS: readonly MarkInfo[] = [
  { name: 'fault.crash_power', what: 'a replica lost power (unsynced writes lost)' },
  { name: 'fault.crash_process', what: 'a replica process was killed (page cache kept)' },
  { name: 'fault.crash_while_other_recovers', what: 'a crash while another replica was down or still catching up' },
  { name: 'fault.crash_of_recovering', what: 'a restarted replica crashed again before it caught up' },
  { name: 'fault.crash_during_repair', what: 'a crash of a replica repairing its journal (commit_min < commit_max)' },
  { name: 'fault.crash_during_transfer', what: 'a crash of a replica in the middle of a state transfer' },
  { name: 'fault.rolling_restart', what: 'every replica restarted in turn' },
  { name: 'fault.rolling_restart_overlap', what: 'a rolling restart killed the next replica before the previous one caught up' },
  { name: 'fault.partition_short', what: 'a network partition that healed within 2,000 ticks' },
  { name: 'fault.partition_long', what: 'a network partition held for at least 2,000 ticks' },
  { name: 'fault.isolate_after_restart', what: 'a replica isolated for long while a restarted one was catching up' },
  { name: 'fault.view_change_stalled', what: 'a group stayed in view change on a replica for 2,000 ticks' },
  { name: 'fault.peer_queue_overrun', what: 'a replica dropped a frame at a full per-peer queue (peer_queue_capacity)' },
  { name: 'fault.link_eviction', what: 'a bounded in-flight link evicted a random packet' },
  { name: 'fault.power_loss_partition_data', what: 'a power loss discarded unsynced partition-plane bytes' },
  { name: 'fault.torn_partition_write', what: 'a power loss tore or reordered a partition-plane write (faulty disk)' },
  { name: 'fault.disk_read_fault', what: 'a faulty disk flipped bits on a read' },
  { name: 'phase.degraded_liveness', what: 'f replicas permanently down: the rest made progress and converged' },
  { name: 'phase.degraded_then_restored', what: 'the f downed replicas came back after the degraded phase and caught up' },
  { name: 'check.consumer_offsets', what: 'acknowledged consumer-offset writes were checked against every replica' },
  { name: 'workload.groups_64', what: 'a run with at least 64 partition groups' },
];

function perPlane(infos: readonly MarkInfo[]): MarkInfo[] {
  const out: MarkInfo[] = [];
  for (const plane of ['metadata', 'partition'] as const) for (const i of infos) out.push({ name: `${i.name}@${plane}`, what: i.what });
  return out;
}

// Paths only one plane can reach today (keep in step with the core; a mark that starts
// showing on the other plane is counted anyway).
const PLANE_SPECIFIC: ReadonlyMap<string, Plane> = new Map<string, Plane>([
  ['core.vote_abstain', 'partition'],
  ['core.vote_blind', 'partition'],
  ['core.vote_short_log', 'partition'],
  ['core.journal_complete', 'partition'],
]);

/**
 * Marks a long run must reach. Some core paths are only reachable on one plane (state-transfer
 * `ahead` installs replace the metadata snapshot; the blind votes need the partition plane's
 * memory journal): those are listed once, for that plane.
 */
export const EXPECTED_MARKS: readonly MarkInfo[] = [
  ...perPlane(CORE_PATHS.filter((m) => !PLANE_SPECIFIC.has(m.name))),
  ...CORE_PATHS.filter((m) => PLANE_SPECIFIC.has(m.name)).map((m) => ({ name: `${m.name}@${PLANE_SPECIFIC.get(m.name) as Plane}`, what: m.what })),
  ...DRIVER_PATHS,
  ...SIMULATOR_MARKS,
];


/**
 * The mark a core `event` effect stands for, or null. Interim: the core names its fallback
 * paths only through free-text events today; this is the one place that reads them.
 */
export function coreMarkOfEvent(name: string, detail: string): string | null {
  switch (name) {
    case 'view_change':
      if (detail.startsWith('enter view')) return 'core.view_change';
      if (detail.startsWith('escalate')) return 'core.view_change_escalate';
      if (detail.includes('no body source')) return 'core.view_body_missing';
      return null;
    case 'journal_incomplete_vote':
      if (detail.includes('incomplete journal')) return 'core.vote_short_log';
      if (detail.includes('voting blind')) return 'core.vote_blind';
      return null;
    case 'journal_complete': return 'core.journal_complete';
    case 'merge':
      if (detail.startsWith('awaiting_repair')) return 'core.merge_awaiting_repair';
      if (detail.startsWith('deadlocked')) return 'core.merge_deadlocked';
      if (detail.startsWith('refused')) return 'core.merge_refused';
      return null;
    case 'view_start': return 'core.view_start';
    case 'view_adopt': return 'core.view_adopt';
    case 'probe': return detail.startsWith('exhausted') ? 'core.probe_exhausted' : null;
    case 'journal_truncated': {
      const reason = detail.split(' ', 1)[0];
      return reason === 'reconcile' || reason === 'integrity' || reason === 'rollback' || reason === 'install' ? `core.truncate_${reason}` : null;
    }
    case 'repair':
      if (detail.includes('rotating')) return 'core.repair_rotate';
      if (detail.includes('state transfer')) return 'core.repair_to_transfer';
      return null;
    case 'state_transfer':
      if (detail.startsWith('request')) return 'core.transfer_request';
      if (detail.startsWith('installed')) return detail.includes('ahead=true') ? 'core.transfer_install_ahead' : 'core.transfer_install';
      if (detail.startsWith('abandoned')) return 'core.transfer_abandoned';
      if (detail.includes('restarting')) return 'core.transfer_restart';
      return null;
    case 'superblock_write_failed': return 'driver.superblock_write_failed';
    default:
      return null;
  }
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

  /** A core or driver event of `plane`: counted under its mark when it names one. */
  event(plane: Plane, name: string, detail: string): void {
    const mark = coreMarkOfEvent(name, detail);
    if (mark === null) return;
    this.hit(mark.startsWith('driver.') ? mark : `${mark}@${plane}`);
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
