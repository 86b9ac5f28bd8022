import { assert, isU64 } from '@shoal/stdx';
import { checkBatchEnvelope } from './batch-envelope.js';
import { BATCH_HEADER } from './batch-header.js';
import { BATCH_MESSAGES_MAX_DEFAULT } from './batch-limits.js';
import { batchReject, type BatchReject } from './batch-reject.js';
import { checksumScratch, hashBatchChecksumInput } from './batch-checksum.js';
import { writeU64LE } from './bytes-le.js';
import { FrameScan, scanFrames, type FrameScanRules } from './frame-scan.js';

export interface BatchStamp {
  readonly partitionId: bigint;
  readonly baseOffset: bigint;
  /** Microseconds: the journal-append time (the prepare's timestamp). */
  readonly baseTimestamp: bigint;
}

export type StampVerdict = { readonly ok: true; readonly value: bigint } | BatchReject;

/** Stamping does not re-apply admission policy, only structure: any length, contiguous deltas. */
const STAMP_RULES: FrameScanRules = {
  offsetDeltas: 'contiguous',
  maxPayloadBytes: 0xffff_ffff,
  maxUserHeadersBytes: 0xffff_ffff,
};

/**
 * Server stamping, in place: writes `partition_id`, `base_offset`, `base_timestamp` into the
 * header and recomputes `batch_checksum` (returned). Frames are not touched and not re-hashed:
 * their stored checksums feed the batch checksum as they are, so the caller validates first.
 *
 * All or nothing: the structure is walked (and the frame checksums gathered into the scratch)
 * before the first byte is written, so a malformed batch comes back as a reason, unmodified.
 * The stamp values come from the server, not the wire: out-of-range values are our bug (assert).
 */
export function stampBatch(bytes: Uint8Array, stamp: BatchStamp): StampVerdict {
  assert(isU64(stamp.partitionId), 'stampBatch: partitionId is not a u64');
  assert(isU64(stamp.baseOffset), 'stampBatch: baseOffset is not a u64');
  assert(isU64(stamp.baseTimestamp), 'stampBatch: baseTimestamp is not a u64');
  const count = checkBatchEnvelope(bytes, Number.MAX_SAFE_INTEGER, BATCH_MESSAGES_MAX_DEFAULT);
  if (typeof count !== 'number') return count;
  const scratch = checksumScratch(count);
  const scan = new FrameScan();
  if (!scanFrames(bytes, count, STAMP_RULES, scan, { scratch, from: 0, to: count })) {
    return batchReject(scan.reason ?? 'message_count_mismatch', scan.frameIndex);
  }
  writeU64LE(bytes, BATCH_HEADER.partitionId.offset, stamp.partitionId);
  writeU64LE(bytes, BATCH_HEADER.baseOffset.offset, stamp.baseOffset);
  writeU64LE(bytes, BATCH_HEADER.baseTimestamp.offset, stamp.baseTimestamp);
  const checksum = hashBatchChecksumInput(bytes, scratch, count);
  writeU64LE(bytes, BATCH_HEADER.batchChecksum.offset, checksum);
  return { ok: true, value: checksum };
}
