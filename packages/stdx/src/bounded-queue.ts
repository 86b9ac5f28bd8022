/**
 * Fixed-capacity FIFO on a ring of slots. `push` returns false when full (back-pressure is the
 * caller's decision, never a silent drop here).
 *
 *   head ─▶ [x][x][x][ ][ ] ◀─ tail = (head + length) % capacity
 */
export class BoundedQueue<T> {
  readonly capacity: number;
  #slots: (T | undefined)[];
  #head = 0;
  #length = 0;

  constructor(capacity: number) {
    if (!(Number.isInteger(capacity) && capacity > 0)) throw new RangeError(`bad capacity ${capacity}`);
    this.capacity = capacity;
    this.#slots = new Array<T | undefined>(capacity).fill(undefined);
  }

  get length(): number {
    return this.#length;
  }

  get full(): boolean {
    return this.#length === this.capacity;
  }

  get empty(): boolean {
    return this.#length === 0;
  }

  push(item: T): boolean {
    if (this.#length === this.capacity) return false;
    this.#slots[(this.#head + this.#length) % this.capacity] = item;
    this.#length++;
    return true;
  }

  shift(): T | undefined {
    if (this.#length === 0) return undefined;
    const item = this.#slots[this.#head];
    this.#slots[this.#head] = undefined;
    this.#head = (this.#head + 1) % this.capacity;
    this.#length--;
    return item;
  }

  peek(): T | undefined {
    return this.#length === 0 ? undefined : this.#slots[this.#head];
  }

  /** Item at position i from the head (0 = oldest). */
  at(i: number): T | undefined {
    if (i < 0 || i >= this.#length) return undefined;
    return this.#slots[(this.#head + i) % this.capacity];
  }

  clear(): void {
    this.#slots.fill(undefined);
    this.#head = 0;
    this.#length = 0;
  }

  *[Symbol.iterator](): IterableIterator<T> {
    for (let i = 0; i < this.#length; i++) yield this.#slots[(this.#head + i) % this.capacity] as T;
  }
}
