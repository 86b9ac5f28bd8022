/**
 * The consuming end of an SPSC frame ring. One thread, one consumer per ring (enforced at attach).
 *
 * `read(visitor)` loads WRITE once, hands the visitor a view of every frame published up to it
 * (frames never wrap, so views are never copies), then publishes READ once for the whole batch
 * and rings the producer only if it is parked waiting for at least the space now free.
 *
 * Views point INTO the ring: they are valid until `read` returns. Keep the bytes by copying them
 * (`frame.slice()`), or keep the frame in the ring by returning `false` from the visitor: the
 * batch stops there and that frame is offered again by the next `read` (consumer-side
 * back-pressure, e.g. when the frame's destination is itself full). A visitor that throws leaves
 * its frame unconsumed too; the frames before it are released.
 *
 * Memory ordering: see producer.ts. We read payloads only below the WRITE we loaded with
 * Atomics.load, and we give bytes back with Atomics.store(READ) only after the last read of them.
 */

import { assert } from '@shoal/stdx';
import { type RingHandle, claimEndpoint, openRing } from './handle.js';
import { DoorbellWord, EndpointState, RECORD_HEADER_BYTES, RECORD_PADDING, RingWord, recordBytes } from './layout.js';
import { ParkingSpot, type WaitResult } from './park.js';

/**
 * Receives one frame: a view into the ring (valid until `read` returns) and the ring's `source`
 * tag. Return `false` to leave the frame in the ring and end the batch; anything else consumes it.
 */
export type FrameVisitor = (frame: Uint8Array, source: number) => boolean | void;

/**
 * Like FrameVisitor without allocating a view per frame: the frame is
 * `data[offset, offset + length)`, `data` being the whole data region.
 */
export type FrameVisitorInPlace = (data: Uint8Array, offset: number, length: number, source: number) => boolean | void;

export interface ConsumerOptions {
  /** Passed to every visitor call: which ring the frame came from (Inbox sets the peer index). */
  readonly source?: number;
}

const READY: Promise<WaitResult> = Promise.resolve('ready');

export class RingConsumer {
  readonly capacityBytes: number;
  readonly frameSizeMax: number;
  readonly source: number;

  readonly #control: Int32Array;
  readonly #data: Uint8Array;
  readonly #dataWords: Int32Array;
  readonly #mask: number;
  /** Where we park (the doorbell, maybe shared with other rings of this thread). */
  readonly #consumerSpot: ParkingSpot;
  /** Where the producer parks for space (in the ring's control block). */
  readonly #producerSpot: ParkingSpot;

  /** Our read counter; equal to READ outside `read`. */
  #read: number;
  /** Sequence number expected in the next frame's record header. */
  #seq = 0;
  #reading = false;
  #ended = false;
  #closed = false;

