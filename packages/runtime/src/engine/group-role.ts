/**
 * Where a consensus group stands on this replica, as the host needs it per request: may a write
 * be admitted here, and which replica is the group's primary. Read from the replica's role
 * without allocating (`driver.status` lists the journal's ops; too costly per request).
 *
 * | the group on this replica                         | a write here gets                            |
 * |---------------------------------------------------|----------------------------------------------|
 * | normal, primary by index, not ceded               | the core (admits, or 57 while catching up)   |
 * | normal, another replica is primary                | 58 TransientNotAccepted: nothing happened,   |
 * |                                                   | retry on the primary (the SDK redirects)     |
 * | view change, recovering (probing), ceded          | the core: 57 TransientNotCommitted (retry)   |
 */
import { ErrorCode } from '@shoal/protocol';
import type { GroupDriver } from '@shoal/replica';

/** A primary index meaning "none known here" (view change, probing). */
export const NO_PRIMARY = 0xff;

export interface GroupRole {
  readonly view: number;
  /** The primary of the view while this replica is in status normal, else NO_PRIMARY. */
  readonly primary: number;
  /** This replica is the group's acting primary. */
  readonly acting: boolean;
}

export function groupRole(driver: GroupDriver): GroupRole {
  const role = driver.replica.role;
  return { view: role.view, primary: role.normal ? role.primaryIndex : NO_PRIMARY, acting: role.actingPrimary };
}

/**
 * 58 when the group is in status normal with another replica as its primary (the write must go
 * there); 0 otherwise: the core decides (it proposes, or answers 57 while this replica changes
 * view, recovers or catches up).
 */
export function notPrimaryCode(driver: GroupDriver): number {
  const role = driver.replica.role;
  return role.normal && !role.primaryByIndex && driver.fatal === null ? ErrorCode.TransientNotAccepted : 0;
}
