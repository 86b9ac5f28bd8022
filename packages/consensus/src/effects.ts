/**
 * What the core asks its host to do. Every entry point appends to one bounded buffer; the host
 * drains it (`takeEffects()`) after every call and performs the effects in order. Frames inside
 * effects are IMMUTABLE: the core never touches them again, and a frame may be shared between
 * several effects and the core's journal (a journaled prepare is sent, written and retransmitted
 * without copies). The host must never mutate an effect's frame.
 *
 * Durable writes come back as completions (`onStorageDone`). The core never assumes a write is
 * done before its completion arrives, and it withholds every send that vouches for a write until
 * then (durability order, docs/internals-consensus-core.md).
 */
import { assert } from '@shoal/stdx';
import type { ManifestEntry, DecodedClientTableEntry } from '@shoal/protocol';
import type { ClientToken, Op, ReplicaIndex } from './types.js';

/** The durable VSR state the superblock records (§9.2 payload minus the host's identity fields). */
export interface DurableVsrState {
  readonly view: number;
  readonly logView: number;
  readonly commitMax: Op;
  /** Snapshot sequence number (metadata checkpoint op; 0 when none). */
  readonly checkpointOp: Op;
  /** widen(XXH3(snapshot payload)), 0 when none. */
  readonly checkpointChecksum: bigint;
  /**
   * The head op of log_view's log when this replica installed it (adopted or started): after a
   * restart its log in log_view ends at least there, even where its journal does not.
   */
  readonly logHead: Op;
}

/** Outcome of a forwarded or in-process session operation (§8), reported to the host. */
export type SessionOutcome =
  | 'ok'
  | 'not_primary'
  | 'not_caught_up'
  | 'pipeline_full'
  | 'in_progress'
  | 'canceled'
  | 'client_id_owned_by_another_user'
  | 'primary_unreachable'
  | 'forward_timed_out';

export type Effect =
  /** Send a replica-plane frame to replica `to` (never to self). */
  | { readonly kind: 'send'; readonly to: ReplicaIndex; readonly frame: Uint8Array }
  /**
   * Send a Reply or Eviction frame to a client. `token` is the host's correlation token when the
   * request came through this host (null: deliver by client id, best effort).
   */
  | { readonly kind: 'client_frame'; readonly client: bigint; readonly token: ClientToken | null; readonly frame: Uint8Array }
  /**
   * Append this prepare frame (command 6) to the journal, then complete with
   * `journal_written {op, checksum, ok}`. Metadata: the WAL, fdatasynced before the completion.
   * Partition: the partition journal file, written (handed to the OS: it survives a process kill)
   * before the completion, fdatasynced per the topic's fsync policy. Either way the core sends no
   * PrepareOk for the op, and the primary counts no own ack, before the completion.
   */
  | { readonly kind: 'journal_append'; readonly op: Op; readonly checksum: bigint; readonly frame: Uint8Array }
  /**
   * Remove every journaled entry with op >= fromOp (suffix truncation; no completion). What the
   * host records as faulty at or above fromOp is REPLACED by [fromOp, faultyThrough]: ops this
   * replica may have acknowledged and no longer holds. The host records that durably BEFORE it
   * removes the entries, and reports those it does not hold again as `faultyOps` at the next
   * boot. `faultyThrough` < fromOp: nothing at or above fromOp is faulty (any more).
   */
  | { readonly kind: 'journal_truncate'; readonly fromOp: Op; readonly faultyThrough: Op }
  /** After a durable checkpoint: compact away entries with op < beforeOp (the entry at beforeOp stays). */
  | { readonly kind: 'journal_drain'; readonly beforeOp: Op }
  /** Persist the superblock (tmp, fsync, rename, dir fsync) then complete with `superblock_written`. */
  | { readonly kind: 'superblock_write'; readonly state: DurableVsrState }
  /**
   * Metadata: snapshot the state machine and client table AS OF `op` (the core's commit_min at
   * emission; the host must take it before calling the core again), write snapshot.bin durably,
   * then complete with `checkpoint_done`.
   */
  | { readonly kind: 'checkpoint'; readonly op: Op }
  /** State-transfer server: build (or reuse) an offer for `requester`; complete with `offer_built`. */
  | {
      readonly kind: 'transfer_offer';
      readonly requester: ReplicaIndex;
      readonly nonce: bigint;
      readonly commitOp: Op;
      /** ICT2 bytes of the client table at commitOp (metadata), null on the partition plane. */
      readonly clientTable: Uint8Array | null;
    }
  /** State-transfer server: read artifact bytes of a live offer; complete with `chunk_read`. */
  | {
      readonly kind: 'transfer_read';
      readonly requester: ReplicaIndex;
      readonly nonce: bigint;
      readonly artifact: number;
      readonly offset: number;
      readonly len: number;
    }
  /** State-transfer server: an offer expired or was superseded; drop its resources. */
  | { readonly kind: 'transfer_offer_dropped'; readonly requester: ReplicaIndex; readonly nonce: bigint }
  /** Requester: stage received artifact bytes (append at offset). No completion. */
  | { readonly kind: 'transfer_stage'; readonly nonce: bigint; readonly artifact: number; readonly offset: number; readonly bytes: Uint8Array }
  /** Requester: discard everything staged under this nonce (restart or abandon). */
  | { readonly kind: 'transfer_discard'; readonly nonce: bigint }
  /**
   * Requester: every artifact is staged; verify each whole against the manifest (length, XXH3),
   * decode, install (§6.8) and complete with `install_done`.
   */
  | {
      readonly kind: 'transfer_install';
      readonly nonce: bigint;
      readonly manifest: readonly ManifestEntry[];
      readonly commitOp: Op;
      readonly commitMax: Op;
      /**
       * The highest op this replica journaled (and so may have acknowledged). An install that is
       * ahead drops the journal above the snapshot: the host records (snapshot, journalHead] as
       * faulty durably before it does, as for `journal_truncate`.
       */
      readonly journalHead: Op;
    }
  /** An op was applied (commit_min advanced to `op`): a hint for flushes and observers. */
  | { readonly kind: 'committed'; readonly op: Op; readonly operation: number }
  /** Outcome of a session operation the host submitted (`submitSession`) or a forwarded one. */
  | {
      readonly kind: 'session_result';
      readonly token: ClientToken;
      readonly client: bigint;
      readonly session: 'register' | 'logout';
      readonly outcome: SessionOutcome;
      /** Register: the bound epoch (register op). Logout: the committed logout op. 0 otherwise. */
      readonly epoch: bigint;
      readonly watermark: bigint;
    }
  /** A frame was dropped: log and count it. */
  | { readonly kind: 'dropped'; readonly command: number; readonly from: number; readonly reason: string }
  /** A structured log / metric event. */
  | { readonly kind: 'event'; readonly name: string; readonly detail: string }
  /**
   * This replica's role changed (after the entry point that changed it): its view, the primary it
   * knows (null outside status normal) and whether it is the acting primary. Hosts publish it
   * (routing hints) instead of reading the role on every tick.
   */
  | { readonly kind: 'role'; readonly view: number; readonly primary: number | null; readonly acting: boolean }
  /** The environment failed in a way the core cannot survive (exit with this reason). */
  | { readonly kind: 'fatal'; readonly reason: string };

