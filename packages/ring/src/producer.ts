/**
 * The producing end of an SPSC frame ring. One thread, one producer per ring (enforced at attach).
 *
 * Writes are staged: `tryWrite`, `tryWriteParts` and `reserve`/`commit` copy the frame into the
 * ring and advance a private cursor, and nothing is visible to the consumer until `flush()`
 * publishes the cursor with ONE Atomics.store of WRITE (and ONE notify, only if the consumer is
 * parked). Batch your writes, then flush once per turn of the event loop.
 *
 * ```
 *   data region (positions are counter & (capacity - 1))
 *   ┌──────────────┬───────────────────────┬─────────────────────┬─────────────┐
 *   │     free     │  published, unread    │ staged, unpublished │    free     │
 *   └──────────────┴───────────────────────┴─────────────────────┴─────────────┘
 *                  ▲ READ (consumer)        ▲ WRITE (published)   ▲ #write (private)
 * ```
 *
 * Back-pressure: when the frame does not fit, `tryWrite` returns 'full' and copies nothing; the
 * caller keeps the frame, or awaits `write()`, which flushes and parks until the consumer frees
 * enough space. Nothing is ever dropped silently. A frame larger than `frameSizeMax` is refused
 * with 'too-large' (a reason, not a crash), and once the consumer has closed the ring every write
 * that needs fresh space, and every flush, reports 'closed'.
 *
 * Memory ordering: the payload and record header are written with plain stores BEFORE the
 * Atomics.store of WRITE that publishes them; the consumer reads them with plain loads AFTER its
 * Atomics.load of WRITE. A sequentially consistent store read by a sequentially consistent load
 * is a synchronizes-with edge in the JS memory model, so those plain accesses are ordered and
 * race-free. Symmetrically, the producer only overwrites bytes below READ + capacity, which it
 * learnt with an Atomics.load of a READ the consumer stored after it finished reading them.
 */

import { assert } from '@shoal/stdx';
import { type RingHandle, claimEndpoint, openRing } from './handle.js';
import { DoorbellWord, EndpointState, RECORD_HEADER_BYTES, RECORD_PADDING, RingWord, recordBytes } from './layout.js';
import { ParkingSpot, type WaitResult } from './park.js';

/** Result of a non-blocking write. Only 'ok' means the frame was copied into the ring. */
export type WriteStatus = 'ok' | 'full' | 'too-large' | 'closed';
/** Result of an awaited write: it waits out 'full'. */
export type WriteOutcome = 'ok' | 'too-large' | 'closed';
/** Result of a flush: 'closed' when the consumer has gone (published frames will not be read). */
export type FlushStatus = 'ok' | 'closed';

const OUTCOME: Readonly<Record<WriteOutcome, Promise<WriteOutcome>>> = {
  ok: Promise.resolve('ok'),
  'too-large': Promise.resolve('too-large'),
  closed: Promise.resolve('closed'),
};

export class RingProducer {
  readonly capacityBytes: number;
  readonly frameSizeMax: number;

  readonly #control: Int32Array;
  readonly #data: Uint8Array;
  readonly #dataWords: Int32Array;
  readonly #mask: number;
  /** The consumer's parking spot: we ring it after publishing, if it is parked. */
  readonly #consumerSpot: ParkingSpot;
  /** Our parking spot, in the ring's control block: the consumer rings it after releasing. */
  readonly #producerSpot: ParkingSpot;

  /** Private write cursor (u32 counter as int32): everything staged. */
  #write: number;
  /** Last value stored in WRITE. */
  #published: number;
  /** Last READ we loaded. Only ever behind the real READ, so free space is underestimated. */
  #readCache: number;
  /** Sequence number of the next frame (mod 2^32), stamped into its record header. */
  #seq = 0;
  /** Record position of an open reservation, or -1. */
  #reservedPosition = -1;
  #reservedLength = 0;
  /** An awaited write is parked: another write now would overtake it. */
  #writePending = false;
  #closed = false;

