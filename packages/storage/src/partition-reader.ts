/**
 * PollMessages reads over a PartitionLog: by offset (also `next`: the state machine resolves the
 * consumer's stored offset first), by timestamp, first and last, each with a message `count` and
 * a byte bound (`readAheadBytesMax`) on what one poll reads from disk.
 *
 * Plan, per segment touched: the per-batch index gives every batch's offset range and byte range
 * without touching the log, so a poll reads exactly the bytes of the batches it returns, with one
 * pread per segment into the reader's READ-AHEAD BUFFER (one per reader, i.e. per partition,
 * reused: a fresh 1 MiB buffer per poll costs more than the read itself, in allocation and in
 * page faults on first touch). The buffer holds at most `readAheadBytesMax` bytes (more only when
 * a single batch is larger). CONTRACT: a Poll's buffers are views into it and stay valid until
 * the next call on the same reader; a caller that keeps them longer uses `detachPoll`, or opens
 * the reader with `lendViews` (each poll reads into a pooled buffer of its own, which its views
 * keep until the poll's `release`: a poll reply goes to the socket as views of the read, never
 * copied in user space, and the buffer is reused after the socket wrote it). Then each
 * batch is checked (base_offset and length against the index; with `validateChecksum`, the
 * default, its bytes re-hashed) and a failure FAILS THE POLL CLOSED with a typed error. The
 * re-hash is ONE XXH3 of the whole record against the record digest the segment holds in memory
 * (taken when the bytes were known good, record-digests.ts): ~40 µs per MiB. A record without one
 * (an index decoded from disk) gets the full check, `batch_checksum` and every frame checksum
 * (~1 µs per 1 KiB frame: it was the consume path's largest cost), then its digest is recorded.
 * A digest mismatch runs the full check too, for the precise reason, and fails closed either way.
 * A batch only partly wanted (the poll starts inside it, or `count` ends inside it) is cut with
 * protocol's `sliceBatchParts`: a new 256-byte header and a
 * view of the original frames, nothing re-encoded.
 *
 *   segment A                      segment B
 *   [b0][b1 ◂target inside][b2]    [b3][b4 ◂count ends inside] ...
 *        └ slice ────────┘ └ whole ┘ └whole┘└ slice ┘
 *
 * The bound: batches are added while the bytes read stay <= readAheadBytesMax, except that the
 * first batch is always read (a poll must make progress even when one batch is larger).
 */
import { sliceBatchParts, validateBatch, xxh3_64 } from '@shoal/protocol';
import { DiskError, type DiskFault, faultOf } from './disk.js';
import type { PartitionLog } from './partition-log.js';
import type { Segment } from './segment.js';
import { NO_DIGEST } from './record-digests.js';
import type { SegmentIndex } from './segment-index.js';
import { type ReadBufferPool, readBufferPool } from './read-buffer-pool.js';
import { batchBaseOffset, batchLength, batchMessageCount } from './segment.js';

export interface ReaderOptions {
  /** `system.partition.validate_checksum` (default true). */
  readonly validateChecksum?: boolean;
  /** Most bytes one poll reads (default 1 MiB; at least one whole batch is always read). */
  readonly readAheadBytesMax?: number;
  /**
   * Each poll reads into buffers of its own instead of the reused read-ahead buffer, so its
   * views stay valid after the next poll: a poll reply handed to a socket as views (no copy out
   * of the read) while the next poll runs. Default false.
   */
  readonly lendViews?: boolean;
}

export interface PolledBatch {
  /** Buffers whose concatenation is the batch as replied (one when whole, two when sliced). */
  readonly parts: readonly Uint8Array[];
  readonly firstOffset: number;
  readonly messageCount: number;
  readonly byteLength: number;
  readonly sliced: boolean;
}

