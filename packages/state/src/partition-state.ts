import {
  type ConsumerOffsetInfo, ErrorCode, bodyWithHeadroom, Operation, getConsumerOffsetCommand, readBatchHeader,
  sendMessagesCommand, stampBatch, validateBatch,
} from '@shoal/protocol';
import { assert } from '@shoal/stdx';
import {
  ConsumerOffsetTable, type ConsumerRef, decodeDeleteOffsetBody, decodeStoreOffsetBody,
} from './consumer-offsets.js';
import { decodeTruncatePartition } from './internal-bodies.js';
import { type Outcome, accepted, rejected } from './outcome.js';

/**
 * The partition state machine: pure bookkeeping for one partition group. Message bytes live in
 * storage; this tracks offsets, consumer offsets, the delete watermark and the purge generation.
 *
 *          committed prefix            journaled, not yet committed
 *   ─────────────────────────────┬──────────────────────────────────────┬──────────
 *   0 ...          nextOffset - 1│ nextOffset ...         dirtyOffset - 1│ dirtyOffset
 *                 (currentOffset)│                                      │ (next base_offset to mint)
 *
 * Invariants (asserted): nextOffset <= dirtyOffset; committed offsets are contiguous and
 * monotonic (each applied batch starts exactly at nextOffset); ops apply in increasing order.
 *
 * The primary stamps a batch at the dirty offset (`stamp`), every replica journals it
 * (`journaled`, which advances the dirty offset), backups `verify` a live prepare before
 * journaling it, a view change drops the uncommitted tail (`truncateFrom`: the dirty offset rolls
 * back), repaired batches keep the serving replica's stamp (dirty = max(dirty, last + 1)), and
 * committed ops `apply` in op order.
 */
export interface PartitionIdentity {
  readonly streamId: number;
  readonly topicId: number;
  readonly partitionId: number;
}

interface JournalEntry {
  readonly op: bigint;
  readonly first: bigint;
  /** One past the batch's last offset. */
  readonly next: bigint;
}

export type StampResult = { readonly ok: true; readonly bytes: Uint8Array } | { readonly ok: false; readonly reason: string };

/** What the CONSUMER_OFFSETS artifact (ICO1) carries, and what a state transfer installs. */
export interface PartitionOffsetsImage {
  readonly purgeGeneration: bigint;
  readonly nextOffset: bigint;
  readonly consumers: readonly (readonly [number, bigint])[];
  readonly groups: readonly (readonly [number, bigint])[];
}

export class PartitionState {
  readonly identity: PartitionIdentity;
  readonly offsets = new ConsumerOffsetTable();
  #nextOffset = 0n;
  #dirtyOffset = 0n;
  #journal: JournalEntry[] = [];
  #lastApplied = 0n;
  #purgeGeneration = 0n;
  /** Ops at or below this were journaled before the last purge: they count for nothing. */
  #purgeFloorOp = 0n;
  #deletedUpToOffset = 0n;

  constructor(identity: PartitionIdentity) {
    this.identity = identity;
  }

  /** Next offset after the committed prefix. */
  get nextOffset(): bigint {
    return this.#nextOffset;
  }

  /** The next base_offset the primary mints (over journaled-but-uncommitted batches). */
  get dirtyOffset(): bigint {
    return this.#dirtyOffset;
  }

  /** The partition's newest committed offset (0 when empty), as PollMessages reports it. */
  get currentOffset(): bigint {
    return this.#nextOffset === 0n ? 0n : this.#nextOffset - 1n;
  }

  get lastAppliedOp(): bigint {
    return this.#lastApplied;
  }

  get purgeGeneration(): bigint {
    return this.#purgeGeneration;
  }

  get deletedUpToOffset(): bigint {
    return this.#deletedUpToOffset;
  }

