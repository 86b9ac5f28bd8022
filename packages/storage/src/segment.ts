/**
 * One segment of a partition log: `NNNNNNNNNNNNNNNNNNNN.log` (the start offset, zero-padded to 20
 * digits) holding stamped batch records verbatim, and its `.index` (segment-index.ts).
 *
 *   .log:  [batch][batch][batch]...[zero fill when preallocated]
 *           ▲ position 0           ▲ size (logical end: the next append lands here)
 *
 * A segment is `sealed` once an append crossed `segment_size` (the crossing batch lands whole:
 * soft limit); only the last segment of a partition is active. Bounds are kept in memory:
 * `[startOffset, endOffset]` (endOffset = startOffset − 1 while empty), first/last batch
 * timestamps, logical size. The index is always loaded for the active segment and loaded on
 * demand (and evictable) for sealed ones.
 *
 * This file also holds the batch walker used by boot recovery and state-transfer install.
 */
import { assert } from '@shoal/stdx';
import { BATCH_BYTES_MAX_DEFAULT, BATCH_HEADER, BATCH_HEADER_SIZE, MESSAGE_FRAME_HEADER_SIZE, validateBatch } from '@shoal/protocol';
import type { Disk, Fd } from './disk.js';
import { joinPath } from './disk.js';
import type { SegmentIndex } from './segment-index.js';
import { RecordDigests } from './record-digests.js';

export const LOG_EXTENSION = '.log';
export const INDEX_EXTENSION = '.index';
const NAME_DIGITS = 20;
const NAME_RE = /^(\d{20})\.(log|index)$/;

export function segmentBaseName(startOffset: number): string {
  assert(Number.isSafeInteger(startOffset) && startOffset >= 0, `segment: bad start offset ${startOffset}`);
  return String(startOffset).padStart(NAME_DIGITS, '0');
}

/** `{ start, kind }` of a segment file name, or null for anything else. */
export function parseSegmentFileName(name: string): { readonly start: number; readonly kind: 'log' | 'index' } | null {
  const m = NAME_RE.exec(name);
  if (m === null) return null;
  const start = Number(m[1]);
  if (!Number.isSafeInteger(start)) return null;
  return { start, kind: m[2] as 'log' | 'index' };
}

export class Segment {
  readonly startOffset: number;
  readonly logPath: string;
  readonly indexPath: string;
  /** Logical bytes of batches in the .log (the file may be longer: preallocated zeros). */
  size = 0;
  /** Bytes of the .index file in use (a multiple of 24). */
  indexBytes = 0;
  endOffset: number;
  firstTimestamp = 0;
  lastTimestamp = 0;
  sealed = false;
  /** Loaded index (always for the active segment). */
  index: SegmentIndex | null = null;
  /** Per index entry: the record's digest while known (record-digests.ts); outlives `index`. */
  readonly digests = new RecordDigests();
  /** Read/write fds of the active segment; a read fd of a sealed one while cached. */
  logFd: Fd | null = null;
  indexFd: Fd | null = null;

  constructor(dir: string, startOffset: number) {
    this.startOffset = startOffset;
    const base = segmentBaseName(startOffset);
    this.logPath = joinPath(dir, base + LOG_EXTENSION);
    this.indexPath = joinPath(dir, base + INDEX_EXTENSION);
    this.endOffset = startOffset - 1;
  }

  get empty(): boolean {
    return this.endOffset < this.startOffset;
  }

  get messageCount(): number {
    return this.endOffset - this.startOffset + 1;
  }

  closeFds(disk: Disk): void {
    if (this.logFd !== null) disk.close(this.logFd);
    if (this.indexFd !== null) disk.close(this.indexFd);
    this.logFd = null;
    this.indexFd = null;
  }
}

// ---------------------------------------------------------------------------------------------
// Batch header fields read in place (hot path: numbers, no bigint allocations).

function u32(bytes: Uint8Array, at: number): number {
  return ((bytes[at] as number) | ((bytes[at + 1] as number) << 8) | ((bytes[at + 2] as number) << 16) | ((bytes[at + 3] as number) << 24)) >>> 0;
}

/** u64 LE as a number, or -1 when above 2^53. */
export function u64Number(bytes: Uint8Array, at: number): number {
  const hi = u32(bytes, at + 4);
  if (hi >= 0x20_0000) return -1;
  return hi * 0x1_0000_0000 + u32(bytes, at);
}

