import {
  BATCH_HEADER, BATCH_HEADER_SIZE, HEADER_SIZE, MESSAGE_FRAME, MESSAGE_FRAME_HEADER_SIZE, Operation, encodeRequestHeader,
  sendMessagesCommand, xxh3_64,
} from '@shoal/protocol';
import { IDENTITY_BYTES, encodeIdentity } from '../exactly-once.js';

/**
 * The lean Shoal publish path's frame builder: one allocation per SendMessages request, the
 * batch written in place behind the request header and the SendMessages metadata (messages.mdx,
 * framing.mdx), frame checksums and the batch checksum computed over the bytes where they lie.
 * The SDK path (`encodeBatch` → `sendMessagesCommand.encodeRequest` → `encodeRequestFrame`) builds
 * per-message objects and copies the batch twice; this path mirrors the lean NATS publisher so the
 * figures measure the server rather than the client. test/wire.test.ts checks it byte for byte
 * against `buildBatch` and the command codec.
 *
 *   [request header 256][metadata_length u32, stream id, topic id, partitioning, messages_count]
 *   [batch header 256][frame 0: header 48, payload] … [frame n-1]
 */
export interface SendFrameFields {
  readonly client: bigint;
  readonly session: bigint;
  readonly request: bigint;
  readonly timestamp: bigint;
}

export interface BatchShape {
  readonly streamId: number;
  readonly topicId: number;
  readonly partitionId: number;
  readonly count: number;
  readonly messageSize: number;
}

const DUMMY_BATCH = new Uint8Array(BATCH_HEADER_SIZE);
const metadataCache = new Map<string, Uint8Array>();

/** The SendMessages body bytes before the batch (they do not depend on the batch contents). */
export function sendMessagesMetadata(shape: BatchShape): Uint8Array {
  const key = `${shape.streamId}/${shape.topicId}/${shape.partitionId}/${shape.count}`;
  let prefix = metadataCache.get(key);
  if (prefix === undefined) {
    const body = sendMessagesCommand.encodeRequest({
      streamId: { kind: 'numeric', value: shape.streamId },
      topicId: { kind: 'numeric', value: shape.topicId },
      partitioning: { kind: 'partition_id', partitionId: shape.partitionId },
      messagesCount: shape.count,
      batch: DUMMY_BATCH,
    });
    prefix = body.slice(0, body.length - DUMMY_BATCH.length);
    if (metadataCache.size > 4096) metadataCache.clear();
    metadataCache.set(key, prefix);
  }
  return prefix;
}

export function batchLength(count: number, messageSize: number): number {
  return BATCH_HEADER_SIZE + count * (MESSAGE_FRAME_HEADER_SIZE + messageSize);
}

/** The message id the bench gives a message: run tag in the high 64 bits, producer and seq below. */
export function benchMessageId(runTag: number, producer: number, seq: number): bigint {
  return (BigInt(runTag >>> 0) << 64n) | (BigInt(producer >>> 0) << 32n) | BigInt(seq >>> 0);
}

export interface BatchContent {
  readonly runTag: number;
  readonly producer: number;
  readonly firstSeq: number;
  /** Payload bytes after the identity (the same for every message). */
  readonly template: Uint8Array;
  readonly originTimestamp: bigint;
}

/**
 * Writes a producer-form batch (partition id, base offset and base timestamp zero) at
 * `out[at, at + batchLength)`: frame i has id `benchMessageId(…, firstSeq + i)`, offset delta i,
 * timestamp delta 0, no user headers, and a payload of the identity then `template`.
 */
export function writeBatch(out: Uint8Array, at: number, count: number, content: BatchContent): void {
  const size = IDENTITY_BYTES + content.template.length;
  const view = new DataView(out.buffer, out.byteOffset, out.byteLength);
  const length = batchLength(count, size);
  view.setBigUint64(at + BATCH_HEADER.originTimestamp.offset, content.originTimestamp, true);
  view.setBigUint64(at + BATCH_HEADER.batchLength.offset, BigInt(length), true);
  view.setUint32(at + BATCH_HEADER.messageCount.offset, count, true);
  const checksums = new Uint8Array(44 + 8 * count);
  const checksumView = new DataView(checksums.buffer);
  const idHigh = BigInt(content.runTag >>> 0);
  let pos = at + BATCH_HEADER_SIZE;
  for (let i = 0; i < count; i++) {
    const seq = content.firstSeq + i;
    view.setUint32(pos + MESSAGE_FRAME.id.offset, seq >>> 0, true);
    view.setUint32(pos + MESSAGE_FRAME.id.offset + 4, content.producer >>> 0, true);
    view.setBigUint64(pos + MESSAGE_FRAME.id.offset + 8, idHigh, true);
    view.setUint32(pos + MESSAGE_FRAME.offsetDelta.offset, i, true);
    view.setUint32(pos + MESSAGE_FRAME.payloadLength.offset, size, true);
    const payloadAt = pos + MESSAGE_FRAME_HEADER_SIZE;
    encodeIdentity(out, payloadAt, content.runTag, content.producer, seq);
    out.set(content.template, payloadAt + IDENTITY_BYTES);
    const end = payloadAt + size;
    const checksum = xxh3_64(out.subarray(pos + MESSAGE_FRAME.id.offset, end));
    view.setBigUint64(pos + MESSAGE_FRAME.checksum.offset, checksum, true);
    checksumView.setBigUint64(44 + 8 * i, checksum, true);
    pos = end;
  }
  // batch_checksum input: header bytes 0..40 (five u64), message_count, then every frame checksum.
  checksums.set(out.subarray(at, at + BATCH_HEADER.batchChecksum.offset), 0);
  checksums.set(out.subarray(at + BATCH_HEADER.messageCount.offset, at + BATCH_HEADER.messageCount.offset + 4), 40);
  view.setBigUint64(at + BATCH_HEADER.batchChecksum.offset, xxh3_64(checksums), true);
}

/** A whole SendMessages request frame (header, metadata, batch) in one buffer. */
export function buildSendMessagesFrame(fields: SendFrameFields, shape: BatchShape, content: BatchContent): Uint8Array {
  const metadata = sendMessagesMetadata(shape);
  const size = HEADER_SIZE + metadata.length + batchLength(shape.count, shape.messageSize);
  const frame = new Uint8Array(size);
  frame.set(encodeRequestHeader({
    size, client: fields.client, operation: Operation.SendMessages, request: fields.request, session: fields.session,
    timestamp: fields.timestamp,
  }), 0);
  frame.set(metadata, HEADER_SIZE);
  writeBatch(frame, HEADER_SIZE + metadata.length, shape.count, content);
  return frame;
}

/** A payload template: `messageSize - 16` bytes of a fixed pattern. */
export function payloadTemplate(messageSize: number): Uint8Array {
  const bytes = new Uint8Array(Math.max(0, messageSize - IDENTITY_BYTES));
  for (let i = 0; i < bytes.length; i++) bytes[i] = (i * 31 + 7) & 0xff;
  return bytes;
}