  private constructor(handle: RingHandle, options: ConsumerOptions) {
    const views = openRing(handle);
    this.capacityBytes = views.capacityBytes;
    this.frameSizeMax = views.frameSizeMax;
    this.source = options.source ?? 0;
    this.#control = views.control;
    this.#data = views.data;
    this.#dataWords = views.dataWords;
    this.#mask = views.capacityBytes - 1;
    this.#consumerSpot = new ParkingSpot(views.doorbell, DoorbellWord.DATA_SEQ, DoorbellWord.DATA_PARKED);
    this.#producerSpot = new ParkingSpot(views.control, RingWord.SPACE_SEQ, RingWord.SPACE_WANTED);
    claimEndpoint(views.control, RingWord.CONSUMER_STATE, 'consumer');
    this.#read = Atomics.load(views.control, RingWord.READ);
    assert(this.#read === Atomics.load(views.control, RingWord.INDEX_ORIGIN), 'ring consumer: READ moved before any consumer attached');
  }

  /** Becomes the one consumer of the ring. Call on the consuming thread. */
  static attach(handle: RingHandle, options: ConsumerOptions = {}): RingConsumer {
    return new RingConsumer(handle, options);
  }

  /**
   * Visits every frame published so far (at most `frameCountMax`), then releases them with one
   * store of READ. Returns the number of frames consumed.
   */
  read(visitor: FrameVisitor, frameCountMax: number = Infinity): number {
    return this.#consume(visitor, null, frameCountMax);
  }

  /** `read` without a view per frame: for small frames, where the allocation shows. */
  readInPlace(visitor: FrameVisitorInPlace, frameCountMax: number = Infinity): number {
    return this.#consume(null, visitor, frameCountMax);
  }

  /** Frames are waiting, or the producer closed and `ended` has not been observed yet. */
  hasWork(): boolean {
    if (Atomics.load(this.#control, RingWord.WRITE) !== this.#read) return true;
    return !this.#ended && Atomics.load(this.#control, RingWord.PRODUCER_STATE) === EndpointState.CLOSED;
  }

  /** The producer closed and every frame it published has been consumed. */
  get ended(): boolean {
    if (this.#ended) return true;
    // PRODUCER_STATE before WRITE: the producer stores CLOSED after its last WRITE, so once we
    // see CLOSED, the WRITE we load next is final.
    if (Atomics.load(this.#control, RingWord.PRODUCER_STATE) !== EndpointState.CLOSED) return false;
    if (Atomics.load(this.#control, RingWord.WRITE) !== this.#read) return false;
    this.#ended = true;
    return true;
  }

  /**
   * Resolves once frames may be available, the producer closed, or `timeoutMs` passed, without
   * ever blocking the event loop. Immediately (a resolved promise) when there is work already,
   * including after `ended`: loop on `read`, check `ended`, then `wait`.
   */
  wait(timeoutMs?: number): Promise<WaitResult> {
    assert(!this.#closed, 'ring consumer: wait after close');
    if (this.ended || this.hasWork()) return READY;
    return this.#consumerSpot.park(1, () => this.hasWork(), timeoutMs);
  }

  /** Closes our end: the producer's writes report 'closed' from now on. Wakes a parked producer. */
  close(): void {
    if (this.#closed) return;
    assert(!this.#reading, 'ring consumer: close inside a visitor');
    this.#closed = true;
    Atomics.store(this.#control, RingWord.CONSUMER_STATE, EndpointState.CLOSED);
    this.#producerSpot.ring();
  }

  #consume(visitor: FrameVisitor | null, inPlace: FrameVisitorInPlace | null, frameCountMax: number): number {
    assert(!this.#closed, 'ring consumer: read after close');
    assert(!this.#reading, 'ring consumer: read inside a visitor');
    assert(frameCountMax >= 0, 'ring consumer: negative frame count');
    const write = Atomics.load(this.#control, RingWord.WRITE);
    const start = this.#read;
    assert(((write - start) >>> 0) <= this.capacityBytes, 'ring consumer: WRITE more than capacity ahead of READ');
    if (write === start) return 0;

    const data = this.#data;
    const dataWords = this.#dataWords;
    const capacity = this.capacityBytes;
    let read = start;
    let count = 0;
    this.#reading = true;
    try {
      while (read !== write && count < frameCountMax) {
        const position = read & this.#mask;
        const word = position >> 2;
        const length = dataWords[word] as number;
        const pending = (write - read) >>> 0;
        if (length === RECORD_PADDING) {
          assert(capacity - position <= pending, 'ring consumer: padding past WRITE');
          read = (read + capacity - position) | 0;
          continue;
        }
        assert(length >= 0 && length <= this.frameSizeMax, 'ring consumer: record length out of range');
        const record = recordBytes(length);
        assert(record <= capacity - position, 'ring consumer: record crosses the end of the ring');
        assert(record <= pending, 'ring consumer: record past WRITE');
        assert(dataWords[word + 1] === this.#seq, 'ring consumer: frame sequence gap');
        const payload = position + RECORD_HEADER_BYTES;
        const keep = visitor !== null
          ? visitor(data.subarray(payload, payload + length), this.source)
          : (inPlace as FrameVisitorInPlace)(data, payload, length, this.source);
        if (keep === false) break;
        read = (read + record) | 0;
        this.#seq = (this.#seq + 1) | 0;
        count += 1;
      }
    } finally {
      this.#reading = false;
      this.#release(read, write);
    }
    return count;
  }

  /** Publishes READ once for the batch and wakes the producer if it now has the space it wants. */
  #release(read: number, write: number): void {
    if (read === this.#read) return;
    Atomics.store(this.#control, RingWord.READ, read);
    this.#read = read;
    const wanted = this.#producerSpot.parkedToken();
    // `write` may be stale (the producer published more since): free space is then
    // overestimated, which can only cause a spurious wake-up, never a missed one.
    if (wanted !== 0 && this.capacityBytes - ((write - read) >>> 0) >= wanted) this.#producerSpot.ring();
  }
}
