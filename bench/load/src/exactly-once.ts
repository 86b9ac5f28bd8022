/**
 * The end-of-run check: every acknowledged message was consumed exactly once, where it was
 * acknowledged to be. A benchmark that loses or duplicates acknowledged data is a failed
 * benchmark (exit code 1).
 *
 * Every message the bench sends carries its identity in its first 16 payload bytes
 * (`encodeIdentity`): a magic word, the run tag, the producer index and the producer's sequence
 * number. Producers number their messages densely from 0, so the checker keeps, per producer,
 * one byte of state per sequence number (sent / acknowledged / re-sent after an uncertain
 * outcome) and one consumption count, plus the acknowledged position (partition, offset) where
 * the target reports one (Shoal: the batch's base offset; NATS: the stream sequence).
 *
 * Verdict:
 * - lost:        acknowledged, never consumed                                       → failure
 * - duplicated:  consumed more than once (and not explained by a client re-send)      → failure
 * - misplaced:   consumed at another partition / offset than acknowledged              → failure
 * - phantom:     consumed but never sent, or carrying another run's tag                → failure
 * - reordered:   a partition delivered an offset not above the previous one            → failure
 * - retry duplicates: consumed twice after the client re-sent it following an uncertain outcome
 *   (connection lost mid-request during failover): at-least-once by design of any client,
 *   reported but not a failure;
 * - unacknowledged but present: sent, outcome unknown to the client, committed: fine.
 */
export const IDENTITY_BYTES = 16;
export const IDENTITY_MAGIC = 0x53_48_4c_42; // 'SHLB'

const SENT = 1;
const ACKED = 2;
const RETRIED = 4;

export function encodeIdentity(target: Uint8Array, at: number, runTag: number, producer: number, seq: number): void {
  const view = new DataView(target.buffer, target.byteOffset + at, IDENTITY_BYTES);
  view.setUint32(0, IDENTITY_MAGIC, true);
  view.setUint32(4, runTag >>> 0, true);
  view.setUint32(8, producer >>> 0, true);
  view.setUint32(12, seq >>> 0, true);
}

export interface Identity {
  readonly runTag: number;
  readonly producer: number;
  readonly seq: number;
}

/**
 * The identity at the start of a payload, or null when the payload does not carry one. Read byte
 * by byte, not through a DataView: it runs once per consumed message of both systems, and a
 * DataView per message was a visible share of the consumer's garbage.
 */
export function decodeIdentity(payload: Uint8Array): Identity | null {
  if (payload.length < IDENTITY_BYTES) return null;
  if (u32At(payload, 0) !== IDENTITY_MAGIC) return null;
  return { runTag: u32At(payload, 4), producer: u32At(payload, 8), seq: u32At(payload, 12) };
}

function u32At(bytes: Uint8Array, at: number): number {
  return ((bytes[at] as number) | ((bytes[at + 1] as number) << 8) | ((bytes[at + 2] as number) << 16) | ((bytes[at + 3] as number) << 24)) >>> 0;
}

export interface ExactlyOnceVerdict {
  readonly ok: boolean;
  readonly sent: number;
  readonly acknowledged: number;
  readonly consumed: number;
  readonly lost: number;
  readonly duplicated: number;
  readonly misplaced: number;
  readonly phantom: number;
  readonly reordered: number;
  readonly retryDuplicates: number;
  readonly unacknowledgedPresent: number;
  /** A few concrete cases, for the report. */
  readonly examples: readonly string[];
}

class ProducerLedger {
  state = new Uint8Array(1024);
  consumed = new Uint8Array(1024);
  /** Acknowledged partition + 1 (0 = unknown) and offset (NaN = unknown). */
  partition = new Uint16Array(1024);
  offset = new Float64Array(1024).fill(Number.NaN);
  highest = -1;

  ensure(seq: number): void {
    if (seq < this.state.length) return;
    let size = this.state.length;
    while (size <= seq) size *= 2;
    const grow = <T extends Uint8Array | Uint16Array | Float64Array>(old: T, make: (n: number) => T): T => {
      const next = make(size);
      next.set(old);
      return next;
    };
    this.state = grow(this.state, (n) => new Uint8Array(n));
    this.consumed = grow(this.consumed, (n) => new Uint8Array(n));
    this.partition = grow(this.partition, (n) => new Uint16Array(n));
    const offset = new Float64Array(size).fill(Number.NaN);
    offset.set(this.offset);
    this.offset = offset;
  }
}

export class ExactlyOnceChecker {
  readonly runTag: number;
  readonly #producers: ProducerLedger[] = [];
  readonly #lastOffset = new Map<number, number>();
  #phantom = 0;
  #reordered = 0;
  #misplaced = 0;
  #consumed = 0;
  readonly #examples: string[] = [];

  constructor(runTag: number) {
    this.runTag = runTag >>> 0;
  }

  #ledger(producer: number): ProducerLedger {
    let ledger = this.#producers[producer];
    if (ledger === undefined) {
      for (let i = this.#producers.length; i <= producer; i++) this.#producers.push(new ProducerLedger());
      ledger = this.#producers[producer] as ProducerLedger;
    }
    return ledger;
  }

  #example(text: string): void {
    if (this.#examples.length < 10) this.#examples.push(text);
  }

  /** Messages [firstSeq, firstSeq + count) of a producer left the client. */
  sent(producer: number, firstSeq: number, count: number): void {
    const ledger = this.#ledger(producer);
    ledger.ensure(firstSeq + count - 1);
    for (let s = firstSeq; s < firstSeq + count; s++) ledger.state[s] = (ledger.state[s] as number) | SENT;
    if (firstSeq + count - 1 > ledger.highest) ledger.highest = firstSeq + count - 1;
  }

