import { checkBatchEnvelope } from './batch-envelope.js';
import { BATCH_MESSAGES_MAX_DEFAULT } from './batch-limits.js';
import { batchReject, type BatchReject } from './batch-reject.js';
import { batchChecksumInputSize, checksumScratch, hashBatchChecksumInput } from './batch-checksum.js';
import { FrameScan, scanFrames } from './frame-scan.js';

export type ChecksumInputVerdict = { readonly ok: true; readonly value: Uint8Array } | BatchReject;

/**
 * A copy of the exact bytes `batch_checksum` is computed over (control path: tests, vector
 * checks, diagnostics). The hot paths hash the shared scratch in place instead.
 */
export function batchChecksumInput(bytes: Uint8Array): ChecksumInputVerdict {
  const count = checkBatchEnvelope(bytes, Number.MAX_SAFE_INTEGER, BATCH_MESSAGES_MAX_DEFAULT);
  if (typeof count !== 'number') return count;
  const scratch = checksumScratch(count);
  const scan = new FrameScan();
  const rules = { offsetDeltas: 'contiguous', maxPayloadBytes: 0xffff_ffff, maxUserHeadersBytes: 0xffff_ffff } as const;
  if (!scanFrames(bytes, count, rules, scan, { scratch, from: 0, to: count })) {
    return batchReject(scan.reason ?? 'message_count_mismatch', scan.frameIndex);
  }
  hashBatchChecksumInput(bytes, scratch, count);
  return { ok: true, value: scratch.bytes.slice(0, batchChecksumInputSize(count)) };
}
