/**
 * Fast failover (issue 12 item 9): a backup learns that its primary's process died from the
 * replica link, not from `heartbeat_timeout`. A process that dies (kill -9, a crash) closes its
 * sockets, so its peers see the link drop at once; the lower id re-dials at once (dialer.ts).
 * When the link to a group's primary stays down for half a `commit_broadcast_interval` (250 ms by
 * default: the lower id re-dials a dropped link at once, so a link that merely flapped is back
 * within milliseconds), the group's core is told (`Replica.primaryUnreachable`) and starts the
 * view change the heartbeat timeout would start 5 s later. A link that flaps and comes back
 * within the grace changes nothing; one that stays down longer costs one view change, never
 * safety. Measured (bench --failover): peer down ~30 ms after the kill, the view started ~15 ms
 * after the hint; the rest of the failover is the first request's own latency under load.
 *
 * Only a drop counts: a link that was never up (this node booted while the peer was down) is
 * left to the heartbeat timeout. Each group is told at most once per drop of a peer's link, so a
 * node cut off from everyone does not start a view change per view on the same evidence.
 *
 * Link state comes from the status table (`replicaOwner`: which thread holds the peer's link, -1
 * when none), which every thread reads; one watch per thread, ticked with the drivers.
 */
import type { ReplicaRole } from '@shoal/consensus';
import type { ShoalConfig } from '../config/index.js';
import type { StatusTable } from '../status/status-table.js';

export interface PrimaryLinkWatchOptions {
  readonly status: StatusTable;
  readonly self: number;
  readonly replicaCount: number;
  /** How long a dropped link to the primary must stay down (ticks). */
  readonly graceTicks: number;
}

export class PrimaryLinkWatch {
  readonly #o: PrimaryLinkWatchOptions;
  #ticks = 0;
  readonly #up: boolean[];
  /** Per peer: the tick its link dropped, or null while up (or never up). */
  readonly #downSince: (number | null)[];
  /** Per group: the drop (its tick) the group was already told about. */
  readonly #told = new Map<bigint, number>();

  constructor(options: PrimaryLinkWatchOptions) {
    this.#o = options;
    this.#up = Array.from({ length: options.replicaCount }, () => false);
    this.#downSince = Array.from({ length: options.replicaCount }, () => null);
  }

  /** Once per tick, before `check`: reads every peer's link state. */
  tick(): void {
    this.#ticks += 1;
    for (let peer = 0; peer < this.#o.replicaCount; peer++) {
      if (peer === this.#o.self) continue;
      const up = this.#o.status.replicaOwner(peer) >= 0;
      if (up) this.#downSince[peer] = null;
      else if (this.#up[peer] === true) this.#downSince[peer] = this.#ticks;
      this.#up[peer] = up;
    }
  }

  /**
   * Hints the group (its driver's `primaryUnreachable`) when its primary's link has been down
   * the grace. True: a view change started.
   */
  check(group: bigint, driver: { readonly replica: { readonly role: ReplicaRole }; primaryUnreachable(): boolean }): boolean {
    const role = driver.replica.role;
    if (!role.normal || role.actingPrimary) return false;
    const primary = role.primaryIndex;
    if (primary === this.#o.self) return false;
    const since = this.#downSince[primary] ?? null;
    if (since === null || this.#ticks - since < this.#o.graceTicks || this.#told.get(group) === since) return false;
    this.#told.set(group, since);
    return driver.primaryUnreachable();
  }

  /** A group left this thread: forget it. */
  forget(group: bigint): void {
    this.#told.delete(group);
  }
}

/** The consensus event counted (shoal_consensus_events_total) when the hint started a view change. */
export const PRIMARY_UNREACHABLE_EVENT = 'primary_unreachable';

/** The grace, in commit broadcast intervals. */
export const PRIMARY_LINK_GRACE_BROADCASTS = 0.5;

/** The watch for this node, graced by half a `commit_broadcast_interval`. */
export function primaryLinkWatch(config: ShoalConfig, status: StatusTable): PrimaryLinkWatch {
  const graceTicks = Math.max(1, Math.round(config.cluster.commitBroadcastIntervalTicks * PRIMARY_LINK_GRACE_BROADCASTS));
  return new PrimaryLinkWatch({ status, self: config.node.replicaId, replicaCount: config.node.replicaCount, graceTicks });
}