  private constructor(handle: RingHandle) {
    const views = openRing(handle);
    this.capacityBytes = views.capacityBytes;
    this.frameSizeMax = views.frameSizeMax;
    this.#control = views.control;
    this.#data = views.data;
    this.#dataWords = views.dataWords;
    this.#mask = views.capacityBytes - 1;
    this.#consumerSpot = new ParkingSpot(views.doorbell, DoorbellWord.DATA_SEQ, DoorbellWord.DATA_PARKED);
    this.#producerSpot = new ParkingSpot(views.control, RingWord.SPACE_SEQ, RingWord.SPACE_WANTED);
    claimEndpoint(views.control, RingWord.PRODUCER_STATE, 'producer');
    this.#write = Atomics.load(views.control, RingWord.WRITE);
    this.#published = this.#write;
    this.#readCache = Atomics.load(views.control, RingWord.READ);
    assert(this.#write === this.#readCache, 'ring producer: attached to a ring that already carries frames');
  }

  /** Becomes the one producer of the ring. Call on the producing thread. */
  static attach(handle: RingHandle): RingProducer {
    return new RingProducer(handle);
  }

  /** Frames copied in but not yet flushed, in bytes (records and padding included). */
  get unpublishedBytes(): number {
    return (this.#write - this.#published) >>> 0;
  }

  /** The consumer closed its end. */
  get consumerClosed(): boolean {
    return Atomics.load(this.#control, RingWord.CONSUMER_STATE) === EndpointState.CLOSED;
  }

  /**
   * Copies the frame `first ‖ second` into the ring, unpublished until `flush()`. Pass a header
   * and a body as two arguments to avoid concatenating them. The arrays may be reused as soon
   * as this returns.
   */
  tryWrite(first: Uint8Array, second?: Uint8Array): WriteStatus {
    this.#assertIdle();
    return this.#tryWrite(first, second);
  }

  /** Like `tryWrite` for a frame made of any number of parts, copied back to back. */
  tryWriteParts(parts: readonly Uint8Array[]): WriteStatus {
    this.#assertIdle();
    return this.#tryWriteParts(parts);
  }

  /**
   * Zero-copy write: returns a view of `lengthMax` contiguous bytes inside the ring to encode the
   * frame into, then `commit(length)` with the bytes actually used (≤ lengthMax), or `cancel()`.
   * The view is valid until commit/cancel; no other write may happen in between.
   */
  reserve(lengthMax: number): Uint8Array | Exclude<WriteStatus, 'ok'> {
    this.#assertIdle();
    assert(Number.isInteger(lengthMax) && lengthMax >= 0, 'ring producer: reserve length');
    if (lengthMax > this.frameSizeMax) return 'too-large';
    const position = this.#place(lengthMax);
    if (position < 0) return this.#refusal();
    this.#reservedPosition = position;
    this.#reservedLength = lengthMax;
    const payload = position + RECORD_HEADER_BYTES;
    return this.#data.subarray(payload, payload + lengthMax);
  }

  commit(length: number): void {
    assert(this.#reservedPosition >= 0, 'ring producer: commit without a reservation');
    assert(Number.isInteger(length) && length >= 0, 'ring producer: commit length');
    assert(length <= this.#reservedLength, 'ring producer: commit longer than the reservation');
    const position = this.#reservedPosition;
    this.#reservedPosition = -1;
    this.#seal(position, length);
  }

  /** Abandons a reservation. A padding record it may have needed stays: it is harmless. */
  cancel(): void {
    assert(this.#reservedPosition >= 0, 'ring producer: cancel without a reservation');
    this.#reservedPosition = -1;
  }

  /**
   * Publishes every staged frame: ONE Atomics.store of WRITE, then ONE notify if (and only if)
   * the consumer advertised it is parked. Returns 'closed' if the consumer has gone.
   */
  flush(): FlushStatus {
    assert(!this.#closed, 'ring producer: flush after close');
    if (this.#write !== this.#published) {
      Atomics.store(this.#control, RingWord.WRITE, this.#write);
      this.#published = this.#write;
      if (this.#consumerSpot.parkedToken() !== 0) this.#consumerSpot.ring();
    }
    return this.consumerClosed ? 'closed' : 'ok';
  }

  /**
   * Writes the frame, waiting (without blocking the event loop) while the ring is full. Flushes
   * before it parks, since the consumer can only free what it can see. One awaited write at a
   * time: a second write before the first resolves would overtake it, and is asserted against.
   * The arrays must stay unchanged until the promise resolves.
   */
  write(first: Uint8Array, second?: Uint8Array): Promise<WriteOutcome> {
    this.#assertIdle();
    const status = this.#tryWrite(first, second);
    if (status !== 'full') return OUTCOME[status];
    const length = second === undefined ? first.length : first.length + second.length;
    return this.#writeSlow(length, () => this.#tryWrite(first, second));
  }

  /** `write` for a frame made of parts. */
  writeParts(parts: readonly Uint8Array[]): Promise<WriteOutcome> {
    this.#assertIdle();
    const status = this.#tryWriteParts(parts);
    if (status !== 'full') return OUTCOME[status];
    let length = 0;
    for (const part of parts) length += part.length;
    return this.#writeSlow(length, () => this.#tryWriteParts(parts));
  }

  /**
   * Flushes, then parks until a frame of `length` bytes fits at the current position, the
   * consumer closes, or `timeoutMs` passes. Resolves 'ready' on a (possibly spurious) wake-up:
   * retry the write.
   */
  waitForSpace(length: number, timeoutMs?: number): Promise<WaitResult> {
    assert(Number.isInteger(length) && length >= 0 && length <= this.frameSizeMax, 'ring producer: wait length');
    const need = this.#bytesNeeded(length);
    this.flush();
    // SPACE_WANTED = need (≥ 8, so never the "running" 0): the consumer rings us only once at
    // least that much is free, so a 64 KiB frame is not woken for every 256-byte release.
    return this.#producerSpot.park(need, () => this.#hasSpace(need) || this.consumerClosed, timeoutMs);
  }

  /**
   * Flushes and closes our end: the consumer reads what is left, then sees `ended`. Always rings
   * the consumer (a close is rare and must never be missed).
   */
  close(): void {
    if (this.#closed) return;
    assert(this.#reservedPosition < 0, 'ring producer: close with an open reservation');
    assert(!this.#writePending, 'ring producer: close with a write still waiting');
    this.flush();
    this.#closed = true;
    // After the last WRITE store: a consumer that sees CLOSED also sees every frame.
    Atomics.store(this.#control, RingWord.PRODUCER_STATE, EndpointState.CLOSED);
    this.#consumerSpot.ring();
  }

  async #writeSlow(length: number, attempt: () => WriteStatus): Promise<WriteOutcome> {
    this.#writePending = true;
    try {
      for (;;) {
        if (this.consumerClosed) return 'closed';
        await this.waitForSpace(length);
        const status = attempt();
        if (status !== 'full') return status;
      }
    } finally {
      this.#writePending = false;
    }
  }

  #tryWrite(first: Uint8Array, second: Uint8Array | undefined): WriteStatus {
    const length = second === undefined ? first.length : first.length + second.length;
    if (length > this.frameSizeMax) return 'too-large';
    const position = this.#place(length);
    if (position < 0) return this.#refusal();
    const payload = position + RECORD_HEADER_BYTES;
    this.#data.set(first, payload);
    if (second !== undefined) this.#data.set(second, payload + first.length);
    this.#seal(position, length);
    return 'ok';
  }

  #tryWriteParts(parts: readonly Uint8Array[]): WriteStatus {
    let length = 0;
    for (const part of parts) length += part.length;
    if (length > this.frameSizeMax) return 'too-large';
    const position = this.#place(length);
    if (position < 0) return this.#refusal();
    let offset = position + RECORD_HEADER_BYTES;
    for (const part of parts) {
      this.#data.set(part, offset);
      offset += part.length;
    }
    this.#seal(position, length);
    return 'ok';
  }

  #assertIdle(): void {
    assert(!this.#closed, 'ring producer: write after close');
    assert(this.#reservedPosition < 0, 'ring producer: write during a reservation');
    assert(!this.#writePending, 'ring producer: write while an awaited write is still waiting');
  }

  /** 'closed' or 'full', for a frame that did not fit. */
  #refusal(): 'full' | 'closed' {
    return this.consumerClosed ? 'closed' : 'full';
  }

  /** Bytes a frame of `length` needs at the current position: its record, plus padding if it wraps. */
  #bytesNeeded(length: number): number {
    const record = recordBytes(length);
    const tail = this.capacityBytes - (this.#write & this.#mask);
    return record <= tail ? record : tail + record;
  }

  /**
   * Finds room for a record of `length` payload bytes and returns its position, or -1 when the
   * ring is full. Writes a padding record first when the record would cross the end.
   */
  #place(length: number): number {
    const record = recordBytes(length);
    const position = this.#write & this.#mask;
    const tail = this.capacityBytes - position;
    const wraps = record > tail;
    if (!this.#hasSpace(wraps ? tail + record : record)) return -1;
    if (!wraps) return position;
    const word = position >> 2;
    this.#dataWords[word] = RECORD_PADDING;
    this.#dataWords[word + 1] = 0;
    this.#write = (this.#write + tail) | 0;
    return 0;
  }

  /** Whether `need` bytes are free; reloads READ only when the cached value says no. */
  #hasSpace(need: number): boolean {
    if (this.capacityBytes - ((this.#write - this.#readCache) >>> 0) >= need) return true;
    const read = Atomics.load(this.#control, RingWord.READ);
    // READ only moves forward, and never past what we published.
    assert(((read - this.#readCache) >>> 0) <= ((this.#published - this.#readCache) >>> 0), 'ring producer: READ moved backwards or past WRITE');
    this.#readCache = read;
    const used = (this.#write - read) >>> 0;
    assert(used <= this.capacityBytes, 'ring producer: more bytes in flight than capacity');
    return this.capacityBytes - used >= need;
  }

  /** Writes the record header of a frame whose payload is in place, and stages it. */
  #seal(position: number, length: number): void {
    assert((position & 7) === 0, 'ring producer: record position not 8-aligned');
    const word = position >> 2;
    this.#dataWords[word] = length;
    this.#dataWords[word + 1] = this.#seq;
    this.#seq = (this.#seq + 1) | 0;
    this.#write = (this.#write + recordBytes(length)) | 0;
  }
}
