import { BATCH_HEADER, BATCH_HEADER_SIZE } from './batch-header.js';
import type { BatchReject, BatchRejectReason } from './batch-reject.js';
import { batchReject } from './batch-reject.js';
import { readU128LE, readU32LE, readU64LE, readU64LESafe } from './bytes-le.js';
import { MESSAGE_FRAME, MESSAGE_FRAME_HEADER_SIZE } from './frame-header.js';

/**
 * Zero-copy iteration over the frames of a batch. ONE cursor object moves from frame to frame
 * (a flyweight): its fields describe the current frame, `payload()` and `userHeaders()` return
 * views into the batch bytes, nothing is allocated per frame unless the caller asks for a view
 * or a bigint field.
 *
 *   const cursor = new FrameCursor(batch);
 *   while (cursor.next()) use(cursor.offsetDelta, cursor.payload());
 *   if (cursor.reason !== null) drop(cursor.reason);
 *
 * Meant for validated batches; on any other bytes it stays in bounds and stops with a reason
 * (bounds and count only: no reserved, delta or checksum checks). It walks `batch_length` bytes,
 * so a batch followed by more bytes (a segment log) iterates just that batch.
 */
export class FrameCursor implements Iterable<FrameCursor> {
  readonly bytes: Uint8Array;
  /** Frame index, -1 before the first `next()`. */
  index = -1;
  /** Byte offset of the frame header in `bytes`, and one past the frame's last byte. */
  start = 0;
  end = 0;
  offsetDelta = 0;
  timestampDelta = 0;
  payloadLength = 0;
  userHeadersLength = 0;
  readonly messageCount: number;
  #position = BATCH_HEADER_SIZE;
  #limit = 0;
  #reason: BatchRejectReason | null = null;

  constructor(bytes: Uint8Array) {
    this.bytes = bytes;
    if (bytes.length < BATCH_HEADER_SIZE) {
      this.messageCount = 0;
      this.#reason = 'batch_too_short';
      return;
    }
    this.messageCount = readU32LE(bytes, BATCH_HEADER.messageCount.offset);
    const batchLength = readU64LESafe(bytes, BATCH_HEADER.batchLength.offset);
    if (batchLength < 0 || batchLength > bytes.length) this.#reason = 'batch_truncated';
    else if (batchLength < BATCH_HEADER_SIZE) this.#reason = 'batch_too_short';
    else this.#limit = batchLength;
  }

  /** Why iteration stopped early, or null (not started, in progress, or walked to the end). */
  get reason(): BatchRejectReason | null {
    return this.#reason;
  }

  /** Moves to the next frame; false at the end or on a malformed frame (see `reason`). */
  next(): boolean {
    if (this.#reason !== null) return false;
    const at = this.#position;
    if (this.index + 1 >= this.messageCount) {
      if (at !== this.#limit) this.#reason = 'message_count_mismatch';
      return false;
    }
    if (this.#limit - at < MESSAGE_FRAME_HEADER_SIZE) {
      this.#reason = at === this.#limit ? 'message_count_mismatch' : 'frame_header_truncated';
      return false;
    }
    const payloadLength = readU32LE(this.bytes, at + MESSAGE_FRAME.payloadLength.offset);
    const userHeadersLength = readU32LE(this.bytes, at + MESSAGE_FRAME.userHeadersLength.offset);
    const end = at + MESSAGE_FRAME_HEADER_SIZE + payloadLength + userHeadersLength;
    if (end > this.#limit) {
      this.#reason = 'frame_overrun';
      return false;
    }
    this.index++;
    this.start = at;
    this.end = end;
    this.payloadLength = payloadLength;
    this.userHeadersLength = userHeadersLength;
    this.offsetDelta = readU32LE(this.bytes, at + MESSAGE_FRAME.offsetDelta.offset);
    this.timestampDelta = readU32LE(this.bytes, at + MESSAGE_FRAME.timestampDelta.offset);
    this.#position = end;
    return true;
  }

  get payloadStart(): number {
    return this.start + MESSAGE_FRAME_HEADER_SIZE;
  }

  get userHeadersStart(): number {
    return this.start + MESSAGE_FRAME_HEADER_SIZE + this.payloadLength;
  }

  /** View of the current frame's payload. */
  payload(): Uint8Array {
    return this.bytes.subarray(this.payloadStart, this.payloadStart + this.payloadLength);
  }

  /** View of the current frame's user-headers block. */
  userHeaders(): Uint8Array {
    return this.bytes.subarray(this.userHeadersStart, this.end);
  }

  /** View of the whole current frame (header, payload, user headers). */
  frame(): Uint8Array {
    return this.bytes.subarray(this.start, this.end);
  }

  checksum(): bigint {
    return readU64LE(this.bytes, this.start + MESSAGE_FRAME.checksum.offset);
  }

  id(): bigint {
    return readU128LE(this.bytes, this.start + MESSAGE_FRAME.id.offset);
  }

  *[Symbol.iterator](): Iterator<FrameCursor> {
    while (this.next()) yield this;
  }
}

export type ForEachFrameVerdict = { readonly ok: true; readonly value: number } | BatchReject;

/**
 * Visits every frame with one reused cursor; the visitor returns `false` to stop early. Returns
 * the number of frames visited, or why the walk stopped.
 */
export function forEachFrame(bytes: Uint8Array, visit: (frame: FrameCursor) => boolean | void): ForEachFrameVerdict {
  const cursor = new FrameCursor(bytes);
  while (cursor.next()) {
    if (visit(cursor) === false) return { ok: true, value: cursor.index + 1 };
  }
  if (cursor.reason !== null) return batchReject(cursor.reason, cursor.index + 1);
  return { ok: true, value: cursor.index + 1 };
}
