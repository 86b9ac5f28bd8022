/**
 * One namespace of the simulated disk (the volatile or the durable one): normalized absolute
 * path → entry, plus an index of each directory's children so `fsyncDir`, `readdir` and the
 * emptiness checks cost a directory's size rather than the whole disk's (a profile of the VOPR
 * put 15 % of its time in scanning every key for them).
 *
 * Iteration follows the path map's insertion order, and a directory's children follow the same
 * relative order, so the simulated disk consumes its PRNG exactly as it did with a plain Map.
 */
import { assert } from '@shoal/stdx';

const ROOT = '/';

/** The parent of a normalized absolute path other than `/`. */
export function parentOf(path: string): string {
  const at = path.lastIndexOf('/');
  return at <= 0 ? ROOT : path.slice(0, at);
}

export class SimNamespace<E> {
  readonly #entries: Map<string, E>;
  readonly #children = new Map<string, Set<string>>();

  constructor(from?: SimNamespace<E>) {
    this.#entries = from === undefined ? new Map() : new Map(from.#entries);
    for (const key of this.#entries.keys()) this.#link(key);
  }

  get size(): number {
    return this.#entries.size;
  }

  get(path: string): E | undefined {
    return this.#entries.get(path);
  }

  has(path: string): boolean {
    return this.#entries.has(path);
  }

  set(path: string, entry: E): void {
    if (!this.#entries.has(path)) this.#link(path);
    this.#entries.set(path, entry);
  }

  delete(path: string): void {
    if (!this.#entries.delete(path)) return;
    if (path === ROOT) return;
    const parent = parentOf(path);
    const siblings = this.#children.get(parent);
    assert(siblings !== undefined && siblings.delete(path), `SimNamespace: ${path} missing from its parent's index`);
    if (siblings.size === 0) this.#children.delete(parent);
  }

  /** The paths directly under `dir`, in insertion order. */
  childrenOf(dir: string): readonly string[] {
    const set = this.#children.get(dir);
    return set === undefined ? [] : [...set];
  }

  hasChildren(dir: string): boolean {
    return (this.#children.get(dir)?.size ?? 0) > 0;
  }

  keys(): IterableIterator<string> {
    return this.#entries.keys();
  }

  values(): IterableIterator<E> {
    return this.#entries.values();
  }

  [Symbol.iterator](): IterableIterator<[string, E]> {
    return this.#entries[Symbol.iterator]();
  }

  #link(path: string): void {
    if (path === ROOT) return;
    const parent = parentOf(path);
    let set = this.#children.get(parent);
    if (set === undefined) {
      set = new Set();
      this.#children.set(parent, set);
    }
    set.add(path);
  }
}
