/**
 * Read-your-writes fences of one connection: per partition group, the op of the latest
 * committed reply it received. A poll carries its group's fence (`fenceOp`) so a replica that
 * has not applied that op does not serve it. Bounded: past `ACKED_GROUPS_MAX` groups the oldest
 * is forgotten, and a forgotten group's fence becomes "everything" (only the primary serves it).
 */

/** Partition groups whose acknowledged op a connection remembers. */
export const ACKED_GROUPS_MAX = 1024;
/** The fence of a group forgotten after an overflow: no replica but the primary serves it. */
export const ACKED_UNKNOWN = (1n << 64n) - 1n;

export class AckedFences {
  readonly #acked = new Map<bigint, bigint>();
  /** Entries were dropped: an unknown group's fence is then "everything". */
  #overflow = false;

  /** The fence of `group` (0: no write of this connection to wait for). */
  of(group: bigint): bigint {
    return this.#acked.get(group) ?? (this.#overflow ? ACKED_UNKNOWN : 0n);
  }

  note(group: bigint, op: bigint): void {
    const known = this.#acked.get(group);
    if (known !== undefined && known >= op) return;
    if (known === undefined && this.#acked.size >= ACKED_GROUPS_MAX) {
      const oldest = this.#acked.keys().next().value as bigint;
      this.#acked.delete(oldest);
      this.#overflow = true;
    }
    this.#acked.set(group, op);
  }
}
