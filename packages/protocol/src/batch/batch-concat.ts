import { xxh3_64 } from '../hash/xxh3.js';
import { BATCH_HEADER, BATCH_HEADER_SIZE } from './batch-header.js';
import { BATCH_TIMESTAMP_SPAN_MAX_US } from './batch-limits.js';
import { checksumScratch, checksumSlot, hashBatchChecksumInput } from './batch-checksum.js';
import { readU32LE, readU64LE, writeU32LE, writeU64LE, writeU64LESafe } from './bytes-le.js';
import { FrameCursor } from './frame-cursor.js';
import { MESSAGE_FRAME, MESSAGE_FRAME_CHECKSUM_START } from './frame-header.js';

/** One joined batch, and where each input's messages start in it (message index). */
export interface ConcatBatches {
  readonly bytes: Uint8Array;
  readonly starts: readonly number[];
}

export type ConcatVerdict =
  | { readonly ok: true; readonly value: ConcatBatches }
  | { readonly ok: false; readonly reason: 'batch_malformed' | 'timestamp_span_too_large' };

/**
 * Joins producer-form batches (validated ones: each frame's checksum already holds) into ONE
 * producer-form batch, as if one producer had sent all their messages in that order: the
 * earliest `origin_timestamp` of the inputs, `offset_delta` = the message's index in the result,
 * each `timestamp_delta` re-based on the new origin, then the batch checksum. A frame keeps its
 * bytes; its checksum is recomputed only when a delta changed (the first input's frames keep
 * theirs while it holds the earliest origin). The stamp fields stay zero: stamping follows.
 *
 * Refused: an input that does not walk as a batch, or origins spanning more than a u32 of
 * microseconds (a re-based delta could not carry it). Then the caller sends the inputs alone.
 */
export function concatBatches(batches: readonly Uint8Array[]): ConcatVerdict {
  let total = BATCH_HEADER_SIZE;
  let count = 0;
  let origin = 0n;
  const starts: number[] = [];
  for (let i = 0; i < batches.length; i++) {
    const batch = batches[i] as Uint8Array;
    if (batch.length < BATCH_HEADER_SIZE) return { ok: false, reason: 'batch_malformed' };
    const own = readU64LE(batch, BATCH_HEADER.originTimestamp.offset);
    if (i === 0 || own < origin) origin = own;
    starts.push(count);
    count += readU32LE(batch, BATCH_HEADER.messageCount.offset);
    total += batch.length - BATCH_HEADER_SIZE;
  }
  const out = new Uint8Array(total);
  const scratch = checksumScratch(count);
  let at = BATCH_HEADER_SIZE;
  let index = 0;
  for (const batch of batches) {
    const shift = readU64LE(batch, BATCH_HEADER.originTimestamp.offset) - origin;
    const cursor = new FrameCursor(batch);
    while (cursor.next()) {
      const delta = BigInt(cursor.timestampDelta) + shift;
      if (delta > BigInt(BATCH_TIMESTAMP_SPAN_MAX_US)) return { ok: false, reason: 'timestamp_span_too_large' };
      out.set(batch.subarray(cursor.start, cursor.end), at);
      const moved = cursor.offsetDelta !== index || shift !== 0n;
      if (moved) {
        writeU32LE(out, at + MESSAGE_FRAME.offsetDelta.offset, index);
        writeU32LE(out, at + MESSAGE_FRAME.timestampDelta.offset, Number(delta));
        writeU64LE(out, at + MESSAGE_FRAME.checksum.offset, xxh3_64(out.subarray(at + MESSAGE_FRAME_CHECKSUM_START, at + cursor.end - cursor.start)));
      }
      const slot = checksumSlot(index);
      for (let k = 0; k < 8; k++) scratch.bytes[slot + k] = out[at + k] as number;
      at += cursor.end - cursor.start;
      index++;
    }
    if (cursor.reason !== null || cursor.index + 1 !== cursor.messageCount) return { ok: false, reason: 'batch_malformed' };
  }
  if (at !== total || index !== count) return { ok: false, reason: 'batch_malformed' };
  writeU64LE(out, BATCH_HEADER.originTimestamp.offset, origin);
  writeU64LESafe(out, BATCH_HEADER.batchLength.offset, total);
  writeU32LE(out, BATCH_HEADER.messageCount.offset, count);
  writeU64LE(out, BATCH_HEADER.batchChecksum.offset, hashBatchChecksumInput(out, scratch, count));
  return { ok: true, value: { bytes: out, starts } };
}
