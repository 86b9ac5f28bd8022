/**
 * Quorum sizes of §4.9, as pure functions of the replica count n:
 *
 *   n   replication  view change  nack  f (SVCs from others before DVC)
 *   1        1            1         1     0
 *   2        2            2         1     0
 *   3        2            2         2     1
 *   4        2            3         3     1
 *   5        3            3         3     2
 *   6        3            4         4     2
 *   7        3            5         5     3
 *   8        3            6         6     3
 *
 * Flexible quorums: replication is capped at 3, so the view-change quorum grows instead; any
 * replication quorum intersects any view-change quorum (replication + viewChange > n).
 */
import { assert } from '@shoal/stdx';
import { REPLICAS_MAX } from './types.js';

export interface Quorums {
  readonly replication: number;
  readonly viewChange: number;
  readonly nack: number;
  /** StartViewChanges from other replicas needed before sending our DoViewChange. */
  readonly svcFromOthers: number;
}

export function quorums(n: number): Quorums {
  assert(Number.isInteger(n) && n >= 1 && n <= REPLICAS_MAX, `replica count ${n} out of 1..${REPLICAS_MAX}`);
  const replication = n === 2 ? 2 : Math.min(Math.ceil(n / 2), 3);
  const viewChange = n === 2 ? 2 : n - replication + 1;
  const nack = n - replication + 1;
  const svcFromOthers = Math.floor((n - 1) / 2);
  // Intersection properties that safety rests on.
  assert(replication + viewChange > n, 'replication and view-change quorums must intersect');
  assert(replication + nack > n, 'a nack quorum must include a member of every replication quorum');
  assert(viewChange <= n && replication <= n && nack >= 1, 'quorum larger than the roster');
  return Object.freeze({ replication, viewChange, nack, svcFromOthers });
}

/** Number of set bits in a replica bitmask (≤ 32 replicas, so a u32). */
export function countBits(mask: number): number {
  let v = mask >>> 0;
  let count = 0;
  while (v !== 0) {
    v &= v - 1;
    count++;
  }
  return count;
}

export function maskHas(mask: number, replica: number): boolean {
  return ((mask >>> replica) & 1) === 1;
}

export function maskWith(mask: number, replica: number): number {
  return (mask | (1 << replica)) >>> 0;
}
