import { BATCH_HEADER, BATCH_HEADER_SIZE } from './batch-header.js';
import { batchReject, type BatchReject } from './batch-reject.js';
import { readU32LE, readU64LESafe } from './bytes-le.js';
import { countCanFit } from './frame-scan.js';

/**
 * The header-level checks every batch operation starts with, in this order: at least 256 bytes,
 * within `maxBytes`, `batch_length` equal to the byte length, reserved bytes zero, a non-zero
 * `message_count` within `maxMessages` that 48-byte frames could tile at all (so nothing is ever
 * sized from an absurd count). Returns the message count, or the reject.
 */
export function checkBatchEnvelope(bytes: Uint8Array, maxBytes: number, maxMessages: number): number | BatchReject {
  const length = bytes.length;
  if (length < BATCH_HEADER_SIZE) return batchReject('batch_too_short');
  if (length > maxBytes) return batchReject('batch_too_large');
  const batchLength = readU64LESafe(bytes, BATCH_HEADER.batchLength.offset);
  if (batchLength < 0 || batchLength > length) return batchReject('batch_truncated');
  if (batchLength < length) return batchReject('batch_trailing_bytes');
  const reservedStart = BATCH_HEADER.reserved.offset;
  let acc = 0;
  for (let at = reservedStart; at < BATCH_HEADER_SIZE; at += 4) acc |= readU32LE(bytes, at);
  if (acc !== 0) return batchReject('batch_header_reserved_nonzero');
  const count = readU32LE(bytes, BATCH_HEADER.messageCount.offset);
  if (count === 0) return batchReject('batch_empty');
  if (count > maxMessages) return batchReject('batch_too_many_messages');
  if (!countCanFit(length - BATCH_HEADER_SIZE, count)) return batchReject('message_count_mismatch');
  return count;
}
