/**
 * Core vocabulary: branded indices, statuses, the plane description, and the limits.
 *
 * Ops are u64 on the wire; inside the core they are `number` (safe integers: frames whose op or
 * commit exceed Number.MAX_SAFE_INTEGER are dropped by validation). Views and replica indices are
 * branded because mixing them with ops is the classic VSR slip; `Op` stays a plain alias so
 * arithmetic on the log stays readable.
 */
import { assert } from '@shoal/stdx';

/** A log position (1-based; 0 = nothing). */
export type Op = number;
/** A view number (u32). */
export type View = number & { readonly __brand: 'View' };
/** A replica index in 0..replicaCount-1. */
export type ReplicaIndex = number & { readonly __brand: 'ReplicaIndex' };
/** The host's correlation token for a client connection/request (opaque to the core). */
export type ClientToken = number;

export function asView(value: number): View {
  assert(Number.isInteger(value) && value >= 0 && value <= 0xffff_ffff, `view ${value} is not a u32`);
  return value as View;
}

export function asReplica(value: number, replicaCount: number): ReplicaIndex {
  assert(Number.isInteger(value) && value >= 0 && value < replicaCount, `replica ${value} out of 0..${replicaCount - 1}`);
  return value as ReplicaIndex;
}

export function asOp(value: number): Op {
  assert(Number.isSafeInteger(value) && value >= 0, `op ${value} is not a safe non-negative integer`);
  return value;
}

/** §4.1 status. */
export type Status = 'normal' | 'view_change' | 'recovering';

/** §4.1 state-transfer stages; legal transitions in state-transfer.ts. */
export type TransferStage = 'idle' | 'awaiting_target' | 'fetching' | 'installing';

/**
 * The two planes differ only by this data (never by copies of code). Both journal every prepare
 * through the host (`journal_append`: durable, or at least handed to the OS, before the core
 * vouches for it) and recover it at boot.
 * - metadata: group 1<<63, a slot WAL drained by state-machine checkpoints and replayed at boot
 *   (`checkpoints`), body seal, client table with reply cache (exactly-once), random non-zero
 *   incarnation per boot;
 * - partition: packed key, a journal file compacted as commits reach the segments (the state
 *   comes back from the segments, the journal above them), body seal zero, no client table
 *   (at-least-once), incarnation 0 (disables the probe guard of §5.7 step 3).
 */
export interface Plane {
  readonly kind: 'metadata' | 'partition';
  readonly group: bigint;
  /** The journal is a slot WAL drained by checkpoints and replayed at boot (metadata). */
  readonly checkpoints: boolean;
  readonly bodySealed: boolean;
  readonly clientTable: boolean;
  readonly incarnation: bigint;
}

export const METADATA_GROUP_ID = 1n << 63n;

/** Metadata plane: `incarnation` must be a random non-zero u128 drawn by the host per boot. */
export function metadataPlane(incarnation: bigint): Plane {
  assert(incarnation > 0n && incarnation < 1n << 128n, 'metadata incarnation must be a non-zero u128');
  return Object.freeze({
    kind: 'metadata',
    group: METADATA_GROUP_ID,
    checkpoints: true,
    bodySealed: true,
    clientTable: true,
    incarnation,
  });
}

export function partitionPlane(group: bigint): Plane {
  assert(group >= 0n && group < 1n << 63n, 'partition group must be a packed key below 1<<63');
  return Object.freeze({
    kind: 'partition',
    group,
    checkpoints: false,
    bodySealed: false,
    clientTable: false,
    incarnation: 0n,
  });
}

/** Hard ceiling of the roster (§4.9: the DVC store is sized for 32). */
export const REPLICAS_MAX = 32;
/** A DoViewChange / StartView suffix holds at most 128 entries (§5.3). */
export const SUFFIX_MAX = 128;
/** Prepare queue depth ceiling: a DVC must describe the whole pipeline (§4.3). */
export const PREPARE_QUEUE_DEPTH_MAX = 127;
