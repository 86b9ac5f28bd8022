import { assert } from '@shoal/stdx';

/**
 * A table keyed by small non-negative integer ids that hands out the LOWEST free id, like the
 * reference's slab keys, and iterates in ascending id order. Both properties make every replica
 * (and every restore of a snapshot) agree on ids and iteration order without depending on the
 * order deletes happened in.
 */
export class IdTable<T> {
  readonly #items = new Map<number, T>();
  /** Ids in ascending order (kept sorted on insert and delete). */
  readonly #ids: number[] = [];

  get size(): number {
    return this.#ids.length;
  }

  has(id: number): boolean {
    return this.#items.has(id);
  }

  get(id: number): T | undefined {
    return this.#items.get(id);
  }

  /** The lowest id not in use. */
  nextId(): number {
    let expected = 0;
    for (const id of this.#ids) {
      if (id !== expected) return expected;
      expected++;
    }
    return expected;
  }

  insert(id: number, item: T): void {
    assert(Number.isInteger(id) && id >= 0, `IdTable: bad id ${id}`);
    assert(!this.#items.has(id), `IdTable: id ${id} already present`);
    this.#items.set(id, item);
    let at = this.#ids.length;
    while (at > 0 && (this.#ids[at - 1] as number) > id) at--;
    this.#ids.splice(at, 0, id);
  }

  delete(id: number): T | undefined {
    const item = this.#items.get(id);
    if (item === undefined) return undefined;
    this.#items.delete(id);
    const at = this.#ids.indexOf(id);
    assert(at >= 0, 'IdTable: id index out of sync');
    this.#ids.splice(at, 1);
    return item;
  }

  ids(): readonly number[] {
    return this.#ids;
  }

  *entries(): IterableIterator<[number, T]> {
    for (const id of this.#ids) yield [id, this.#items.get(id) as T];
  }

  *values(): IterableIterator<T> {
    for (const id of this.#ids) yield this.#items.get(id) as T;
  }
}