export function batchBaseOffset(bytes: Uint8Array, at = 0): number {
  return u64Number(bytes, at + BATCH_HEADER.baseOffset.offset);
}

export function batchBaseTimestamp(bytes: Uint8Array, at = 0): number {
  return u64Number(bytes, at + BATCH_HEADER.baseTimestamp.offset);
}

export function batchLength(bytes: Uint8Array, at = 0): number {
  return u64Number(bytes, at + BATCH_HEADER.batchLength.offset);
}

export function batchMessageCount(bytes: Uint8Array, at = 0): number {
  return u32(bytes, at + BATCH_HEADER.messageCount.offset);
}

// ---------------------------------------------------------------------------------------------
// Walking a .log batch by batch.

export interface WalkedBatch {
  readonly position: number;
  readonly baseOffset: number;
  readonly baseTimestamp: number;
  readonly length: number;
  readonly messageCount: number;
}

export interface WalkOutcome {
  /** Position after the last whole, verified batch. */
  readonly end: number;
  /** Offset after the last walked batch. */
  readonly nextOffset: number;
  readonly batches: number;
  /** Why the walk stopped before `limit`, or null when it reached it exactly. */
  readonly stop: { readonly position: number; readonly reason: string } | null;
}

const WINDOW = 1 << 20;

/**
 * Walks batches of `fd` from `from` up to `limit` (exclusive), each one whole, structurally sound,
 * checksum-verified when `verify`, with `base_offset` continuing from `expectedOffset` (when >= 0).
 * Stops at the first batch that fails (reason `zero_fill` when its header bytes are all zero:
 * preallocated free space, not a torn write). Throws DiskError on I/O failure only.
 */
export function walkBatches(
  disk: Disk,
  fd: Fd,
  from: number,
  limit: number,
  expectedOffset: number,
  verify: boolean,
  visit?: (batch: WalkedBatch) => void,
): WalkOutcome {
  let window = new Uint8Array(Math.min(WINDOW, Math.max(BATCH_HEADER_SIZE, limit - from)));
  let windowStart = 0;
  let windowEnd = 0;
  const load = (position: number, length: number): Uint8Array | null => {
    if (position >= windowStart && position + length <= windowEnd) {
      return window.subarray(position - windowStart, position - windowStart + length);
    }
    if (length > window.length) window = new Uint8Array(length);
    const want = Math.min(window.length, limit - position);
    let got = 0;
    while (got < want) {
      const n = disk.read(fd, window, got, want - got, position + got);
      if (n === 0) break;
      got += n;
    }
    windowStart = position;
    windowEnd = position + got;
    return got >= length ? window.subarray(0, length) : null;
  };

  let at = from;
  let next = expectedOffset;
  let batches = 0;
  const stop = (reason: string): WalkOutcome => ({ end: at, nextOffset: next, batches, stop: { position: at, reason } });
  while (at < limit) {
    if (limit - at < BATCH_HEADER_SIZE) {
      const tail = load(at, limit - at);
      return stop(tail !== null && tail.every((b) => b === 0) ? 'zero_fill' : 'header_truncated');
    }
    const header = load(at, BATCH_HEADER_SIZE);
    if (header === null) return stop('header_truncated');
    const length = batchLength(header);
    if (length <= 0 && header.every((b) => b === 0)) return stop('zero_fill');
    if (length < BATCH_HEADER_SIZE + MESSAGE_FRAME_HEADER_SIZE || length > BATCH_BYTES_MAX_DEFAULT) {
      return stop('batch_length_invalid');
    }
    if (at + length > limit) return stop('batch_past_end');
    const baseOffset = batchBaseOffset(header);
    const baseTimestamp = batchBaseTimestamp(header);
    const messageCount = batchMessageCount(header);
    if (baseOffset < 0 || baseTimestamp < 0 || messageCount === 0) return stop('batch_header_invalid');
    if (next >= 0 && baseOffset !== next) return stop(`base_offset_${baseOffset}_expected_${next}`);
    const bytes = load(at, length);
    if (bytes === null) return stop('batch_past_end');
    if (verify) {
      const verdict = validateBatch(bytes);
      if (!verdict.ok) return stop(verdict.reason);
    }
    visit?.({ position: at, baseOffset, baseTimestamp, length, messageCount });
    at += length;
    next = baseOffset + messageCount;
    batches++;
  }
  return { end: at, nextOffset: next, batches, stop: null };
}