  /**
   * Primary, at prepare build: a stamped COPY of `batch` (partition_id, base_offset = dirty
   * offset, base_timestamp = prepare timestamp, batch_checksum recomputed). Journal it (which
   * advances the dirty offset) before stamping the next one. The copy has room for the prepare
   * header in front (`bodyWithHeadroom`): the prepare is framed around it without another copy.
   */
  stamp(batch: Uint8Array, ctx: { readonly timestamp: bigint }): StampResult {
    const bytes = bodyWithHeadroom(batch.length);
    bytes.set(batch, 0);
    const verdict = stampBatch(bytes, { partitionId: BigInt(this.identity.partitionId), baseOffset: this.#dirtyOffset, baseTimestamp: ctx.timestamp });
    if (!verdict.ok) return { ok: false, reason: verdict.reason };
    return { ok: true, bytes };
  }

  /**
   * Backup, before journaling a live prepare: a reason to drop it, or null. Every frame checksum
   * is re-hashed, not only the batch checksum over the stored ones (which is all §2.5 asks): a
   * partition prepare's body has no seal, so this is the only check that catches a payload byte
   * corrupted between the primary and here (the simulator's corrupting network does exactly
   * that; with the batch checksum alone, backups journaled and committed unreadable batches).
   * `atHead`: the prepare extends the journal, so its batch sits at the dirty offset; a hole's
   * fill below the head keeps the primary's stamp (checked again against the applied prefix
   * when it commits).
   */
  verify(batch: Uint8Array, timestamp: bigint, atHead = true): string | null {
    const verdict = validateBatch(batch, { offsetDeltas: 'index' });
    if (!verdict.ok) return verdict.reason;
    const v = verdict.value;
    if (v.messageCount === 0) return 'batch_empty';
    if (v.partitionId !== BigInt(this.identity.partitionId)) return 'partition_id_mismatch';
    if (atHead && v.baseOffset !== this.#dirtyOffset) return 'base_offset_mismatch';
    if (v.baseTimestamp !== timestamp) return 'base_timestamp_mismatch';
    return null;
  }

  /**
   * Bookkeeping when a prepare enters the journal by any path. `batch` is the SendMessages body
   * (null for other operations). Live batches must sit exactly at the dirty offset (verified
   * before); repaired ones keep their stamp and lift the dirty offset to cover them.
   */
  journaled(op: bigint, batch: Uint8Array | null, source: 'live' | 'repair' = 'live'): void {
    assert(op > this.#lastApplied, `journaled op ${op} at or below the applied op ${this.#lastApplied}`);
    if (batch === null) return;
    assert(!this.#journal.some((e) => e.op === op), `op ${op} journaled twice`);
    const header = readBatchHeader(batch);
    assert(header !== null && header.messageCount > 0, 'journaled batch has no messages');
    const first = header.baseOffset;
    const next = first + BigInt(header.messageCount);
    if (op <= this.#purgeFloorOp) return;
    if (source === 'live') {
      assert(first === this.#dirtyOffset, `live batch at ${first}, dirty offset ${this.#dirtyOffset}`);
      this.#dirtyOffset = next;
    } else if (next > this.#dirtyOffset) {
      this.#dirtyOffset = next;
    }
    this.#journal.push({ op, first, next });
    this.#journal.sort((a, b) => (a.op < b.op ? -1 : a.op > b.op ? 1 : 0));
  }

  /** View-change truncation of uncommitted ops >= `op`: the dirty offset rolls back. */
  truncateFrom(op: bigint): void {
    assert(op > this.#lastApplied, `cannot truncate committed op ${op} (applied ${this.#lastApplied})`);
    this.#journal = this.#journal.filter((e) => e.op < op);
    let dirty = this.#nextOffset;
    for (const e of this.#journal) if (e.next > dirty) dirty = e.next;
    this.#dirtyOffset = dirty;
  }

  /**
   * Applies a committed op, in op order, exactly once: SendMessages (160; returns the
   * SendMessages response), StoreConsumerOffset (161), DeleteConsumerOffset (162) and
   * TruncatePartition (68). Offset-op replies are result-framed by the core.
   */
  apply(op: bigint, operation: number, body: Uint8Array, timestamp: bigint): Outcome {
    assert(op > this.#lastApplied, `partition apply out of order: op ${op} after ${this.#lastApplied}`);
    void timestamp;
    this.#lastApplied = op;
    switch (operation) {
      case Operation.SendMessages: return this.#applySend(op, body);
      case Operation.StoreConsumerOffset:
      case Operation.DeleteConsumerOffset: return this.applyOffsetWriteLocally(operation, body);
      case Operation.TruncatePartition: {
        const req = decodeTruncatePartition(body);
        if (!req.ok) return rejected(ErrorCode.InvalidCommand);
        if (req.value.upToOffset > this.#deletedUpToOffset) this.#deletedUpToOffset = req.value.upToOffset;
        return accepted();
      }
      default:
        return rejected(ErrorCode.InvalidCommand);
    }
  }

  #applySend(op: bigint, batch: Uint8Array): Outcome {
    const header = readBatchHeader(batch);
    assert(header !== null, 'committed SendMessages body shorter than a batch header');
    this.#journal = this.#journal.filter((e) => e.op !== op);
    if (op > this.#purgeFloorOp) {
      assert(header.baseOffset === this.#nextOffset, `committed batch at ${header.baseOffset}, expected ${this.#nextOffset}`);
      this.#nextOffset = header.baseOffset + BigInt(header.messageCount);
      if (this.#dirtyOffset < this.#nextOffset) this.#dirtyOffset = this.#nextOffset;
    }
    const { streamId, topicId, partitionId } = this.identity;
    return accepted(sendMessagesCommand.encodeResponse({ confirmations: [{ streamId, topicId, partitionId, baseOffset: header.baseOffset }] }));
  }

  /**
   * A Store/DeleteConsumerOffset body (resolved form) applied without consensus: the NoAck path
   * on the partition primary, and the Quorum path's apply. DeleteConsumerOffset of an offset
   * that is not stored is ConsumerOffsetNotFound.
   */
  applyOffsetWriteLocally(operation: number, body: Uint8Array): Outcome {
    if (operation === Operation.StoreConsumerOffset) {
      const req = decodeStoreOffsetBody(body);
      if (!req.ok) return rejected(ErrorCode.InvalidCommand);
      this.offsets.set(req.value.consumer, req.value.offset);
      return accepted();
    }
    if (operation === Operation.DeleteConsumerOffset) {
      const req = decodeDeleteOffsetBody(body);
      if (!req.ok) return rejected(ErrorCode.InvalidCommand);
      return this.offsets.delete(req.value) ? accepted() : rejected(ErrorCode.ConsumerOffsetNotFound);
    }
    return rejected(ErrorCode.InvalidCommand);
  }

  /** Poll auto-commit on the primary: keeps the maximum (NoAck, local). */
  autoCommit(consumer: ConsumerRef, offset: bigint): void {
    this.offsets.raise(consumer, offset);
  }

  /** GetConsumerOffset reply payload (empty when the consumer has no stored offset). */
  consumerOffsetReply(consumer: ConsumerRef): Uint8Array {
    const stored = this.offsets.get(consumer);
    const info: ConsumerOffsetInfo | null = stored === undefined
      ? null : { partitionId: this.identity.partitionId, currentOffset: this.currentOffset, storedOffset: stored };
    return getConsumerOffsetCommand.encodeResponse(info);
  }

  /**
   * Observes the committed purge generation of this partition (metadata). A higher one resets the
   * partition: offsets restart at 0, consumer offsets are cleared, the delete watermark resets,
   * and prepares journaled before the purge count for nothing when they commit. True if applied.
   */
  observePurge(generation: bigint): boolean {
    if (generation <= this.#purgeGeneration) return false;
    this.#purgeGeneration = generation;
    for (const e of this.#journal) if (e.op > this.#purgeFloorOp) this.#purgeFloorOp = e.op;
    if (this.#lastApplied > this.#purgeFloorOp) this.#purgeFloorOp = this.#lastApplied;
    this.#journal = [];
    this.#nextOffset = 0n;
    this.#dirtyOffset = 0n;
    this.#deletedUpToOffset = 0n;
    this.offsets.clear();
    return true;
  }

  /** Observes the committed delete watermark (TruncatePartition applied on the metadata plane). */
  observeDeleteWatermark(upToOffset: bigint): void {
    if (upToOffset > this.#deletedUpToOffset) this.#deletedUpToOffset = upToOffset;
  }

  exportOffsets(): PartitionOffsetsImage {
    return {
      purgeGeneration: this.#purgeGeneration, nextOffset: this.#nextOffset,
      consumers: this.offsets.entries('consumer'), groups: this.offsets.entries('consumer_group'),
    };
  }

  /** State transfer / boot: installs an offsets image at `commitOp` (the journal restarts empty). */
  install(image: PartitionOffsetsImage, commitOp: bigint): void {
    this.#purgeGeneration = image.purgeGeneration;
    this.#nextOffset = image.nextOffset;
    this.#dirtyOffset = image.nextOffset;
    this.#journal = [];
    this.#lastApplied = commitOp;
    this.#purgeFloorOp = 0n;
    this.offsets.clear();
    for (const [key, offset] of image.consumers) this.offsets.set({ kind: 'consumer', key }, offset);
    for (const [key, offset] of image.groups) this.offsets.set({ kind: 'consumer_group', key }, offset);
  }
}
