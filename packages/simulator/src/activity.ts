/**
 * What a simulated replica is busy with, for the fault scheduler's targeted crashes and the
 * crash marks (faults.ts): a state transfer (the core's transfer stage is not idle: a restarted
 * replica probing for a view is in it too), or journal repair (normal status, behind its
 * commit_max: it is fetching committed ops from a peer).
 */
import { METADATA_GROUP_ID, type ReplicaRole } from '@shoal/consensus';
import type { SimNode } from './node.js';

export type Activity = 'repair' | 'transfer';

function activityOf(role: ReplicaRole): Activity | null {
  if (role.transferring) return 'transfer';
  return role.normal && role.commitMin < role.commitMax ? 'repair' : null;
}

/** Every activity of `node` over its groups (transferring one group and repairing another: both). */
export function activities(node: SimNode): { readonly repair: boolean; readonly transfer: boolean } {
  let repair = false;
  let transfer = false;
  if (node.up && node.metadata !== null) {
    for (const role of [node.metadata.replica.role, ...[...node.partitions.values()].map((e) => e.driver.replica.role)]) {
      const a = activityOf(role);
      if (a === 'repair') repair = true;
      if (a === 'transfer') transfer = true;
    }
  }
  return { repair, transfer };
}

/**
 * Is `node` busy with `activity` in a group that another live replica leads (acting primary)?
 * Only then is a repair or a transfer under way: a restarted replica waiting for a view (no
 * primary up, or a view change) "transfers" nothing, and crashing it again and again is a crash
 * storm that keeps the cluster from ever reaching a view in which anything is repaired.
 */
export function busyWithLiveSource(node: SimNode, nodes: readonly SimNode[], activity: Activity): boolean {
  if (!node.up || node.metadata === null) return false;
  const leads = (group: bigint): boolean => nodes.some((other) => {
    if (other === node || !other.up || other.metadata === null) return false;
    const driver = group === METADATA_GROUP_ID ? other.metadata : other.partitions.get(group)?.driver;
    return driver !== undefined && driver.replica.role.actingPrimary;
  });
  if (activityOf(node.metadata.replica.role) === activity && leads(METADATA_GROUP_ID)) return true;
  for (const [group, entry] of node.partitions) if (activityOf(entry.driver.replica.role) === activity && leads(group)) return true;
  return false;
}
