/**
 * Balanced leadership (docs/cluster.md "Balanced leadership"): which replica a partition group
 * prefers as its primary, the same on every node (a function of the group id and the roster
 * size only), so a topic's partitions are led round-robin by the nodes from the moment they are
 * created, and no wire byte changes: a group simply starts in the view its preferred replica
 * leads (`view % n` is the primary, as always).
 *
 *   preferred(stream << 32 | topic << 20 | partition, n) = (stream + topic + partition) mod n
 *
 * Consecutive partitions of a topic go to consecutive replicas (3 partitions on 3 nodes: one
 * each), and each topic starts one replica further than the previous one of its stream.
 */
import { unpackPartitionGroup } from '@shoal/protocol';

export function preferredPrimary(group: bigint, replicaCount: number): number {
  if (replicaCount <= 1) return 0;
  const unpacked = unpackPartitionGroup(group);
  if (!unpacked.ok) return 0;
  const { stream, topic, partition } = unpacked.value;
  return (stream + topic + partition) % replicaCount;
}

/**
 * Ticks the preferred replica must stay caught up before its group is handed back (5 s at
 * 10 ms): a replica that just returned, or flaps, does not pull its groups back and forth.
 */
export const HAND_BACK_HOLD_TICKS = 500;

/** What the hand-back policy needs of a replica (consensus `Replica`). */
export interface HandBackReplica {
  canHandBack(target: number): boolean;
  handBack(target: number): boolean;
}

/**
 * After a failover the survivors lead the dead node's groups. Once it is back, each group's
 * acting primary hands the group back to its preferred replica when that replica has been caught
 * up (consensus hand-back.ts `canHandBack`) for `HAND_BACK_HOLD_TICKS` ticks in a row: the
 * primary drains its pipeline and starts a view change to the first view the preferred replica
 * leads. Only ever towards the preferred replica, so leadership converges and never ping-pongs.
 */
export class HandBackPolicy {
  readonly #preferred: number;
  readonly #holdTicks: number;
  #caughtUpTicks = 0;

  constructor(preferred: number, holdTicks = HAND_BACK_HOLD_TICKS) {
    this.#preferred = preferred;
    this.#holdTicks = holdTicks;
  }

  /**
   * One driver tick (after the core's). True when it started a hand-back. `linked`: the host's
   * link to a replica is up; a down link resets the hold like a replica that is not caught up.
   */
  tick(replica: HandBackReplica, linked: (replica: number) => boolean = () => true): boolean {
    if (!linked(this.#preferred) || !replica.canHandBack(this.#preferred)) {
      this.#caughtUpTicks = 0;
      return false;
    }
    this.#caughtUpTicks += 1;
    if (this.#caughtUpTicks < this.#holdTicks) return false;
    this.#caughtUpTicks = 0;
    return replica.handBack(this.#preferred);
  }
}