export interface Poll {
  readonly batches: readonly PolledBatch[];
  readonly messageCount: number;
  /** Offset of the first message returned (the requested one when nothing is returned). */
  readonly firstOffset: number;
  /** Offset after the last message returned. */
  readonly nextOffset: number;
  readonly bytes: number;
  /**
   * `lendViews`: gives this poll's pooled read buffers back (read-buffer-pool.ts). Call it once
   * nothing references the views any more (after the socket wrote them); never calling it is
   * safe. Idempotent; a no-op for other readers.
   */
  readonly release: () => void;
}

export type ReadError =
  | {
      readonly kind: 'corrupt_batch';
      readonly reason: string;
      readonly segmentStart: number;
      readonly position: number;
      readonly offset: number;
    }
  | { readonly kind: 'io'; readonly fault: DiskFault };

export type PollResult = { readonly ok: true; readonly value: Poll } | { readonly ok: false; readonly error: ReadError };

class CorruptBatch extends Error {
  readonly error: ReadError;
  constructor(error: ReadError) {
    super(error.kind);
    this.error = error;
  }
}

export class PartitionReader {
  readonly #log: PartitionLog;
  readonly validateChecksum: boolean;
  readonly readAheadBytesMax: number;
  readonly lendViews: boolean;
  #buffer: Uint8Array;
  #used = 0;
  #fullChecks = 0;
  readonly #pool: ReadBufferPool | null;
  /** `lendViews`: the pooled buffer this poll carves its reads from, and all it took. */
  #lent: Uint8Array | null = null;
  #lentUsed = 0;
  #held: Uint8Array[] = [];

  constructor(log: PartitionLog, options: ReaderOptions = {}) {
    this.#log = log;
    this.validateChecksum = options.validateChecksum ?? true;
    this.readAheadBytesMax = options.readAheadBytesMax ?? 1 << 20;
    this.lendViews = options.lendViews ?? false;
    // Twice the read-ahead: a poll reads at most max(readAheadBytesMax, its first batch), and a
    // full batch of 1,000 × 1 KiB messages (~1.07 MB) is just above the default 1 MiB.
    this.#pool = this.lendViews ? readBufferPool(2 * this.readAheadBytesMax) : null;
    this.#buffer = new Uint8Array(0);
  }

  /** Records verified frame by frame so far (no record digest, or a mismatch): the slow check. */
  get fullChecks(): number {
    return this.#fullChecks;
  }

