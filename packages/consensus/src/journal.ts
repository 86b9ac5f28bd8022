/**
 * The in-memory journal: the prepare frames this replica holds (copies: command 6, header + body),
 * keyed by op, with per-entry durability and trust.
 *
 *   watermark        head
 *       │             │
 *   ····┼──[e][e][ ][e][e]         entries above the watermark; holes are allowed (faulty slots,
 *                                  repair in progress); ops <= watermark are compacted away
 *
 * - metadata: the WAL is the durable copy; an entry is `durable` once the host completed its
 *   append. Bounded by `journal_slots` (a checkpoint drains it, §9.1).
 * - partition: memory only (durable on put); the pipeline plus a retained window of committed
 *   entries for repair serving, bounded by count and bytes (`evicted_ring_*`).
 *
 * `trusted` = the entry is known to be the canonical prepare at its op (a canonical header of the
 * current log matched it, or the trusted entry above names it as parent). Only trusted entries
 * are applied (docs/internals-repair.md, "trust").
 *
 * `faulty` = ops whose entry was lost for integrity reasons or that storage could not verify at
 * boot: they are reported blank WITHOUT a nack bit (a lost entry is not "never prepared").
 */
import { assert } from '@shoal/stdx';
import { Command, HEADER_SIZE, OFFSET_COMMAND, PrepareHeaderView } from '@shoal/protocol';
import type { PrepareRecord } from './state-machine.js';
import type { Op } from './types.js';

export interface JournalEntry {
  readonly op: Op;
  readonly checksum: bigint;
  readonly parent: bigint;
  /** The view field of this copy (restamped on retransmit; not part of the identity). */
  readonly view: number;
  readonly commit: Op;
  readonly timestamp: bigint;
  readonly operation: number;
  readonly client: bigint;
  readonly request: bigint;
  readonly requestChecksum: bigint;
  readonly userId: number;
  /** The builder (header `replica`). */
  readonly replica: number;
  /** Header + body, command byte 6, owned by the journal (never handed out without a copy). */
  readonly frame: Uint8Array;
  durable: boolean;
  trusted: boolean;
}

const view = new PrepareHeaderView();

/**
 * A journal entry from a validated prepare frame (command 6 or 19; stored with command 6).
 * Journal frames are immutable once journaled, so effects and retransmits share them instead of
 * copying. A frame the caller does not own (it may reuse the buffer) is copied; a frame the core
 * just built, or one the host handed over (`owned`: exactly `size` bytes, command 6; ingress.ts),
 * is adopted as is.
 */
export function entryFromFrame(frame: Uint8Array, durable: boolean, trusted: boolean, owned = false): JournalEntry {
  const h = view.bind(frame, 0);
  const size = h.size;
  let copy: Uint8Array;
  if (owned && frame.length === size && frame[OFFSET_COMMAND] === Command.Prepare) copy = frame;
  else {
    copy = new Uint8Array(frame.subarray(0, size)); // a copy even of a Buffer (whose slice() is a view)
    copy[OFFSET_COMMAND] = Command.Prepare;
  }
  return {
    op: h.opNumber,
    checksum: h.checksum,
    parent: h.parent,
    view: h.view,
    commit: h.commitNumber,
    timestamp: h.timestamp,
    operation: h.operation,
    client: h.client,
    request: h.request,
    requestChecksum: h.requestChecksum,
    userId: h.userId,
    replica: h.replica,
    frame: copy,
    durable,
    trusted,
  };
}

/** The 256 header bytes of an entry (a view; copy before handing out). */
export function entryHeader(entry: JournalEntry): Uint8Array {
  // A journaled frame is immutable: a changed command byte means someone wrote into its buffer
  // (nemesis: "suffix header must have command 6" on real processes). Crash here, naming it.
  const f = entry.frame;
  if (f[OFFSET_COMMAND] !== Command.Prepare) {
    const where = `frame ${f.length} bytes at ${f.byteOffset} of a ${f.buffer.byteLength}-byte ${f.buffer.constructor.name}`;
    assert(false, `journal entry op ${entry.op} mutated: command ${f[OFFSET_COMMAND]}, ${where}`);
  }
  return f.subarray(0, HEADER_SIZE);
}

export function entryBody(entry: JournalEntry): Uint8Array {
  return entry.frame.subarray(HEADER_SIZE);
}

export class Journal {
  readonly #entries = new Map<Op, JournalEntry>();
  /** Ops <= watermark are compacted away (metadata snapshot watermark / partition evicted floor). */
  #watermark: Op = 0;
  /** Highest op held (or the watermark when empty). */
  #head: Op = 0;
  #lowest: Op = 0;
  #bytes = 0;
  readonly faulty = new Set<Op>();

