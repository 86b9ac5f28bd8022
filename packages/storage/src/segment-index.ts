/**
 * The segment index `NNNNNNNNNNNNNNNNNNNN.index` (storage-engine.mdx "Indexes", §9.5): a flat
 * array of 24-byte little-endian entries, no header, no padding:
 *
 *   off size field
 *    0    8  offset     absolute base_offset of a batch
 *    8    8  timestamp  its base_timestamp (µs)
 *   16    8  position   byte position of that batch in the .log
 *
 * Shoal writes ONE ENTRY PER BATCH (the reference writes one per flush chunk; a state-transfer
 * receiver one per batch, so both are legal readers' input). Per batch makes the index exact:
 * a poll finds the batch holding an offset, or the first batch at or after a timestamp, by binary
 * search alone, and knows each batch's byte range (`position[i+1] − position[i]`) without reading
 * the log. All entries of one append are written with one pwrite, AFTER the batch bytes.
 *
 * In memory the three columns are Float64Arrays (u64 values are safe integers: offsets and byte
 * positions stay far below 2^53, and µs timestamps until the year 2255).
 */
import { assert } from '@shoal/stdx';

export const INDEX_ENTRY_SIZE = 24;

export class SegmentIndex {
  #offsets: Float64Array;
  #timestamps: Float64Array;
  #positions: Float64Array;
  #length = 0;

  constructor(capacity = 64) {
    this.#offsets = new Float64Array(capacity);
    this.#timestamps = new Float64Array(capacity);
    this.#positions = new Float64Array(capacity);
  }

  get length(): number {
    return this.#length;
  }

  offsetAt(i: number): number {
    return this.#offsets[i] as number;
  }

  timestampAt(i: number): number {
    return this.#timestamps[i] as number;
  }

  positionAt(i: number): number {
    return this.#positions[i] as number;
  }

  /** Appends one entry; offsets and positions must strictly increase (asserted). */
  push(offset: number, timestamp: number, position: number): void {
    const n = this.#length;
    if (n > 0) {
      assert(offset > (this.#offsets[n - 1] as number), `index: offset ${offset} not above ${this.#offsets[n - 1]}`);
      assert(position > (this.#positions[n - 1] as number), `index: position ${position} not above ${this.#positions[n - 1]}`);
    }
    if (n === this.#offsets.length) this.#grow(n * 2);
    this.#offsets[n] = offset;
    this.#timestamps[n] = timestamp;
    this.#positions[n] = position;
    this.#length = n + 1;
  }

  /** Drops entries from `length` on. */
  truncate(length: number): void {
    assert(length >= 0 && length <= this.#length, 'index.truncate: out of range');
    this.#length = length;
  }

  /** Index of the last entry with offset <= `offset`, or -1. */
  floorByOffset(offset: number): number {
    let lo = 0;
    let hi = this.#length - 1;
    let found = -1;
    while (lo <= hi) {
      const mid = (lo + hi) >>> 1;
      if ((this.#offsets[mid] as number) <= offset) {
        found = mid;
        lo = mid + 1;
      } else {
        hi = mid - 1;
      }
    }
    return found;
  }

  /**
   * Index of the first entry with timestamp >= `timestamp`, or `length` when none. Timestamps are
   * non-decreasing (stamping guarantees it); on disorder the search still returns an entry whose
   * timestamp is >= the target when one exists at or after it.
   */
  ceilByTimestamp(timestamp: number): number {
    let lo = 0;
    let hi = this.#length;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if ((this.#timestamps[mid] as number) < timestamp) lo = mid + 1;
      else hi = mid;
    }
    return lo;
  }

  /** Entries `[from, to)` encoded for the file. */
  encode(from = 0, to = this.#length): Uint8Array {
    const out = new Uint8Array((to - from) * INDEX_ENTRY_SIZE);
    const view = new DataView(out.buffer);
    for (let i = from; i < to; i++) {
      const at = (i - from) * INDEX_ENTRY_SIZE;
      view.setBigUint64(at, BigInt(this.#offsets[i] as number), true);
      view.setBigUint64(at + 8, BigInt(this.#timestamps[i] as number), true);
      view.setBigUint64(at + 16, BigInt(this.#positions[i] as number), true);
    }
    return out;
  }

  #grow(capacity: number): void {
    const grow = (a: Float64Array): Float64Array => {
      const next = new Float64Array(capacity);
      next.set(a.subarray(0, this.#length));
      return next;
    };
    this.#offsets = grow(this.#offsets);
    this.#timestamps = grow(this.#timestamps);
    this.#positions = grow(this.#positions);
  }
}

/** One encoded entry (used when the append path builds its index bytes directly). */
export function writeIndexEntry(out: DataView, at: number, offset: number, timestamp: number, position: number): void {
  out.setBigUint64(at, BigInt(offset), true);
  out.setBigUint64(at + 8, BigInt(timestamp), true);
  out.setBigUint64(at + 16, BigInt(position), true);
}

export type IndexDecode =
  | { readonly kind: 'ok'; readonly index: SegmentIndex; readonly tornBytes: number }
  /** Entries not strictly increasing, values not safe integers, or the first entry not at 0. */
  | { readonly kind: 'invalid'; readonly reason: string; readonly at: number };

/**
 * Decodes index file bytes. A trailing partial entry is reported as `tornBytes` (the whole
 * entries before it are kept). `startOffset` is the segment's start: the first entry must be the
 * batch at position 0 with that offset.
 */
export function decodeIndex(bytes: Uint8Array, startOffset: number): IndexDecode {
  const count = Math.floor(bytes.length / INDEX_ENTRY_SIZE);
  const index = new SegmentIndex(Math.max(16, count));
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const safe = BigInt(Number.MAX_SAFE_INTEGER);
  let previousOffset = -1;
  let previousPosition = -1;
  for (let i = 0; i < count; i++) {
    const at = i * INDEX_ENTRY_SIZE;
    const offset = view.getBigUint64(at, true);
    const timestamp = view.getBigUint64(at + 8, true);
    const position = view.getBigUint64(at + 16, true);
    if (offset > safe || timestamp > safe || position > safe) return { kind: 'invalid', reason: 'index_value_not_safe', at: i };
    const o = Number(offset);
    const p = Number(position);
    if (i === 0 && (p !== 0 || o !== startOffset)) return { kind: 'invalid', reason: 'index_first_entry_not_segment_start', at: 0 };
    if (o <= previousOffset || p <= previousPosition) return { kind: 'invalid', reason: 'index_not_monotonic', at: i };
    index.push(o, Number(timestamp), p);
    previousOffset = o;
    previousPosition = p;
  }
  return { kind: 'ok', index, tornBytes: bytes.length - count * INDEX_ENTRY_SIZE };
}
