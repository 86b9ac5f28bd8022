import { BATCH_HEADER_SIZE } from './batch-header.js';
import type { BatchRejectReason } from './batch-reject.js';
import { checksumSlot, type ChecksumScratch } from './batch-checksum.js';
import { readU32LE } from './bytes-le.js';
import { MESSAGE_FRAME, MESSAGE_FRAME_HEADER_SIZE } from './frame-header.js';

/**
 * How `offset_delta` must run across a batch's frames.
 * - `index`: frame i carries i. The producer sends the index (messages.mdx), so admission of a
 *   SendMessages batch requires it, and so does every batch the server stamps and journals.
 * - `contiguous`: frame i carries `first + i` for some `first`. A poll reply may be a slice of a
 *   stored batch (commands.mdx, PollMessages); its frames keep their original deltas so that
 *   `base_offset + offset_delta` still names the stored offset.
 */
export type OffsetDeltaRule = 'index' | 'contiguous';

export interface FrameScanRules {
  readonly offsetDeltas: OffsetDeltaRule;
  readonly maxPayloadBytes: number;
  readonly maxUserHeadersBytes: number;
}

const RESERVED = MESSAGE_FRAME.reserved.offset;
const OFFSET_DELTA = MESSAGE_FRAME.offsetDelta.offset;
const TIMESTAMP_DELTA = MESSAGE_FRAME.timestampDelta.offset;
const USER_HEADERS_LENGTH = MESSAGE_FRAME.userHeadersLength.offset;
const PAYLOAD_LENGTH = MESSAGE_FRAME.payloadLength.offset;

/** What a structural walk found (one per call; plain fields, no allocation while walking). */
export class FrameScan {
  frames = 0;
  reason: BatchRejectReason | null = null;
  frameIndex = -1;
  firstOffsetDelta = 0;
  lastOffsetDelta = 0;
  firstTimestampDelta = 0;
  lastTimestampDelta = 0;
  timestampDeltaMax = 0;
  payloadBytes = 0;
  userHeadersBytes = 0;
  /** Byte range `[rangeStart, rangeEnd)` of the frames selected by the caller's copy range. */
  rangeStart = 0;
  rangeEnd = 0;

  fail(reason: BatchRejectReason, frameIndex: number): false {
    this.reason = reason;
    this.frameIndex = frameIndex;
    return false;
  }
}

/** Frames `[from, to)` whose stored checksums are copied into scratch slots `0 .. to - from`. */
export interface ChecksumCopy {
  readonly scratch: ChecksumScratch;
  readonly from: number;
  readonly to: number;
}

/** Whether `messageCount` frames of at least 48 bytes can fit in the blob at all. */
export function countCanFit(blobLength: number, messageCount: number): boolean {
  return messageCount <= Math.floor(blobLength / MESSAGE_FRAME_HEADER_SIZE);
}

/**
 * Walks the frames of `bytes[256, bytes.length)` (the caller has matched `batch_length` to the
 * length) and checks the structure: exactly `messageCount` frames tile the blob, each header fits,
 * reserved bytes are zero, `offset_delta` follows the rule, lengths are within the limits and no
 * frame runs past the end. No hashing. Never reads outside `bytes`.
 */
export function scanFrames(
  bytes: Uint8Array,
  messageCount: number,
  rules: FrameScanRules,
  out: FrameScan,
  copy: ChecksumCopy | null,
): boolean {
  const end = bytes.length;
  const contiguous = rules.offsetDeltas === 'contiguous';
  const copyFrom = copy === null ? -1 : copy.from;
  const copyTo = copy === null ? -1 : copy.to;
  let pos = BATCH_HEADER_SIZE;
  let index = 0;
  let firstDelta = 0;
  while (pos < end) {
    if (index === messageCount) return out.fail('message_count_mismatch', index);
    if (end - pos < MESSAGE_FRAME_HEADER_SIZE) return out.fail('frame_header_truncated', index);
    if ((readU32LE(bytes, pos + RESERVED) | readU32LE(bytes, pos + RESERVED + 4)) !== 0) {
      return out.fail('frame_reserved_nonzero', index);
    }
    const offsetDelta = readU32LE(bytes, pos + OFFSET_DELTA);
    if (index === 0) firstDelta = contiguous ? offsetDelta : 0;
    if (offsetDelta !== firstDelta + index) return out.fail('frame_offset_delta_mismatch', index);
    const payloadLength = readU32LE(bytes, pos + PAYLOAD_LENGTH);
    const userHeadersLength = readU32LE(bytes, pos + USER_HEADERS_LENGTH);
    if (payloadLength > rules.maxPayloadBytes) return out.fail('frame_payload_too_large', index);
    if (userHeadersLength > rules.maxUserHeadersBytes) return out.fail('frame_user_headers_too_large', index);
    const next = pos + MESSAGE_FRAME_HEADER_SIZE + payloadLength + userHeadersLength;
    if (next > end) return out.fail('frame_overrun', index);
    const timestampDelta = readU32LE(bytes, pos + TIMESTAMP_DELTA);
    if (index === 0) out.firstTimestampDelta = timestampDelta;
    if (timestampDelta > out.timestampDeltaMax) out.timestampDeltaMax = timestampDelta;
    out.lastTimestampDelta = timestampDelta;
    out.lastOffsetDelta = offsetDelta;
    out.payloadBytes += payloadLength;
    out.userHeadersBytes += userHeadersLength;
    if (index >= copyFrom && index < copyTo && copy !== null) {
      const slot = checksumSlot(index - copyFrom);
      const scratch = copy.scratch.bytes;
      for (let k = 0; k < 8; k++) scratch[slot + k] = bytes[pos + k] as number;
      if (index === copyFrom) out.rangeStart = pos;
      out.rangeEnd = next;
    }
    pos = next;
    index++;
  }
  if (index !== messageCount) return out.fail('message_count_mismatch', index);
  out.frames = index;
  out.firstOffsetDelta = firstDelta;
  return true;
}
