import { isU128, isU64 } from '@shoal/stdx';
import { xxh3_64 } from '../hash/xxh3.js';
import { BATCH_HEADER, BATCH_HEADER_SIZE } from './batch-header.js';
import {
  BATCH_BYTES_MAX_DEFAULT,
  BATCH_MESSAGES_MAX_DEFAULT,
  BATCH_TIMESTAMP_SPAN_MAX_US,
  MESSAGE_PAYLOAD_BYTES_MAX,
  MESSAGE_USER_HEADERS_BYTES_MAX,
} from './batch-limits.js';
import { checksumScratch, checksumSlot, hashBatchChecksumInput } from './batch-checksum.js';
import { writeU128LE, writeU32LE, writeU64LE, writeU64LESafe } from './bytes-le.js';
import { MESSAGE_FRAME, MESSAGE_FRAME_CHECKSUM_START, MESSAGE_FRAME_HEADER_SIZE } from './frame-header.js';

/** One message as a producer hands it over. */
export interface BatchMessage {
  /** u128, e.g. a UUID read as a little-endian number. */
  readonly id: bigint;
  readonly payload: Uint8Array;
  /** The encoded user-headers block (encodings.mdx), empty when absent. */
  readonly userHeaders?: Uint8Array;
  /** Producer clock, microseconds (u64). */
  readonly originTimestamp: bigint;
}

export interface BuildBatchOptions {
  readonly maxMessages?: number;
  readonly maxBytes?: number;
  readonly maxPayloadBytes?: number;
  readonly maxUserHeadersBytes?: number;
}

export type BuildBatchReason =
  | 'batch_empty'
  | 'batch_too_many_messages'
  | 'batch_too_large'
  | 'message_id_out_of_range'
  | 'origin_timestamp_out_of_range'
  /** The messages' origin timestamps span more than a u32 of microseconds (~71.6 minutes). */
  | 'timestamp_span_too_large'
  | 'frame_payload_too_large'
  | 'frame_user_headers_too_large';

export type BuildBatchVerdict =
  | { readonly ok: true; readonly value: Uint8Array }
  | { readonly ok: false; readonly reason: BuildBatchReason; readonly messageIndex: number };

const EMPTY = new Uint8Array(0);

function refuse(reason: BuildBatchReason, messageIndex = -1): BuildBatchVerdict {
  return { ok: false, reason, messageIndex };
}

/**
 * Producer-side encoder: messages → batch bytes in the producer form (partition_id, base_offset,
 * base_timestamp zero). `origin_timestamp` = the earliest message origin timestamp; each frame
 * gets `offset_delta` = its index, `timestamp_delta` = its origin timestamp minus that earliest,
 * its checksum; then `batch_checksum`. One allocation for the batch; frame checksums go through
 * the shared checksum scratch.
 */
export function buildBatch(messages: readonly BatchMessage[], options: BuildBatchOptions = {}): BuildBatchVerdict {
  const count = messages.length;
  if (count === 0) return refuse('batch_empty');
  if (count > (options.maxMessages ?? BATCH_MESSAGES_MAX_DEFAULT)) return refuse('batch_too_many_messages');
  const maxBytes = options.maxBytes ?? BATCH_BYTES_MAX_DEFAULT;
  const maxPayload = options.maxPayloadBytes ?? MESSAGE_PAYLOAD_BYTES_MAX;
  const maxUserHeaders = options.maxUserHeadersBytes ?? MESSAGE_USER_HEADERS_BYTES_MAX;

  let total = BATCH_HEADER_SIZE;
  let earliest = 0n;
  let latest = 0n;
  let latestIndex = 0;
  for (let i = 0; i < count; i++) {
    const message = messages[i] as BatchMessage;
    if (!isU128(message.id)) return refuse('message_id_out_of_range', i);
    if (!isU64(message.originTimestamp)) return refuse('origin_timestamp_out_of_range', i);
    if (message.payload.length > maxPayload) return refuse('frame_payload_too_large', i);
    const userHeadersLength = (message.userHeaders ?? EMPTY).length;
    if (userHeadersLength > maxUserHeaders) return refuse('frame_user_headers_too_large', i);
    total += MESSAGE_FRAME_HEADER_SIZE + message.payload.length + userHeadersLength;
    if (total > maxBytes) return refuse('batch_too_large', i);
    if (i === 0 || message.originTimestamp < earliest) earliest = message.originTimestamp;
    if (i === 0 || message.originTimestamp > latest) {
      latest = message.originTimestamp;
      latestIndex = i;
    }
  }
  if (latest - earliest > BigInt(BATCH_TIMESTAMP_SPAN_MAX_US)) return refuse('timestamp_span_too_large', latestIndex);

  const out = new Uint8Array(total);
  writeU64LE(out, BATCH_HEADER.originTimestamp.offset, earliest);
  writeU64LESafe(out, BATCH_HEADER.batchLength.offset, total);
  writeU32LE(out, BATCH_HEADER.messageCount.offset, count);
  const scratch = checksumScratch(count);
  let pos = BATCH_HEADER_SIZE;
  for (let i = 0; i < count; i++) {
    const message = messages[i] as BatchMessage;
    const userHeaders = message.userHeaders ?? EMPTY;
    writeU128LE(out, pos + MESSAGE_FRAME.id.offset, message.id);
    writeU32LE(out, pos + MESSAGE_FRAME.offsetDelta.offset, i);
    writeU32LE(out, pos + MESSAGE_FRAME.timestampDelta.offset, Number(message.originTimestamp - earliest));
    writeU32LE(out, pos + MESSAGE_FRAME.userHeadersLength.offset, userHeaders.length);
    writeU32LE(out, pos + MESSAGE_FRAME.payloadLength.offset, message.payload.length);
    const payloadAt = pos + MESSAGE_FRAME_HEADER_SIZE;
    out.set(message.payload, payloadAt);
    out.set(userHeaders, payloadAt + message.payload.length);
    const end = payloadAt + message.payload.length + userHeaders.length;
    const slot = checksumSlot(i);
    scratch.view.setBigUint64(slot, xxh3_64(out.subarray(pos + MESSAGE_FRAME_CHECKSUM_START, end)), true);
    for (let k = 0; k < 8; k++) out[pos + k] = scratch.bytes[slot + k] as number;
    pos = end;
  }
  writeU64LE(out, BATCH_HEADER.batchChecksum.offset, hashBatchChecksumInput(out, scratch, count));
  return { ok: true, value: out };
}
