/**
 * What the log must hold for an acknowledged SendMessages (the checker's read of every replica):
 * its messages at the offsets its reply named. A batch sent alone is stored as sent (its frames
 * byte for byte). A batch the primary group-committed with others (consensus group-commit.ts) is
 * part of one stored batch: each of its frames keeps its id, lengths, reserved bytes, user
 * headers and payload, while `offset_delta`, `timestamp_delta` and so the frame checksum are
 * re-based on the joined batch (protocol batch-concat.ts).
 */
import { MESSAGE_FRAME, MESSAGE_FRAME_HEADER_SIZE } from '@shoal/protocol';
import { equalBytes } from '@shoal/stdx';

/** The frame's bytes a group commit keeps: the id, then everything after the two deltas. */
const ID_START = MESSAGE_FRAME.id.offset;
const ID_END = MESSAGE_FRAME.id.offset + MESSAGE_FRAME.id.size;
const KEPT_FROM = MESSAGE_FRAME.userHeadersLength.offset;

function frameEnd(frames: Uint8Array, at: number): number {
  if (frames.length - at < MESSAGE_FRAME_HEADER_SIZE) return -1;
  const dv = new DataView(frames.buffer, frames.byteOffset + at, MESSAGE_FRAME_HEADER_SIZE);
  const end = at + MESSAGE_FRAME_HEADER_SIZE
    + dv.getUint32(MESSAGE_FRAME.userHeadersLength.offset, true) + dv.getUint32(MESSAGE_FRAME.payloadLength.offset, true);
  return end > frames.length ? -1 : end;
}

/** The same messages, in order, up to the fields a group commit re-bases (frames regions, no batch header). */
export function sameMessages(stored: Uint8Array, sent: Uint8Array): boolean {
  let a = 0;
  let b = 0;
  while (a < stored.length && b < sent.length) {
    const endA = frameEnd(stored, a);
    const endB = frameEnd(sent, b);
    if (endA < 0 || endB < 0 || endA - a !== endB - b) return false;
    if (!equalBytes(stored.subarray(a + ID_START, a + ID_END), sent.subarray(b + ID_START, b + ID_END))) return false;
    if (!equalBytes(stored.subarray(a + KEPT_FROM, endA), sent.subarray(b + KEPT_FROM, endB))) return false;
    a = endA;
    b = endB;
  }
  return a === stored.length && b === sent.length;
}
