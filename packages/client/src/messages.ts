import {
  BATCH_HEADER_SIZE, type BatchMessage, FrameCursor, HeaderKind, type HeaderValue, type PolledMessages, type UserHeaderEntry,
  buildBatch, decodeHeaderValue, encodeHeaderValue, encodeUserHeaders, headerValueKindCode, iterateUserHeaders,
  readBatchHeader, utf8Encoder, validateBatch, validateUserHeaders,
} from '@shoal/protocol';
import { toHex } from '@shoal/stdx';
import { ShoalInvalidArgumentError, ShoalProtocolError } from './errors.js';

/**
 * Messages as users see them, and their translation to and from the one wire layout (the batch,
 * messages.mdx): producer messages become `BatchMessage`s for `buildBatch`; a poll reply's batch
 * records become `ReceivedMessage`s with absolute offsets and timestamps.
 */

/** A user-header value: a typed value, or a shorthand (string → String, boolean → Bool, bytes → Raw). */
export type HeaderInput = HeaderValue | string | boolean | Uint8Array;

/**
 * User headers: an object (keys in insertion order; beware that integer-like keys are reordered
 * by JavaScript) or a list of pairs when the order on the wire matters.
 */
export type MessageHeaders = Readonly<Record<string, HeaderInput>> | readonly (readonly [string, HeaderInput])[];

export interface Message {
  /** u128 message id; default: 128 random bits. */
  readonly id?: bigint | number;
  readonly payload: Uint8Array | string;
  readonly headers?: MessageHeaders;
  /**
   * A user-headers block sent as is, instead of `headers` (e.g. `ReceivedMessage.rawHeaders` when
   * copying messages: keys of any kind survive byte for byte). Validated before sending.
   */
  readonly rawHeaders?: Uint8Array;
  /** Producer clock, µs since the epoch; default: now. */
  readonly originTimestamp?: bigint;
}

export interface ReceivedMessage {
  readonly partitionId: number;
  /** Absolute offset: the record's base offset + the frame's offset delta. */
  readonly offset: bigint;
  /** Server time of the append, µs (the batch `base_timestamp`). */
  readonly timestamp: bigint;
  /** Producer time, µs (`origin_timestamp + timestamp_delta`). */
  readonly originTimestamp: bigint;
  readonly id: bigint;
  readonly checksum: bigint;
  readonly payload: Uint8Array;
  /** Decoded user headers (keys as strings; an undecodable value is kept as `unknown`). */
  readonly headers: Readonly<Record<string, HeaderValue>>;
  /** The user-headers block as sent. */
  readonly rawHeaders: Uint8Array;
}

export interface EncodeMessagesOptions {
  /** Random u128 for messages without an id. */
  readonly randomId: () => bigint;
  /** µs now, for messages without an origin timestamp. */
  readonly nowMicros: () => bigint;
}

function headerValueOf(input: HeaderInput): HeaderValue {
  if (typeof input === 'string') return { kind: 'string', value: input };
  if (typeof input === 'boolean') return { kind: 'bool', value: input };
  if (input instanceof Uint8Array) return { kind: 'raw', value: input };
  return input;
}

/** Encodes user headers into the TLV block of a message frame (keys are String kind). */
export function encodeMessageHeaders(headers: MessageHeaders): Uint8Array {
  const pairs = Array.isArray(headers)
    ? (headers as readonly (readonly [string, HeaderInput])[])
    : Object.entries(headers as Readonly<Record<string, HeaderInput>>);
  const entries: UserHeaderEntry[] = pairs.map(([key, input]) => {
    const value = headerValueOf(input);
    const keyBytes = utf8Encoder.encode(key);
    const valueBytes = encodeHeaderValue(value);
    if (keyBytes.length < 1 || keyBytes.length > 255) throw new ShoalInvalidArgumentError(`header key '${key}' must be 1..255 bytes`);
    if (valueBytes.length < 1 || valueBytes.length > 255) throw new ShoalInvalidArgumentError(`header '${key}' value must be 1..255 bytes`);
    return { keyKind: HeaderKind.String, key: keyBytes, valueKind: headerValueKindCode(value), value: valueBytes };
  });
  return entries.length === 0 ? new Uint8Array(0) : encodeUserHeaders(entries);
}

export function payloadBytes(payload: Uint8Array | string): Uint8Array {
  return typeof payload === 'string' ? utf8Encoder.encode(payload) : payload;
}

