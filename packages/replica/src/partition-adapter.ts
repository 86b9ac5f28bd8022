/**
 * The consensus core's StateMachine port over one partition (`PartitionState`).
 *
 * - `prepare` (primary): SendMessages batches are stamped (base_offset = dirty offset,
 *   base_timestamp = prepare timestamp, batch_checksum recomputed); offset ops pass through.
 * - `verify` (backup, live prepares): the stamp must be the expected one; an offset write's body
 *   must carry its seal (nothing else covers it on the wire).
 * - `journaled` / `truncated`: keep the dirty offset exact across view changes and repair.
 * - `apply`: the state advances; the storage work an applied op implies (its batch bytes, its
 *   consumer-offset file) is QUEUED here and performed by the driver before any effect of the
 *   same core call (`takeStorageWork`), so the log holds a committed batch before its reply leaves.
 *
 * - `combine` / `memberReply` (group commit, consensus group-commit.ts): queued SendMessages
 *   batches join into one batch (`concatBatches`: exactly the batch one producer would have sent
 *   with all their messages), and each request's reply names the offset of its first message.
 *
 * Replies: SendMessages → its response payload; 161/162/68 → result-framed.
 */
import type { CombineVerdict, JournalSource, Op, PrepareInput, PreparePosition, PrepareRecord, PrepareVerdict, StateMachine } from '@shoal/consensus';
import { Operation, concatBatches, encodeResultRejection, encodeResultSuccess, isResultFramed, sendMessagesCommand } from '@shoal/protocol';
import { type ConsumerRef, type PartitionState, decodeDeleteOffsetBody, decodeStoreOffsetBody, offsetWriteBodyProblem } from '@shoal/state';
import type { AppliedOp } from './ports.js';

/** Storage work implied by applied ops, in op order. */
export type StorageWork =
  | { readonly kind: 'batch'; readonly bytes: Uint8Array }
  | { readonly kind: 'store_offset'; readonly consumer: ConsumerRef; readonly offset: bigint }
  | { readonly kind: 'delete_offset'; readonly consumer: ConsumerRef };

export interface PartitionAdapterEvents {
  applied(op: AppliedOp): void;
}

export class PartitionAdapter implements StateMachine {
  readonly state: PartitionState;
  readonly #group: bigint;
  readonly #events: PartitionAdapterEvents;
  #work: StorageWork[] = [];
  #lastApplied: Op;

  constructor(state: PartitionState, group: bigint, lastApplied: Op, events: PartitionAdapterEvents) {
    this.state = state;
    this.#group = group;
    this.#lastApplied = lastApplied;
    this.#events = events;
  }

  /** Highest op applied (the state reflects it; its storage work may still be queued). */
  get lastApplied(): Op {
    return this.#lastApplied;
  }

  /** A state-transfer install moved the state to `op`. */
  resetTo(op: Op): void {
    this.#lastApplied = op;
    this.#work = [];
  }

  get hasWork(): boolean {
    return this.#work.length > 0;
  }

  takeStorageWork(): StorageWork[] {
    const work = this.#work;
    this.#work = [];
    return work;
  }

  prepare(input: PrepareInput): PrepareVerdict {
    if (input.operation !== Operation.SendMessages) return { ok: true, operation: input.operation, body: input.body };
    const stamped = this.state.stamp(input.body, { timestamp: input.timestamp });
    return stamped.ok ? { ok: true, operation: input.operation, body: stamped.bytes } : { ok: false, eviction: 5 };
  }

  combinable(operation: number): boolean {
    return operation === Operation.SendMessages;
  }

  combine(operation: number, bodies: readonly Uint8Array[]): CombineVerdict {
    if (operation !== Operation.SendMessages) return { ok: false };
    const joined = concatBatches(bodies);
    return joined.ok ? { ok: true, body: joined.value.bytes, shares: joined.value.starts } : { ok: false };
  }

  /** A joined request's SendMessages reply: the op's confirmation moved to its first message. */
  memberReply(payload: Uint8Array, share: number): Uint8Array {
    const reply = sendMessagesCommand.decodeResponse(payload);
    if (!reply.ok) return payload;
    const confirmations = reply.value.confirmations.map((c) => ({ ...c, baseOffset: c.baseOffset + BigInt(share) }));
    return sendMessagesCommand.encodeResponse({ confirmations });
  }

  verify(prepare: PrepareRecord, position: PreparePosition): string | null {
    if (prepare.operation !== Operation.SendMessages) return offsetWriteBodyProblem(prepare.operation, prepare.body);
    return this.state.verify(prepare.body, prepare.timestamp, position === 'append');
  }

  journaled(prepare: PrepareRecord, source: JournalSource): void {
    const batch = prepare.operation === Operation.SendMessages ? prepare.body : null;
    // Restored entries (the journal file at boot) keep their stamps, as repaired ones do.
    this.state.journaled(BigInt(prepare.op), batch, source === 'repair' || source === 'restore' ? 'repair' : 'live');
  }

  truncated(fromOp: Op): void {
    this.state.truncateFrom(BigInt(fromOp));
  }

  apply(prepare: PrepareRecord): Uint8Array {
    const before = this.state.nextOffset;
    const outcome = this.state.apply(BigInt(prepare.op), prepare.operation, prepare.body, prepare.timestamp);
    this.#lastApplied = prepare.op;
    if (outcome.ok) this.#queue(prepare, before);
    const payload = outcome.ok ? outcome.payload : new Uint8Array(0);
    this.#events.applied({
      group: this.#group, op: prepare.op, operation: prepare.operation, client: prepare.client, request: prepare.request,
      userId: prepare.userId, timestamp: prepare.timestamp, body: prepare.body, code: outcome.code, payload,
    });
    if (!isResultFramed(prepare.operation, 1)) return payload;
    return outcome.ok ? encodeResultSuccess(payload) : encodeResultRejection(outcome.code);
  }

  logout(_client: bigint): void {}

  #queue(prepare: PrepareRecord, before: bigint): void {
    switch (prepare.operation) {
      case Operation.SendMessages:
        // A batch journaled before a purge counts for nothing (the offsets did not move).
        if (this.state.nextOffset !== before) this.#work.push({ kind: 'batch', bytes: prepare.body });
        return;
      case Operation.StoreConsumerOffset: {
        const req = decodeStoreOffsetBody(prepare.body);
        if (req.ok) this.#work.push({ kind: 'store_offset', consumer: req.value.consumer, offset: req.value.offset });
        return;
      }
      case Operation.DeleteConsumerOffset: {
        const req = decodeDeleteOffsetBody(prepare.body);
        if (req.ok) this.#work.push({ kind: 'delete_offset', consumer: req.value });
        return;
      }
      default:
    }
  }
}
