/**
 * `/ready`: can this node serve clients now? Read from the status table (no worker is asked),
 * so a probe stays cheap and answers even while the workers are busy.
 *
 * | check            | passes when                                                                  |
 * |------------------|------------------------------------------------------------------------------|
 * | `serving`        | every worker started and the node logged `ready`                             |
 * | `metadata_normal`| the local metadata replica is in status normal (not in a view change, not recovering) |
 * | `primary`        | the metadata group has a primary this node reaches: a single node is its own; a cluster primary holds links to enough peers for a quorum; a backup holds a link to the primary |
 * | `caught_up`      | the local metadata replica applied every op it knows committed, transfers no state, has not ceded |
 *
 * A node of three left alone fails `primary` (as primary it lacks a quorum; as a backup it has no
 * link to the primary, and soon leaves status normal for a view change that cannot complete).
 */
import { quorums } from '@shoal/consensus';
import type { MetadataStatusName } from '../status/status-table.js';

export interface ReadinessInput {
  readonly serving: boolean;
  readonly replicaCount: number;
  readonly self: number;
  readonly metadata: { readonly status: MetadataStatusName; readonly primary: number };
  readonly caughtUp: boolean;
  /** A replica link to `replica` is open on some thread of this node. */
  readonly linkUp: (replica: number) => boolean;
}

export interface Readiness {
  readonly ready: boolean;
  /** The checks that failed, by name (empty when ready). */
  readonly failed: readonly string[];
  /** The metadata primary (replica id) this node knows, or null. */
  readonly primary: number | null;
}

export function readiness(input: ReadinessInput): Readiness {
  const failed: string[] = [];
  if (!input.serving) failed.push('serving');
  const normal = input.metadata.status === 'normal';
  if (!normal) failed.push('metadata_normal');
  const primary = normal ? input.metadata.primary : null;
  if (!primaryReachable(input, primary)) failed.push('primary');
  if (!input.caughtUp) failed.push('caught_up');
  return { ready: failed.length === 0, failed, primary };
}

function primaryReachable(input: ReadinessInput, primary: number | null): boolean {
  if (primary === null) return false;
  if (input.replicaCount === 1) return primary === input.self;
  if (primary !== input.self) return input.linkUp(primary);
  // The primary commits with a replication quorum: itself and quorum - 1 peers.
  let peers = 0;
  for (let r = 0; r < input.replicaCount; r++) if (r !== input.self && input.linkUp(r)) peers++;
  return peers + 1 >= quorums(input.replicaCount).replication;
}
