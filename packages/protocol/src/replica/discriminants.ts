/**
 * One-byte enums carried inside replica-plane headers. Each must hold a declared value or the
 * header is not a valid bit pattern (replication-semantics.md §1.2 step 3).
 */

/**
 * `Operation` (§1.1) and `EvictionReason` are one registry each, shared with the client plane
 * (client/operation.ts, client/eviction-reason.ts); the replica plane adds only the plane tests
 * its routing needs.
 */
import { isOperation } from '../client/operation.js';

export { Operation, isOperation } from '../client/operation.js';
export { EvictionReason, EVICTION_REASON_MAX } from '../client/eviction-reason.js';

/** Metadata-plane operations (§1.1): 1, 3, 64..68, 128..137, 139..149. 138 is neither plane. */
export function isMetadataOperation(value: number): boolean {
  return value === 1 || value === 3 || (value >= 64 && value <= 68) || (value >= 128 && value <= 149 && value !== 138);
}

/** Partition-plane operations (§1.1): 160 and above. */
export function isPartitionOperation(value: number): boolean {
  return value >= 160 && isOperation(value);
}

/** `ForwardRegisterResultHeader.outcome` at 255 (cluster.mdx "Session forwarding"). */
export const ForwardRegisterOutcome = Object.freeze({
  Ok: 0,
  NotPrimary: 1,
  NotCaughtUp: 2,
  PipelineFull: 3,
  InProgress: 4,
  Canceled: 5,
  ClientIdOwnedByAnotherUser: 6,
} as const);
export type ForwardRegisterOutcome = (typeof ForwardRegisterOutcome)[keyof typeof ForwardRegisterOutcome];
export const FORWARD_REGISTER_OUTCOME_MAX = 6;

/** `ForwardLogoutResultHeader.outcome` at 255. */
export const ForwardLogoutOutcome = Object.freeze({
  Ok: 0,
  NotPrimary: 1,
  PipelineFull: 2,
  InProgress: 3,
  Canceled: 4,
} as const);
export type ForwardLogoutOutcome = (typeof ForwardLogoutOutcome)[keyof typeof ForwardLogoutOutcome];
export const FORWARD_LOGOUT_OUTCOME_MAX = 4;
