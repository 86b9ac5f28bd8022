/**
 * The state-machine port: how the consensus core reaches the metadata or partition state machine.
 * Synchronous and pure (no I/O, clocks or randomness); the core calls it at five moments.
 *
 *   moment                     who            method
 *   (a) build a prepare        primary        prepare(request, context)   → body (maybe rewritten) | reject
 *   (b) verify a live prepare  backup         verify(prepare)             → null | reason
 *   (c) bookkeeping            every replica  journaled(prepare, source) / truncated(fromOp)
 *   (d) apply a committed op   every replica  apply(prepare)              → reply payload bytes
 *   (e) client-table effects   metadata       logout(client)              (Register has none)
 *   (f) group commit           primary        combine(operation, bodies)  → one body + each one's share
 *                              primary        memberReply(payload, share) → one member's reply payload
 *
 * Rules the implementation must keep:
 * - `apply` is called exactly once per op, in op order, with commit_min + 1; it must be a pure
 *   function of (state, prepare) so every replica derives identical state and reply bytes.
 * - `prepare` is called only on the primary, for the next op; it may read the state as of the
 *   journal head (partition: the next dirty offset), which `journaled`/`truncated` keep exact.
 * - `journaled` is called for every prepare that enters the journal by any path (built by this
 *   primary, live from the primary, repaired, restored at boot), in the order they enter; ops can
 *   arrive out of order through repair. `truncated(fromOp)` drops every un-applied op >= fromOp.
 * - `verify` is the backup's admission check for a LIVE prepare only (repaired prepares are
 *   journaled as the serving replica stamped them, §6.2).
 * - Register (1) and Logout (3) never reach `prepare`/`apply`: the core's client table owns them;
 *   a committed Logout calls `logout(client)` so the metadata machine drops the client from
 *   consumer groups.
 */
import type { Op } from './types.js';

/** An admitted client request as the primary sees it at prepare build (§4.4). */
export interface PrepareInput {
  readonly operation: number;
  readonly body: Uint8Array;
  readonly client: bigint;
  readonly userId: number;
  /** The op this prepare will carry. */
  readonly op: Op;
  /** The prepare timestamp (µs, strictly increasing). */
  readonly timestamp: bigint;
}

export type PrepareVerdict =
  | {
      readonly ok: true;
      /** Usually the request's operation; metadata may rewrite 132 → 64 and 136 → 65. */
      readonly operation: number;
      /** The prepare body (may be a fresh buffer; the core copies it into the frame). */
      readonly body: Uint8Array;
    }
  | {
      readonly ok: false;
      /** Eviction reason sent to the client: 4 InvalidRequestOperation or 5 InvalidRequestBody. */
      readonly eviction: 4 | 5;
    };

/** A journaled prepare as the state machine sees it (header fields decoded, body in place). */
export interface PrepareRecord {
  readonly op: Op;
  readonly operation: number;
  readonly client: bigint;
  readonly request: bigint;
  readonly userId: number;
  readonly timestamp: bigint;
  readonly body: Uint8Array;
}

/**
 * (f) Several queued requests joined into one prepare body (before `prepare` stamps it):
 * `shares[i]` is what `memberReply` needs to carve request i's reply out of the op's reply
 * (partition: the index of its first message in the joined batch).
 */
export type CombineVerdict =
  | { readonly ok: true; readonly body: Uint8Array; readonly shares: readonly number[] }
  | { readonly ok: false };

export type JournalSource = 'primary' | 'live' | 'repair' | 'restore';

/** Where a live prepare lands in a backup's journal (`StateMachine.verify`). */
export type PreparePosition = 'append' | 'fill';

export interface StateMachine {
  /** (a) Primary: turn an admitted request into the prepare body, or reject it. */
  prepare(input: PrepareInput): PrepareVerdict;
  /**
   * (b) Backup: admission check of a live prepare before it is journaled (null = accept).
   * `append`: it extends the journal head; `fill`: it fills a hole below the head (journaled as a
   * repaired prepare is, keeping its stamp).
   */
  verify(prepare: PrepareRecord, position: PreparePosition): string | null;
  /** (c) A prepare entered the journal. */
  journaled(prepare: PrepareRecord, source: JournalSource): void;
  /** (c) Every un-applied journaled op >= fromOp was removed. */
  truncated(fromOp: Op): void;
  /** (d) Apply the committed op (exactly once, in op order); returns the reply payload bytes. */
  apply(prepare: PrepareRecord): Uint8Array;
  /** (e) Metadata: a committed Logout removed this client (drop it from consumer groups). */
  logout(client: bigint): void;
  /** (f) May requests of this operation be joined into one prepare? Absent: never. */
  combinable?(operation: number): boolean;
  /** (f) Joins the bodies (in queue order) into one prepare body, or refuses (each goes alone). */
  combine?(operation: number, bodies: readonly Uint8Array[]): CombineVerdict;
  /** (f) The reply payload of one joined request, from the op's reply payload and its share. */
  memberReply?(payload: Uint8Array, share: number): Uint8Array;
}
