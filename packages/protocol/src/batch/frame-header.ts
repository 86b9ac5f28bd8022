import { readU128LE, readU32LE, readU64LE } from './bytes-le.js';
import { checkLayout, frozenLayout } from './layout.js';

/**
 * The 48-byte message frame header (messages.mdx). A frame is
 * `[header 48][payload payloadLength][user headers userHeadersLength]`: the payload comes first,
 * although its length field comes second.
 *
 *   0          8                 24      28        32          36         40        48
 *   ┌──────────┬─────────────────┬───────┬─────────┬───────────┬──────────┬─────────┐
 *   │ checksum │ id (u128)       │offset │timestamp│user_headers│ payload  │reserved │
 *   │ XXH3 u64 │                 │_delta │_delta   │_length     │ _length  │ (zero)  │
 *   └──────────┴─────────────────┴───────┴─────────┴───────────┴──────────┴─────────┘
 *              └──────────── covered by checksum, with payload and user headers ────▶
 */
export const MESSAGE_FRAME = frozenLayout({
  checksum: { offset: 0, size: 8 },
  id: { offset: 8, size: 16 },
  offsetDelta: { offset: 24, size: 4 },
  timestampDelta: { offset: 28, size: 4 },
  userHeadersLength: { offset: 32, size: 4 },
  payloadLength: { offset: 36, size: 4 },
  reserved: { offset: 40, size: 8 },
});

export const MESSAGE_FRAME_HEADER_SIZE = 48;
checkLayout('message frame header', MESSAGE_FRAME, MESSAGE_FRAME_HEADER_SIZE);

/** The frame checksum covers frame bytes from here to the end of the user headers. */
export const MESSAGE_FRAME_CHECKSUM_START = MESSAGE_FRAME.checksum.offset + MESSAGE_FRAME.checksum.size;

/** Decoded frame header (control path). */
export interface MessageFrameHeader {
  readonly checksum: bigint;
  readonly id: bigint;
  readonly offsetDelta: number;
  readonly timestampDelta: number;
  readonly userHeadersLength: number;
  readonly payloadLength: number;
  readonly reserved: bigint;
}

/** Reads the frame header at `bytes[at, at + 48)`; null when it does not fit. */
export function readMessageFrameHeader(bytes: Uint8Array, at: number): MessageFrameHeader | null {
  if (!(at >= 0 && at + MESSAGE_FRAME_HEADER_SIZE <= bytes.length)) return null;
  return {
    checksum: readU64LE(bytes, at + MESSAGE_FRAME.checksum.offset),
    id: readU128LE(bytes, at + MESSAGE_FRAME.id.offset),
    offsetDelta: readU32LE(bytes, at + MESSAGE_FRAME.offsetDelta.offset),
    timestampDelta: readU32LE(bytes, at + MESSAGE_FRAME.timestampDelta.offset),
    userHeadersLength: readU32LE(bytes, at + MESSAGE_FRAME.userHeadersLength.offset),
    payloadLength: readU32LE(bytes, at + MESSAGE_FRAME.payloadLength.offset),
    reserved: readU64LE(bytes, at + MESSAGE_FRAME.reserved.offset),
  };
}