  /** The messages are being sent again after an uncertain outcome (lost connection, timeout). */
  retried(producer: number, firstSeq: number, count: number): void {
    const ledger = this.#ledger(producer);
    ledger.ensure(firstSeq + count - 1);
    for (let s = firstSeq; s < firstSeq + count; s++) ledger.state[s] = (ledger.state[s] as number) | RETRIED;
  }

  /**
   * The target acknowledged messages [firstSeq, firstSeq + count) in `partition`: at offsets
   * `baseOffset + i` (a number), at the listed offsets (an array), or at unknown offsets (null).
   */
  acknowledged(producer: number, firstSeq: number, count: number, partition: number, offsets: number | readonly number[] | null): void {
    const ledger = this.#ledger(producer);
    ledger.ensure(firstSeq + count - 1);
    for (let i = 0; i < count; i++) {
      const s = firstSeq + i;
      ledger.state[s] = (ledger.state[s] as number) | SENT | ACKED;
      ledger.partition[s] = partition + 1;
      ledger.offset[s] = offsets === null ? Number.NaN : typeof offsets === 'number' ? offsets + i : (offsets[i] ?? Number.NaN);
    }
    if (firstSeq + count - 1 > ledger.highest) ledger.highest = firstSeq + count - 1;
  }

  /** A consumer read the message with this payload at (partition, offset). */
  consumed(partition: number, offset: number, payload: Uint8Array): void {
    this.#consumed++;
    const last = this.#lastOffset.get(partition);
    if (last !== undefined && offset <= last) {
      this.#reordered++;
      this.#example(`partition ${partition}: offset ${offset} delivered after ${last}`);
    }
    this.#lastOffset.set(partition, last === undefined ? offset : Math.max(last, offset));
    const identity = decodeIdentity(payload);
    if (identity === null || identity.runTag !== this.runTag) {
      this.#phantom++;
      this.#example(`partition ${partition} offset ${offset}: ${identity === null ? 'payload without a bench identity' : `run tag ${identity.runTag} is not this run's`}`);
      return;
    }
    const ledger = this.#producers[identity.producer];
    if (ledger === undefined || identity.seq > ledger.highest || ((ledger.state[identity.seq] as number) & SENT) === 0) {
      this.#phantom++;
      this.#example(`partition ${partition} offset ${offset}: producer ${identity.producer} seq ${identity.seq} was never sent`);
      return;
    }
    const seq = identity.seq;
    const count = ledger.consumed[seq] as number;
    if (count < 255) ledger.consumed[seq] = count + 1;
    const ackedPartition = (ledger.partition[seq] as number) - 1;
    const ackedOffset = ledger.offset[seq] as number;
    const retried = ((ledger.state[seq] as number) & RETRIED) !== 0;
    if (((ledger.state[seq] as number) & ACKED) !== 0 && count === 0 && !retried) {
      if (ackedPartition >= 0 && ackedPartition !== partition) {
        this.#misplaced++;
        this.#example(`producer ${identity.producer} seq ${seq}: acknowledged in partition ${ackedPartition}, consumed in ${partition}`);
      } else if (!Number.isNaN(ackedOffset) && ackedOffset !== offset) {
        this.#misplaced++;
        this.#example(`producer ${identity.producer} seq ${seq}: acknowledged at offset ${ackedOffset}, consumed at ${offset}`);
      }
    }
  }

  /** Acknowledged messages per partition (what the consumers must find). */
  acknowledgedPerPartition(): Map<number, number> {
    const out = new Map<number, number>();
    for (const ledger of this.#producers) {
      for (let s = 0; s <= ledger.highest; s++) {
        if (((ledger.state[s] as number) & ACKED) === 0) continue;
        const p = (ledger.partition[s] as number) - 1;
        out.set(p, (out.get(p) ?? 0) + 1);
      }
    }
    return out;
  }

  verdict(): ExactlyOnceVerdict {
    let sent = 0;
    let acknowledged = 0;
    let lost = 0;
    let duplicated = 0;
    let retryDuplicates = 0;
    let unacknowledgedPresent = 0;
    this.#producers.forEach((ledger, producer) => {
      for (let s = 0; s <= ledger.highest; s++) {
        const state = ledger.state[s] as number;
        const count = ledger.consumed[s] as number;
        if ((state & SENT) !== 0) sent++;
        const acked = (state & ACKED) !== 0;
        if (acked) acknowledged++;
        if (acked && count === 0) {
          lost++;
          this.#example(`producer ${producer} seq ${s}: acknowledged (partition ${(ledger.partition[s] as number) - 1}) but never consumed`);
        }
        if (!acked && count > 0) unacknowledgedPresent++;
        if (count > 1) {
          if ((state & RETRIED) !== 0) retryDuplicates++;
          else {
            duplicated++;
            this.#example(`producer ${producer} seq ${s}: consumed ${count} times`);
          }
        }
      }
    });
    const ok = lost === 0 && duplicated === 0 && this.#misplaced === 0 && this.#phantom === 0 && this.#reordered === 0;
    return {
      ok, sent, acknowledged, consumed: this.#consumed, lost, duplicated, misplaced: this.#misplaced, phantom: this.#phantom,
      reordered: this.#reordered, retryDuplicates, unacknowledgedPresent, examples: [...this.#examples],
    };
  }
}