export type EffectKind = Effect['kind'];

/** What the host reports back. */
export type Completion =
  | { readonly kind: 'journal_written'; readonly op: Op; readonly checksum: bigint; readonly ok: boolean }
  | { readonly kind: 'superblock_written'; readonly state: DurableVsrState; readonly ok: boolean }
  | { readonly kind: 'checkpoint_done'; readonly op: Op; readonly checksum: bigint; readonly ok: boolean }
  | {
      readonly kind: 'offer_built';
      readonly requester: ReplicaIndex;
      readonly nonce: bigint;
      /** The manifest entries, or null for a refusal. */
      readonly entries: readonly ManifestEntry[] | null;
      /** For a refusal: "not now" (partition budget) rather than "cannot". */
      readonly transient: boolean;
    }
  | {
      readonly kind: 'chunk_read';
      readonly requester: ReplicaIndex;
      readonly nonce: bigint;
      readonly artifact: number;
      readonly offset: number;
      /** null when the read failed (nothing is sent). */
      readonly bytes: Uint8Array | null;
    }
  | {
      readonly kind: 'install_done';
      readonly nonce: bigint;
      readonly ok: true;
      /** The installed snapshot op (metadata: METADATA_SNAPSHOT frontier; partition: commit op). */
      readonly snapshotOp: Op;
      /** Metadata: widen(XXH3(snapshot payload)) of the persisted snapshot.bin (0 on partitions). */
      readonly checkpointChecksum: bigint;
      /** Metadata: the decoded CLIENT_TABLE artifact and its frontier. */
      readonly clientTable: readonly DecodedClientTableEntry[] | null;
      readonly tableFrontier: Op;
    }
  | {
      readonly kind: 'install_done';
      readonly nonce: bigint;
      readonly ok: false;
      /** verify/decode failures are charged to the decode budget; install failures are not. */
      readonly failure: 'verify' | 'decode' | 'install';
      readonly reason: string;
    };

/**
 * The bounded effects buffer. Overflow means the host did not drain after an entry point, or a
 * limit is mis-sized: an assertion (our or the host's bug), never a silent drop.
 */
export class EffectBuffer {
  readonly capacity: number;
  #items: Effect[] = [];

  constructor(capacity: number) {
    this.capacity = capacity;
  }

  get length(): number {
    return this.#items.length;
  }

  push(effect: Effect): void {
    assert(this.#items.length < this.capacity, `effects buffer overflow (${this.capacity}): drain after every call`);
    this.#items.push(effect);
  }

  /** Hands every pending effect to the host, oldest first, and empties the buffer. */
  take(): Effect[] {
    const out = this.#items;
    this.#items = [];
    return out;
  }

  /** Visits every pending effect, oldest first, and empties the buffer. */
  drain(visit: (effect: Effect) => void): void {
    const out = this.take();
    for (const effect of out) visit(effect);
  }
}