/** Producer messages → the builder's input (ids and timestamps filled in). */
export function toBatchMessages(messages: readonly Message[], options: EncodeMessagesOptions): BatchMessage[] {
  return messages.map((m) => {
    const id = m.id === undefined ? options.randomId() : BigInt(m.id);
    if (id < 0n || id >= 1n << 128n) throw new ShoalInvalidArgumentError(`message id ${id} outside u128`);
    if (m.rawHeaders !== undefined && m.headers !== undefined) throw new ShoalInvalidArgumentError('a message takes headers or rawHeaders, not both');
    const headers = m.rawHeaders !== undefined ? checkedRawHeaders(m.rawHeaders) : m.headers === undefined ? undefined : encodeMessageHeaders(m.headers);
    return {
      id,
      payload: payloadBytes(m.payload),
      originTimestamp: m.originTimestamp ?? options.nowMicros(),
      ...(headers === undefined || headers.length === 0 ? {} : { userHeaders: headers }),
    };
  });
}

function checkedRawHeaders(block: Uint8Array): Uint8Array {
  if (block.length === 0) return block;
  const valid = validateUserHeaders(block);
  if (!valid.ok) throw new ShoalInvalidArgumentError(`invalid user-headers block: ${valid.reason}`);
  return block;
}

/** Builds the producer-form batch (checksums included) or throws why it cannot. */
export function encodeBatch(messages: readonly Message[], options: EncodeMessagesOptions): Uint8Array {
  const built = buildBatch(toBatchMessages(messages, options));
  if (!built.ok) throw new ShoalInvalidArgumentError(`cannot build the batch: ${built.reason}${built.messageIndex >= 0 ? ` (message ${built.messageIndex})` : ''}`);
  return built.value;
}

export interface DecodePolledOptions {
  /** Verify every frame checksum and the batch checksum (default true). */
  readonly verifyChecksums?: boolean;
}

const strictUtf8 = new TextDecoder('utf-8', { fatal: true });

/** Decodes a user-headers block into a record (an invalid block is a protocol error). */
export function decodeMessageHeaders(block: Uint8Array): Record<string, HeaderValue> {
  const out: Record<string, HeaderValue> = {};
  if (block.length === 0) return out;
  const valid = validateUserHeaders(block);
  if (!valid.ok) throw new ShoalProtocolError(valid.reason, 'user headers');
  for (const entry of iterateUserHeaders(block)) {
    let key: string;
    try {
      key = entry.keyKind === HeaderKind.String ? strictUtf8.decode(entry.key) : `0x${toHex(entry.key)}`;
    } catch {
      key = `0x${toHex(entry.key)}`;
    }
    const value = decodeHeaderValue(entry.valueKind, entry.value);
    out[key] = value.ok ? value.value : { kind: 'unknown', code: entry.valueKind, value: entry.value };
  }
  return out;
}

/**
 * The messages of a PollMessages reply: walks the batch records back to back (each is a whole
 * batch, possibly a server slice of a stored one), verifies them, and resolves offsets
 * (`base_offset + offset_delta`) and times. Throws ShoalProtocolError on malformed records.
 */
export function decodePolledMessages(polled: PolledMessages, options: DecodePolledOptions = {}): ReceivedMessage[] {
  const verify = options.verifyChecksums ?? true;
  const out: ReceivedMessage[] = [];
  let rest = polled.batches;
  while (rest.length > 0) {
    const header = readBatchHeader(rest);
    if (header === null) throw new ShoalProtocolError('batch_too_short', 'poll reply');
    const length = Number(header.batchLength);
    if (!Number.isSafeInteger(length) || length < BATCH_HEADER_SIZE || length > rest.length) throw new ShoalProtocolError('batch_truncated', 'poll reply');
    const batch = rest.subarray(0, length);
    if (verify) {
      const verdict = validateBatch(batch, { offsetDeltas: 'contiguous' });
      if (!verdict.ok) throw new ShoalProtocolError(verdict.reason, `poll reply frame ${verdict.frameIndex}`);
    }
    const cursor = new FrameCursor(batch);
    while (cursor.next()) {
      const rawHeaders = cursor.userHeaders();
      out.push({
        partitionId: polled.partitionId,
        offset: header.baseOffset + BigInt(cursor.offsetDelta),
        timestamp: header.baseTimestamp,
        originTimestamp: header.originTimestamp + BigInt(cursor.timestampDelta),
        id: cursor.id(),
        checksum: cursor.checksum(),
        payload: cursor.payload(),
        headers: decodeMessageHeaders(rawHeaders),
        rawHeaders,
      });
    }
    if (cursor.reason !== null) throw new ShoalProtocolError(cursor.reason, 'poll reply');
    rest = rest.subarray(length);
  }
  return out;
}