  /** Space for `length` more bytes of this poll in the read-ahead buffer. */
  #reserve(length: number): { buffer: Uint8Array; at: number } {
    if (this.#pool !== null) return this.#reserveLent(this.#pool, length);
    if (this.#used + length > this.#buffer.length) {
      // Views already handed out keep the old buffer alive; the new one serves the rest.
      this.#buffer = new Uint8Array(Math.max(length, this.readAheadBytesMax));
      this.#used = 0;
    }
    const at = this.#used;
    this.#used += length;
    return { buffer: this.#buffer, at };
  }

  /**
   * Lent views: space in a pooled buffer this poll holds until its `release` (a poll's reads
   * fit one buffer unless its first batch alone is larger, which gets an exact, unpooled one).
   * Not zero-filled: the read fills every byte it hands out or fails the poll.
   */
  #reserveLent(pool: ReadBufferPool, length: number): { buffer: Uint8Array; at: number } {
    if (this.#lent !== null && this.#lentUsed + length <= this.#lent.length) {
      const at = this.#lentUsed;
      this.#lentUsed += length;
      return { buffer: this.#lent, at };
    }
    if (length > pool.bufferBytes) return { buffer: Buffer.allocUnsafeSlow(length), at: 0 };
    this.#lent = pool.take();
    this.#held.push(this.#lent);
    this.#lentUsed = length;
    return { buffer: this.#lent, at: 0 };
  }

  /** Messages from the first one with offset >= `offset` (offsets below the log start read from it). */
  byOffset(offset: number, count: number): PollResult {
    try {
      return { ok: true, value: this.#read(offset, count) };
    } catch (error) {
      if (error instanceof CorruptBatch) return { ok: false, error: error.error };
      if (error instanceof DiskError) return { ok: false, error: { kind: 'io', fault: faultOf(error) } };
      throw error;
    }
  }

  /** `next` polling: from the offset the state machine resolved (stored consumer offset + 1). */
  next(offset: number, count: number): PollResult {
    return this.byOffset(offset, count);
  }

  first(count: number): PollResult {
    return this.byOffset(this.#log.startOffset, count);
  }

  /** The last `count` messages. */
  last(count: number): PollResult {
    const start = Math.max(this.#log.startOffset, this.#log.nextOffset - Math.max(0, count));
    return this.byOffset(start, count);
  }

  /** From the first batch whose base_timestamp >= `timestamp` (µs). */
  byTimestamp(timestamp: number, count: number): PollResult {
    try {
      for (const segment of this.#log.segments) {
        if (segment.empty || segment.lastTimestamp < timestamp) continue;
        const index = this.#log.indexOf(segment);
        const at = index.ceilByTimestamp(timestamp);
        if (at < index.length) return this.byOffset(index.offsetAt(at), count);
      }
    } catch (error) {
      if (error instanceof DiskError) return { ok: false, error: { kind: 'io', fault: faultOf(error) } };
      throw error;
    }
    return { ok: true, value: emptyPoll(this.#log.nextOffset) };
  }

  #read(requested: number, count: number): Poll {
    this.#used = 0;
    this.#lent = null;
    this.#held = [];
    let target = Math.max(requested, this.#log.startOffset);
    if (count <= 0 || target >= this.#log.nextOffset) return emptyPoll(Math.min(requested, this.#log.nextOffset));
    const batches: PolledBatch[] = [];
    let remaining = count;
    let budget = this.readAheadBytesMax;
    let bytes = 0;
    const firstOffset = target;
    while (remaining > 0 && target < this.#log.nextOffset) {
      const segment = this.#log.segmentFor(target) as Segment;
      const read = this.#readSegment(segment, target, remaining, budget, batches.length === 0);
      if (read.batches.length === 0) break;
      for (const b of read.batches) {
        batches.push(b);
        remaining -= b.messageCount;
        bytes += b.byteLength;
      }
      budget -= read.bytesRead;
      target = read.nextOffset;
      if (budget <= 0) break;
    }
    const release = this.#pool === null ? noop : this.#pool.releaser(this.#held);
    return { batches, messageCount: count - remaining, firstOffset, nextOffset: target, bytes, release };
  }

  #readSegment(
    segment: Segment,
    target: number,
    remaining: number,
    budget: number,
    mustProgress: boolean,
  ): { batches: PolledBatch[]; bytesRead: number; nextOffset: number } {
    const index = this.#log.indexOf(segment);
    const first = index.floorByOffset(target);
    const batchEnd = (k: number): number => (k + 1 < index.length ? index.positionAt(k + 1) : segment.size);
    const batchCount = (k: number): number => (k + 1 < index.length ? index.offsetAt(k + 1) : segment.endOffset + 1) - index.offsetAt(k);
    // Plan the batch range [first, last] under the message count and byte bounds.
    let last = first - 1;
    let planned = 0;
    let messages = 0;
    for (let k = first; k < index.length && messages < remaining; k++) {
      const length = batchEnd(k) - index.positionAt(k);
      if (planned + length > budget && !(mustProgress && k === first)) break;
      planned += length;
      messages += batchCount(k) - (k === first ? target - index.offsetAt(k) : 0);
      last = k;
    }
    if (last < first) return { batches: [], bytesRead: 0, nextOffset: target };
    const start = index.positionAt(first);
    const region = this.#reserve(planned);
    const buffer = region.buffer.subarray(region.at, region.at + planned);
    let got = 0;
    while (got < planned) {
      const n = this.#log.readLog(segment, buffer, got, planned - got, start + got);
      if (n === 0) {
        throw new CorruptBatch({ kind: 'corrupt_batch', reason: 'log_shorter_than_index', segmentStart: segment.startOffset, position: start + got, offset: target });
      }
      got += n;
    }
    const out: PolledBatch[] = [];
    let left = remaining;
    let offset = target;
    for (let k = first; k <= last; k++) {
      const at = index.positionAt(k) - start;
      const length = batchEnd(k) - index.positionAt(k);
      const bytes = buffer.subarray(at, at + length);
      const base = index.offsetAt(k);
      const countK = batchCount(k);
      this.#check(bytes, segment, index, k, countK);
      const from = k === first ? offset - base : 0;
      const take = Math.min(countK - from, left);
      if (from === 0 && take === countK) {
        out.push({ parts: [bytes], firstOffset: base, messageCount: countK, byteLength: length, sliced: false });
      } else {
        const slice = sliceBatchParts(bytes, from, from + take);
        if (!slice.ok) {
          throw new CorruptBatch({ kind: 'corrupt_batch', reason: slice.reason, segmentStart: segment.startOffset, position: index.positionAt(k), offset: base });
        }
        out.push({
          parts: [slice.value.header, slice.value.frames],
          firstOffset: base + from,
          messageCount: take,
          byteLength: slice.value.batchLength,
          sliced: true,
        });
      }
      left -= take;
      offset = base + from + take;
    }
    return { batches: out, bytesRead: planned, nextOffset: offset };
  }

  /** Entry `k` of `index` read as `bytes`: throws CorruptBatch unless it is the record written. */
  #check(bytes: Uint8Array, segment: Segment, index: SegmentIndex, k: number, count: number): void {
    const base = index.offsetAt(k);
    const fail = (reason: string): never => {
      throw new CorruptBatch({ kind: 'corrupt_batch', reason, segmentStart: segment.startOffset, position: index.positionAt(k), offset: base });
    };
    if (batchLength(bytes) !== bytes.length) fail('batch_length_mismatch');
    if (batchBaseOffset(bytes) !== base) fail('base_offset_mismatch');
    if (batchMessageCount(bytes) !== count) fail('message_count_mismatch');
    if (!this.validateChecksum) return;
    const known = segment.digests.at(k);
    if (known !== NO_DIGEST && xxh3_64(bytes) === known) return;
    this.#fullChecks += 1;
    const verdict = validateBatch(bytes);
    if (!verdict.ok) fail(verdict.reason);
    // Self-consistent bytes that are not the record written (a misdirected write of another batch).
    if (known !== NO_DIGEST) fail('record_digest_mismatch');
    segment.digests.set(k, xxh3_64(bytes));
  }
}

/**
 * The poll's bytes as few parts as possible: adjacent views of one read (consecutive whole
 * records, a slice's frames followed by the next record) joined into one view, no copy. A poll
 * of 1,000 single-message records was 1,000 parts, so 1,000 socket writes per reply.
 */
export function pollParts(poll: Poll): Uint8Array[] {
  const out: Uint8Array[] = [];
  let run: Uint8Array | null = null;
  let runLength = 0;
  const flush = (): void => {
    if (run !== null) out.push(runLength === run.length ? run : new Uint8Array(run.buffer, run.byteOffset, runLength));
  };
  for (const batch of poll.batches) {
    for (const part of batch.parts) {
      if (run !== null && run.buffer === part.buffer && run.byteOffset + runLength === part.byteOffset) {
        runLength += part.length;
        continue;
      }
      flush();
      run = part;
      runLength = part.length;
    }
  }
  flush();
  return out;
}

/** A copy of `poll` that owns its bytes (safe to keep past the next poll on the same reader). */
export function detachPoll(poll: Poll): Poll {
  return {
    ...poll,
    batches: poll.batches.map((b) => ({ ...b, parts: b.parts.map((part) => part.slice()) })),
  };
}

function emptyPoll(at: number): Poll {
  return { batches: [], messageCount: 0, firstOffset: at, nextOffset: at, bytes: 0, release: noop };
}

function noop(): void {}
