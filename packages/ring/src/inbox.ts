/**
 * Inbox: one consumer thread reading several SPSC rings (one per peer thread) with ONE parking
 * spot. Every inbound ring was created with the same doorbell, so any producer's flush rings the
 * same DATA_SEQ word and a single `Atomics.waitAsync` covers them all.
 *
 * ```
 *   peer 0 ── ring 0→k ──┐
 *   peer 1 ── ring 1→k ──┼──▶  Inbox of thread k ── read(visitor(frame, source)) round-robin
 *   peer 2 ── ring 2→k ──┘         ▲
 *        (each producer: store WRITE, then if DATA_PARKED: add DATA_SEQ, notify)
 * ```
 *
 * Fairness: `read` visits the rings round-robin, starting one ring further each call, and takes
 * at most `frameCountMaxPerRing` frames from each, so one busy peer cannot starve the others.
 * A visitor returning `false` leaves that frame in its ring and moves on to the next ring.
 */

import { assert } from '@shoal/stdx';
import { type FrameVisitor, type FrameVisitorInPlace, RingConsumer } from './consumer.js';
import { type RingHandle, checkDoorbell } from './handle.js';
import { DoorbellWord } from './layout.js';
import { ParkingSpot, type WaitResult } from './park.js';

const READY: Promise<WaitResult> = Promise.resolve('ready');

export class Inbox {
  /** Indexed by source (peer thread index); null where there is no ring (e.g. ourselves). */
  readonly #consumers: readonly (RingConsumer | null)[];
  readonly #open: RingConsumer[];
  readonly #spot: ParkingSpot;
  #next = 0;
  #closed = false;

  private constructor(handles: readonly (RingHandle | null)[]) {
    const first = handles.find((handle) => handle !== null);
    assert(first !== undefined, 'inbox: no rings');
    const doorbell = checkDoorbell(first.doorbell);
    const doorbellId = Atomics.load(doorbell, DoorbellWord.ID);
    this.#consumers = handles.map((handle, source) => {
      if (handle === null) return null;
      // Same id = same doorbell buffer: otherwise this ring's producer would ring a word we
      // never wait on, and its frames would sit there until some other ring woke us.
      const id = Atomics.load(checkDoorbell(handle.doorbell), DoorbellWord.ID);
      assert(id === doorbellId, `inbox: ring from source ${source} has another doorbell`);
      return RingConsumer.attach(handle, { source });
    });
    this.#open = this.#consumers.filter((consumer) => consumer !== null);
    this.#spot = new ParkingSpot(doorbell, DoorbellWord.DATA_SEQ, DoorbellWord.DATA_PARKED);
  }

  /** Attaches as consumer of every ring; `handles[source]` is the ring from peer `source`. */
  static attach(handles: readonly (RingHandle | null)[]): Inbox {
    return new Inbox(handles);
  }

  /** The ring from `source`, for per-ring state (`ended`, `hasWork`). */
  consumer(source: number): RingConsumer | null {
    return this.#consumers[source] ?? null;
  }

  /** One round-robin pass over the rings. Returns the frames consumed. */
  read(visitor: FrameVisitor, frameCountMaxPerRing: number = Infinity): number {
    return this.#pass((consumer) => consumer.read(visitor, frameCountMaxPerRing));
  }

  readInPlace(visitor: FrameVisitorInPlace, frameCountMaxPerRing: number = Infinity): number {
    return this.#pass((consumer) => consumer.readInPlace(visitor, frameCountMaxPerRing));
  }

  /** Every producer closed and every frame was consumed. */
  get ended(): boolean {
    this.#dropEnded();
    return this.#open.length === 0;
  }

  /** Resolves when any ring has frames or a newly closed producer, or after `timeoutMs`. */
  wait(timeoutMs?: number): Promise<WaitResult> {
    assert(!this.#closed, 'inbox: wait after close');
    if (this.ended || this.#hasWork()) return READY;
    return this.#spot.park(1, () => this.#hasWork(), timeoutMs);
  }

  close(): void {
    if (this.#closed) return;
    this.#closed = true;
    for (const consumer of this.#consumers) consumer?.close();
  }

  #pass(readOne: (consumer: RingConsumer) => number): number {
    assert(!this.#closed, 'inbox: read after close');
    const open = this.#open;
    const ringCount = open.length;
    if (ringCount === 0) return 0;
    const start = this.#next % ringCount;
    this.#next = start + 1;
    let total = 0;
    for (let i = 0; i < ringCount; i++) {
      total += readOne(open[(start + i) % ringCount] as RingConsumer);
    }
    return total;
  }

  #hasWork(): boolean {
    for (const consumer of this.#open) {
      if (consumer.hasWork()) return true;
    }
    return false;
  }

  #dropEnded(): void {
    for (let i = this.#open.length - 1; i >= 0; i--) {
      if ((this.#open[i] as RingConsumer).ended) this.#open.splice(i, 1);
    }
  }
}
