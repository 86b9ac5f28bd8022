/**
 * The primary's request queue (§4.3): admitted requests waiting for a prepare slot, FIFO, bounded
 * by count AND by body bytes (each parked request holds its own copy of its body). The core owns
 * it whole: a request the queue cannot take is `dropped` and the host answers it at once.
 *
 * The metadata plane keeps the reference size (2 × prepare_queue_depth); the partition plane
 * holds a deep client window here (thousands of small SendMessages), which is also what group
 * commit joins from (group-commit.ts).
 */
import { BoundedQueue } from '@shoal/stdx';

/** A parked request: anything with the body it keeps (pipeline.ts T). */
export interface Parked {
  readonly body: Uint8Array;
}

export class RequestQueue<T extends Parked> {
  readonly capacity: number;
  readonly bytesMax: number;
  readonly #queue: BoundedQueue<T>;
  #bytes = 0;

  constructor(capacity: number, bytesMax: number) {
    this.capacity = capacity;
    this.bytesMax = bytesMax;
    this.#queue = new BoundedQueue<T>(capacity);
  }

  get length(): number {
    return this.#queue.length;
  }

  /** Body bytes of the parked requests. */
  get bytes(): number {
    return this.#bytes;
  }

  /** False when full by count or by bytes (the caller drops the request). */
  push(q: T): boolean {
    if (this.#bytes + q.body.length > this.bytesMax || !this.#queue.push(q)) return false;
    this.#bytes += q.body.length;
    return true;
  }

  shift(): T | undefined {
    const q = this.#queue.shift();
    if (q !== undefined) this.#bytes -= q.body.length;
    return q;
  }

  /** Request at position i from the head (0 = oldest). */
  at(i: number): T | undefined {
    return this.#queue.at(i);
  }

  [Symbol.iterator](): IterableIterator<T> {
    return this.#queue[Symbol.iterator]();
  }
}