  get watermark(): Op {
    return this.#watermark;
  }
  get size(): number {
    return this.#entries.size;
  }
  get bytes(): number {
    return this.#bytes;
  }
  /** Highest op held, or the watermark when nothing is held. */
  get head(): Op {
    return this.#head;
  }
  /** Lowest op held, or 0 when nothing is held. */
  get lowest(): Op {
    return this.#entries.size === 0 ? 0 : this.#lowest;
  }

  get(op: Op): JournalEntry | undefined {
    return this.#entries.get(op);
  }

  has(op: Op): boolean {
    return this.#entries.has(op);
  }

  put(entry: JournalEntry): void {
    assert(entry.op > this.#watermark, `journal: op ${entry.op} at or below the watermark ${this.#watermark}`);
    assert(!this.#entries.has(entry.op), `journal: op ${entry.op} already held`);
    this.#entries.set(entry.op, entry);
    this.#bytes += entry.frame.length;
    this.faulty.delete(entry.op);
    if (this.#entries.size === 1 || entry.op < this.#lowest) this.#lowest = entry.op;
    if (entry.op > this.#head) this.#head = entry.op;
  }

  /** Removes every entry with op >= fromOp; returns the removed ops (ascending). */
  truncateFrom(fromOp: Op): Op[] {
    const removed: Op[] = [];
    for (const op of this.#entries.keys()) if (op >= fromOp) removed.push(op);
    removed.sort((a, b) => a - b);
    for (const op of removed) this.#remove(op);
    return removed;
  }

  /** Drops entries with op <= throughOp and raises the watermark to throughOp. */
  compactThrough(throughOp: Op): void {
    if (throughOp <= this.#watermark) return;
    if (throughOp - this.#watermark <= this.#entries.size) {
      for (let op = this.#watermark + 1; op <= throughOp; op++) if (this.#entries.has(op)) this.#remove(op);
    } else {
      for (const op of [...this.#entries.keys()]) if (op <= throughOp) this.#remove(op);
    }
    for (const op of [...this.faulty]) if (op <= throughOp) this.faulty.delete(op);
    this.#watermark = throughOp;
    if (this.#head < throughOp) this.#head = throughOp;
  }

  /** Forgets everything and restarts at `watermark` (state-transfer install). */
  reset(watermark: Op): void {
    for (const op of [...this.#entries.keys()]) this.#remove(op);
    this.faulty.clear();
    this.#watermark = watermark;
    this.#head = watermark;
  }

  #remove(op: Op): void {
    const entry = this.#entries.get(op);
    assert(entry !== undefined, 'journal: removing a missing op');
    this.#entries.delete(op);
    this.#bytes -= entry.frame.length;
    if (this.#entries.size === 0) {
      this.#head = Math.max(this.#watermark, 0);
      this.#lowest = 0;
      return;
    }
    if (op === this.#head) {
      let next = op - 1;
      while (next > this.#watermark && !this.#entries.has(next)) next--;
      this.#head = Math.max(next, this.#watermark);
    }
    if (op === this.#lowest) {
      let next = op + 1;
      while (!this.#entries.has(next)) next++;
      this.#lowest = next;
    }
  }

  /** Clears the trust marks of every entry above `op` (a new log view is being installed). */
  untrustAbove(op: Op): void {
    for (const entry of this.#entries.values()) if (entry.op > op) entry.trusted = false;
  }

  /** Ops held, ascending (tests, deep invariants). */
  ops(): Op[] {
    return [...this.#entries.keys()].sort((a, b) => a - b);
  }

  /** Deep check: keys match entries, byte accounting, head/lowest, hash chain of adjacent same-view entries. */
  checkDeep(): void {
    let bytes = 0;
    let head = this.#watermark;
    let lowest = Number.POSITIVE_INFINITY;
    for (const [op, entry] of this.#entries) {
      assert(op === entry.op, 'journal: key/op mismatch');
      assert(op > this.#watermark, 'journal: entry at or below watermark');
      assert(entry.frame[OFFSET_COMMAND] === Command.Prepare, 'journal: entry command is not Prepare');
      bytes += entry.frame.length;
      head = Math.max(head, op);
      lowest = Math.min(lowest, op);
      const below = this.#entries.get(op - 1);
      if (below !== undefined && entry.trusted && below.trusted) {
        assert(entry.parent === below.checksum, `journal: trusted entries ${op - 1}/${op} do not chain`);
      }
    }
    assert(bytes === this.#bytes, 'journal: byte accounting');
    assert(head === this.#head, `journal: head ${this.#head} != ${head}`);
    if (this.#entries.size > 0) assert(lowest === this.#lowest, 'journal: lowest');
  }
}

/** The state machine's view of a journaled prepare. */
export function recordOf(entry: JournalEntry): PrepareRecord {
  return {
    op: entry.op,
    operation: entry.operation,
    client: entry.client,
    request: entry.request,
    userId: entry.userId,
    timestamp: entry.timestamp,
    body: entryBody(entry),
  };
}

