import { ShoalInvalidArgumentError, type ReceivedMessage } from '@shoal/client';

/**
 * The binary message file of `message poll --output-file` / `message send --input-file`, in the
 * reference CLI's format so files move between `iggy` and `shoal`: the polled messages appended
 * one after another, each as the reference's in-memory `IggyMessage::to_bytes()`:
 *
 *   [IggyMessageHeader: 64 bytes][payload: payload_length][user headers: user_headers_length]
 *
 * The 64-byte header (core/common/src/types/message/message_header.rs) no longer exists on the
 * wire (messages travel in batches), only in this file. Little-endian:
 */
export const FILE_MESSAGE_HEADER = {
  checksum: { offset: 0, size: 8 },
  id: { offset: 8, size: 16 },
  offset: { offset: 24, size: 8 },
  timestamp: { offset: 32, size: 8 },
  originTimestamp: { offset: 40, size: 8 },
  userHeadersLength: { offset: 48, size: 4 },
  payloadLength: { offset: 52, size: 4 },
  reserved: { offset: 56, size: 8 },
} as const;
export const FILE_MESSAGE_HEADER_SIZE = 64;

/** One record read back from a file. */
export interface FileMessage {
  readonly checksum: bigint;
  readonly id: bigint;
  readonly offset: bigint;
  readonly timestamp: bigint;
  readonly originTimestamp: bigint;
  readonly payload: Uint8Array;
  readonly rawHeaders: Uint8Array;
}

const U64 = (1n << 64n) - 1n;

/** The file bytes of polled messages, in order. */
export function encodeMessageFile(messages: readonly ReceivedMessage[]): Uint8Array {
  const size = messages.reduce((sum, m) => sum + FILE_MESSAGE_HEADER_SIZE + m.payload.length + m.rawHeaders.length, 0);
  const out = new Uint8Array(size);
  const view = new DataView(out.buffer);
  let at = 0;
  for (const m of messages) {
    const H = FILE_MESSAGE_HEADER;
    view.setBigUint64(at + H.checksum.offset, m.checksum, true);
    view.setBigUint64(at + H.id.offset, m.id & U64, true);
    view.setBigUint64(at + H.id.offset + 8, m.id >> 64n, true);
    view.setBigUint64(at + H.offset.offset, m.offset, true);
    view.setBigUint64(at + H.timestamp.offset, m.timestamp, true);
    view.setBigUint64(at + H.originTimestamp.offset, m.originTimestamp, true);
    view.setUint32(at + H.userHeadersLength.offset, m.rawHeaders.length, true);
    view.setUint32(at + H.payloadLength.offset, m.payload.length, true);
    view.setBigUint64(at + H.reserved.offset, 0n, true);
    at += FILE_MESSAGE_HEADER_SIZE;
    out.set(m.payload, at);
    at += m.payload.length;
    out.set(m.rawHeaders, at);
    at += m.rawHeaders.length;
  }
  return out;
}

/** Every record of a file; a truncated record is an error naming its byte position. */
export function decodeMessageFile(bytes: Uint8Array, name = 'message file'): FileMessage[] {
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const H = FILE_MESSAGE_HEADER;
  const out: FileMessage[] = [];
  let at = 0;
  while (at < bytes.length) {
    if (bytes.length - at < FILE_MESSAGE_HEADER_SIZE) throw truncated(name, at, 'a message header');
    const payloadLength = view.getUint32(at + H.payloadLength.offset, true);
    const headersLength = view.getUint32(at + H.userHeadersLength.offset, true);
    const payloadAt = at + FILE_MESSAGE_HEADER_SIZE;
    const headersAt = payloadAt + payloadLength;
    const end = headersAt + headersLength;
    if (end > bytes.length) throw truncated(name, at, `${payloadLength} payload and ${headersLength} header bytes`);
    out.push({
      checksum: view.getBigUint64(at + H.checksum.offset, true),
      id: view.getBigUint64(at + H.id.offset, true) | (view.getBigUint64(at + H.id.offset + 8, true) << 64n),
      offset: view.getBigUint64(at + H.offset.offset, true),
      timestamp: view.getBigUint64(at + H.timestamp.offset, true),
      originTimestamp: view.getBigUint64(at + H.originTimestamp.offset, true),
      payload: bytes.slice(payloadAt, headersAt),
      rawHeaders: bytes.slice(headersAt, end),
    });
    at = end;
  }
  return out;
}

function truncated(name: string, at: number, what: string): ShoalInvalidArgumentError {
  return new ShoalInvalidArgumentError(`${name}: truncated message at byte ${at} (expected ${what})`);
}
