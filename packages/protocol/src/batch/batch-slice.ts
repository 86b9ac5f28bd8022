import { checkBatchEnvelope } from './batch-envelope.js';
import { BATCH_HEADER, BATCH_HEADER_SIZE } from './batch-header.js';
import { BATCH_MESSAGES_MAX_DEFAULT } from './batch-limits.js';
import { batchReject, type BatchReject } from './batch-reject.js';
import { checksumScratch, hashBatchChecksumInput } from './batch-checksum.js';
import { writeU32LE, writeU64LE, writeU64LESafe } from './bytes-le.js';
import { FrameScan, scanFrames, type FrameScanRules } from './frame-scan.js';

/**
 * A poll reply's view of frames `[from, to)` of a stored batch, as two parts for a gathered
 * write: a NEW 256-byte header and a VIEW of the original frame bytes (not copied).
 */
export interface BatchSliceParts {
  readonly header: Uint8Array;
  readonly frames: Uint8Array;
  readonly messageCount: number;
  readonly batchLength: number;
  readonly batchChecksum: bigint;
}

export type SlicePartsVerdict = { readonly ok: true; readonly value: BatchSliceParts } | BatchReject;
export type SliceVerdict = { readonly ok: true; readonly value: Uint8Array } | BatchReject;

/** Stored batches are trusted for their limits; slices of slices carry contiguous deltas. */
const SLICE_RULES: FrameScanRules = {
  offsetDeltas: 'contiguous',
  maxPayloadBytes: 0xffff_ffff,
  maxUserHeadersBytes: 0xffff_ffff,
};

/**
 * Frames `[from, to)` of the stored batch `bytes` as a new batch: the original `partition_id`,
 * `base_offset`, `base_timestamp` and `origin_timestamp` (so `base_offset + offset_delta` and
 * `origin_timestamp + timestamp_delta` still resolve, the frames being byte-identical), a new
 * `message_count = to - from`, `batch_length = 256 + frame bytes` and `batch_checksum`.
 *
 * Copied: the 32 header bytes of those four fields (into the new header) and the selected frames'
 * 8-byte stored checksums (into the checksum scratch). Not copied: the frames. Not re-hashed:
 * the frames (their stored checksums are reused; the stored batch was validated when admitted).
 * The whole stored batch is walked structurally to find the frame boundaries (no index needed).
 */
export function sliceBatchParts(bytes: Uint8Array, from: number, to: number): SlicePartsVerdict {
  const count = checkBatchEnvelope(bytes, Number.MAX_SAFE_INTEGER, BATCH_MESSAGES_MAX_DEFAULT);
  if (typeof count !== 'number') return count;
  if (!(Number.isInteger(from) && Number.isInteger(to) && from >= 0 && from < to && to <= count)) {
    return batchReject('slice_out_of_range');
  }
  const scratch = checksumScratch(to - from);
  const scan = new FrameScan();
  if (!scanFrames(bytes, count, SLICE_RULES, scan, { scratch, from, to })) {
    return batchReject(scan.reason ?? 'message_count_mismatch', scan.frameIndex);
  }
  const frames = bytes.subarray(scan.rangeStart, scan.rangeEnd);
  const header = new Uint8Array(BATCH_HEADER_SIZE);
  const batchLength = writeSliceHeader(header, bytes, frames.length, to - from);
  const batchChecksum = hashBatchChecksumInput(header, scratch, to - from);
  writeU64LE(header, BATCH_HEADER.batchChecksum.offset, batchChecksum);
  return { ok: true, value: { header, frames, messageCount: to - from, batchLength, batchChecksum } };
}

/**
 * `sliceBatchParts` joined into one new buffer: copies the new header and the selected frame
 * bytes once (`256 + frames` bytes); nothing else is copied.
 */
export function sliceBatch(bytes: Uint8Array, from: number, to: number): SliceVerdict {
  const parts = sliceBatchParts(bytes, from, to);
  if (!parts.ok) return parts;
  const out = new Uint8Array(parts.value.batchLength);
  out.set(parts.value.header, 0);
  out.set(parts.value.frames, BATCH_HEADER_SIZE);
  return { ok: true, value: out };
}

function writeSliceHeader(header: Uint8Array, stored: Uint8Array, frameBytes: number, count: number): number {
  const keptEnd = BATCH_HEADER.originTimestamp.offset + BATCH_HEADER.originTimestamp.size;
  for (let i = 0; i < keptEnd; i++) header[i] = stored[i] as number;
  const batchLength = BATCH_HEADER_SIZE + frameBytes;
  writeU64LESafe(header, BATCH_HEADER.batchLength.offset, batchLength);
  writeU32LE(header, BATCH_HEADER.messageCount.offset, count);
  return batchLength;
}
