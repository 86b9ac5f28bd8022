import { xxh3_64 } from '../hash/xxh3.js';
import { checkBatchEnvelope } from './batch-envelope.js';
import { BATCH_HEADER, BATCH_HEADER_SIZE } from './batch-header.js';
import {
  BATCH_BYTES_MAX_DEFAULT,
  BATCH_MESSAGES_MAX_DEFAULT,
  MESSAGE_PAYLOAD_BYTES_MAX,
  MESSAGE_USER_HEADERS_BYTES_MAX,
} from './batch-limits.js';
import { batchReject, type BatchReject } from './batch-reject.js';
import { type ChecksumScratch, checksumScratch, checksumSlot, hashBatchChecksumInput } from './batch-checksum.js';
import { equal8, readU32LE, readU64LE } from './bytes-le.js';
import { FrameScan, scanFrames, type OffsetDeltaRule } from './frame-scan.js';
import { MESSAGE_FRAME, MESSAGE_FRAME_CHECKSUM_START, MESSAGE_FRAME_HEADER_SIZE } from './frame-header.js';

export interface ValidateBatchOptions {
  /** Refuse a batch whose `message_count` is above this (default: the u32 range). */
  readonly maxMessages?: number;
  /** Refuse a batch longer than this many bytes, header included (default 64 MiB). */
  readonly maxBytes?: number;
  /** Per-message payload cap (default 64,000,000, the reference server's). */
  readonly maxPayloadBytes?: number;
  /** Per-message user-headers cap (default 100,000, the reference server's). */
  readonly maxUserHeadersBytes?: number;
  /** `index` (default: admission, stamping) or `contiguous` (a stored batch's poll slice). */
  readonly offsetDeltas?: OffsetDeltaRule;
  /**
   * `verify` (default): re-hash every frame and compare with its stored checksum, then the batch
   * checksum. `stored`: only the batch checksum, over the frames' STORED checksums (structure
   * still walked in full): what a partition backup checks of a prepare (replication-semantics.md
   * §2.5: "decode of the 256-byte batch header, reserved bytes zero, batch_checksum
   * recomputation"); the frame checksums were verified once, at admission on the primary.
   */
  readonly frameChecksums?: 'verify' | 'stored';
}

/** What an accepted batch holds (per batch, so bigints are fine here). */
export interface BatchSummary {
  readonly messageCount: number;
  readonly batchLength: number;
  readonly partitionId: bigint;
  readonly baseOffset: bigint;
  readonly baseTimestamp: bigint;
  readonly originTimestamp: bigint;
  readonly batchChecksum: bigint;
  readonly firstOffsetDelta: number;
  readonly lastOffsetDelta: number;
  readonly firstTimestampDelta: number;
  readonly lastTimestampDelta: number;
  readonly timestampDeltaMax: number;
  readonly payloadBytes: number;
  readonly userHeadersBytes: number;
}

export type BatchVerdict = { readonly ok: true; readonly value: BatchSummary } | BatchReject;

const PAYLOAD_LENGTH = MESSAGE_FRAME.payloadLength.offset;
const USER_HEADERS_LENGTH = MESSAGE_FRAME.userHeadersLength.offset;

/**
 * Admission check of untrusted batch bytes (a SendMessages body, a partition prepare body, a
 * segment record). Never throws; returns the first reason found, or a summary.
 *
 * Order: header envelope (length, `batch_length`, reserved, count); then a structural walk of
 * every frame (no hashing); then every frame checksum (unless `frameChecksums: 'stored'`), then
 * `batch_checksum`. Cheap structural
 * rejects never pay for hashing, and a broken length is reported as such, not as the checksum
 * mismatch it also causes.
 *
 * Cost: one XXH3 call per frame over its `[8, end)` range (a `subarray`, the only per-frame
 * allocation besides the bigint the hash returns), whose result is written straight into its
 * slot of the batch-checksum scratch and compared there with the stored 8 bytes; then one XXH3
 * call over the scratch. No DataView or buffer is created per frame.
 */
export function validateBatch(bytes: Uint8Array, options: ValidateBatchOptions = {}): BatchVerdict {
  const count = checkBatchEnvelope(
    bytes,
    options.maxBytes ?? BATCH_BYTES_MAX_DEFAULT,
    options.maxMessages ?? BATCH_MESSAGES_MAX_DEFAULT,
  );
  if (typeof count !== 'number') return count;
  const scan = new FrameScan();
  const rules = {
    offsetDeltas: options.offsetDeltas ?? 'index',
    maxPayloadBytes: options.maxPayloadBytes ?? MESSAGE_PAYLOAD_BYTES_MAX,
    maxUserHeadersBytes: options.maxUserHeadersBytes ?? MESSAGE_USER_HEADERS_BYTES_MAX,
  } as const;
  const scratch = checksumScratch(count);
  const storedOnly = options.frameChecksums === 'stored';
  if (!scanFrames(bytes, count, rules, scan, storedOnly ? { scratch, from: 0, to: count } : null)) {
    return batchReject(scan.reason ?? 'message_count_mismatch', scan.frameIndex);
  }
  if (!storedOnly) {
    const bad = verifyFrames(bytes, count, scratch);
    if (bad >= 0) return batchReject('frame_checksum_mismatch', bad);
  }
  const batchChecksum = hashBatchChecksumInput(bytes, scratch, count);
  if (batchChecksum !== readU64LE(bytes, BATCH_HEADER.batchChecksum.offset)) {
    return batchReject('batch_checksum_mismatch');
  }
  return {
    ok: true,
    value: {
      messageCount: count,
      batchLength: bytes.length,
      partitionId: readU64LE(bytes, BATCH_HEADER.partitionId.offset),
      baseOffset: readU64LE(bytes, BATCH_HEADER.baseOffset.offset),
      baseTimestamp: readU64LE(bytes, BATCH_HEADER.baseTimestamp.offset),
      originTimestamp: readU64LE(bytes, BATCH_HEADER.originTimestamp.offset),
      batchChecksum,
      firstOffsetDelta: scan.firstOffsetDelta,
      lastOffsetDelta: scan.lastOffsetDelta,
      firstTimestampDelta: scan.firstTimestampDelta,
      lastTimestampDelta: scan.lastTimestampDelta,
      timestampDeltaMax: scan.timestampDeltaMax,
      payloadBytes: scan.payloadBytes,
      userHeadersBytes: scan.userHeadersBytes,
    },
  };
}

/** Re-hashes every frame into its scratch slot; the index of the first mismatch, or -1. */
function verifyFrames(bytes: Uint8Array, count: number, scratch: ChecksumScratch): number {
  const slots = scratch.bytes;
  const slotView = scratch.view;
  let pos = BATCH_HEADER_SIZE;
  for (let index = 0; index < count; index++) {
    const end =
      pos +
      MESSAGE_FRAME_HEADER_SIZE +
      readU32LE(bytes, pos + PAYLOAD_LENGTH) +
      readU32LE(bytes, pos + USER_HEADERS_LENGTH);
    const slot = checksumSlot(index);
    slotView.setBigUint64(slot, xxh3_64(bytes.subarray(pos + MESSAGE_FRAME_CHECKSUM_START, end)), true);
    if (!equal8(slots, slot, bytes, pos)) return index;
    pos = end;
  }
  return -1;
}
