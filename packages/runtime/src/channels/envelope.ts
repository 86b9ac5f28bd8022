/**
 * The binary envelope of channel messages (messages.ts): a fixed header per kind, then the
 * kind's variable bytes, little-endian. A message travels as ONE ring record when it fits the
 * ring's frame limit, else as fragments (fragments.ts).
 *
 * ```
 *  kind                byte 0   header layout (after byte 0)                                   then
 *  client_request        1      1 route u8 | 2 flags u8 (1 forwarded) | 4 user u32 |         header (256) + body
 *                               8 token f64 | 16 group u64 | 24 metadata_op u64 |
 *                               32 host_value u64 | 40 body_len u32 | 48 fence_op u64         (fixed 56)
 *  reply                 2      1 flags u8 (1 frame, 2 completes) | 8 token f64 |             frame
 *                               16 group u64                                      (fixed 24)
 *  metadata_commit       3      1 operation u8 | 4 user u32 | 8 op u64 | 16 timestamp u64 |   body
 *                               24 client u128                                    (fixed 40)
 *  metadata_snapshot     4      8 op u64                                          (fixed 16)  snapshot
 *  session_submit        5      1 session u8 | 4 user u32 | 8 token f64 | 16 client u128 |     —
 *                               32 epoch u64 | 40 request u64                     (fixed 48)
 *  session_result        6      1 session u8 | 2 outcome u8 | 4 user u32 | 8 token f64 |      —
 *                               16 client u128 | 32 epoch u64 | 40 watermark u64  (fixed 48)
 *  replica_frame         7      1 direction u8 | 2 replica u8 | 8 group u64       (fixed 16)  frame
 * ```
 *
 * Tokens are integers below 2^53 (client-plane/token.ts) and travel as f64, which holds them
 * exactly. Channel bytes come only from threads of this process: a malformed message is our bug
 * (an assertion), not a reason.
 */
import { AssertionError, assert, readU128LE, writeU128LE } from '@shoal/stdx';
import { FRAME_HEADER_SIZE } from '@shoal/protocol';
import {
  type ChannelMessage, type RequestRoute, type SessionKind, SESSION_OUTCOMES, RequestRoute as Routes,
} from './messages.js';

export const MessageKindCode = {
  client_request: 1,
  reply: 2,
  metadata_commit: 3,
  metadata_snapshot: 4,
  session_submit: 5,
  session_result: 6,
  replica_frame: 7,
} as const;

const FIXED = { client_request: 56, reply: 24, metadata_commit: 40, metadata_snapshot: 16, session_submit: 48, session_result: 48, replica_frame: 16 } as const;
/** The largest fixed header. */
export const ENVELOPE_FIXED_MAX = 56;

const SESSION_CODE: Readonly<Record<SessionKind, number>> = { register: 1, logout: 2 };
const ROUTES = new Set<number>(Object.values(Routes));
const EMPTY = new Uint8Array(0);

/**
 * Encodes messages into parts (a fixed header in a scratch buffer, then views of the caller's
 * bytes). The parts are valid until the next `encode`: write them to a ring at once.
 */
export class EnvelopeEncoder {
  readonly #scratch = new Uint8Array(ENVELOPE_FIXED_MAX);
  readonly #view = new DataView(this.#scratch.buffer);

  encode(message: ChannelMessage): Uint8Array[] {
    const s = this.#scratch;
    const v = this.#view;
    s.fill(0);
    v.setUint8(0, MessageKindCode[message.kind]);
    switch (message.kind) {
      case 'client_request': {
        assert(message.header.length === FRAME_HEADER_SIZE, 'envelope: client_request header must be 256 bytes');
        v.setUint8(1, message.route);
        v.setUint8(2, message.forwarded ? 1 : 0);
        v.setUint32(4, message.userId, true);
        v.setFloat64(8, message.token, true);
        v.setBigUint64(16, message.group, true);
        v.setBigUint64(24, message.metadataOp, true);
        v.setBigUint64(32, message.hostValue, true);
        v.setUint32(40, message.body.length, true);
        v.setBigUint64(48, message.fenceOp, true);
        return [s.subarray(0, FIXED.client_request), message.header, message.body];
      }
      case 'reply':
        v.setUint8(1, (message.frame === null ? 0 : 1) | (message.completes ? 2 : 0));
        v.setFloat64(8, message.token, true);
        v.setBigUint64(16, message.group, true);
        return [s.subarray(0, FIXED.reply), message.frame ?? EMPTY];
      case 'metadata_commit':
        v.setUint8(1, message.operation);
        v.setUint32(4, message.userId, true);
        v.setBigUint64(8, message.op, true);
        v.setBigUint64(16, message.timestamp, true);
        writeU128LE(s, 24, message.client);
        return [s.subarray(0, FIXED.metadata_commit), message.body];
      case 'metadata_snapshot':
        v.setBigUint64(8, message.op, true);
        return [s.subarray(0, FIXED.metadata_snapshot), message.snapshot];
      case 'session_submit':
        v.setUint8(1, SESSION_CODE[message.session]);
        v.setUint32(4, message.userId, true);
        v.setFloat64(8, message.token, true);
        writeU128LE(s, 16, message.client);
        v.setBigUint64(32, message.epoch, true);
        v.setBigUint64(40, message.request, true);
        return [s.subarray(0, FIXED.session_submit)];
      case 'session_result':
        v.setUint8(1, SESSION_CODE[message.session]);
        v.setUint8(2, SESSION_OUTCOMES.indexOf(message.outcome));
        v.setUint32(4, message.userId, true);
        v.setFloat64(8, message.token, true);
        writeU128LE(s, 16, message.client);
        v.setBigUint64(32, message.epoch, true);
        v.setBigUint64(40, message.watermark, true);
        return [s.subarray(0, FIXED.session_result)];
      case 'replica_frame':
        v.setUint8(1, message.direction === 'in' ? 1 : 2);
        v.setUint8(2, message.replica);
        v.setBigUint64(8, message.group, true);
        return [s.subarray(0, FIXED.replica_frame), message.frame];
    }
  }
}

/** Bytes of an encoded message. */
export function encodedLength(parts: readonly Uint8Array[]): number {
  let total = 0;
  for (const part of parts) total += part.length;
  return total;
}

/** Decodes one whole message; byte fields are views into `bytes`. */
export function decodeMessage(bytes: Uint8Array): ChannelMessage {
  assert(bytes.length >= 16, 'envelope: short message');
  const v = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const code = v.getUint8(0);
  switch (code) {
    case MessageKindCode.client_request: {
      assert(bytes.length >= FIXED.client_request + FRAME_HEADER_SIZE, 'envelope: short client_request');
      const route = v.getUint8(1);
      assert(ROUTES.has(route), `envelope: route ${route}`);
      const bodyLength = v.getUint32(40, true);
      const headerAt = FIXED.client_request;
      const bodyAt = headerAt + FRAME_HEADER_SIZE;
      assert(bodyAt + bodyLength === bytes.length, 'envelope: client_request length');
      return {
        kind: 'client_request',
        route: route as RequestRoute,
        userId: v.getUint32(4, true),
        token: v.getFloat64(8, true),
        group: v.getBigUint64(16, true),
        metadataOp: v.getBigUint64(24, true),
        hostValue: v.getBigUint64(32, true),
        fenceOp: v.getBigUint64(48, true),
        forwarded: (v.getUint8(2) & 1) === 1,
        header: bytes.subarray(headerAt, bodyAt),
        body: bytes.subarray(bodyAt),
      };
    }
    case MessageKindCode.reply:
      assert(bytes.length >= FIXED.reply, 'envelope: short reply');
      return {
        kind: 'reply',
        token: v.getFloat64(8, true),
        group: v.getBigUint64(16, true),
        frame: (v.getUint8(1) & 1) === 1 ? bytes.subarray(FIXED.reply) : null,
        completes: (v.getUint8(1) & 2) === 2,
      };
    case MessageKindCode.metadata_commit:
      return {
        kind: 'metadata_commit',
        operation: v.getUint8(1),
        userId: v.getUint32(4, true),
        op: v.getBigUint64(8, true),
        timestamp: v.getBigUint64(16, true),
        client: readU128LE(bytes, 24),
        body: bytes.subarray(FIXED.metadata_commit),
      };
    case MessageKindCode.metadata_snapshot:
      return { kind: 'metadata_snapshot', op: v.getBigUint64(8, true), snapshot: bytes.subarray(FIXED.metadata_snapshot) };
    case MessageKindCode.session_submit:
      assert(bytes.length === FIXED.session_submit, 'envelope: session_submit length');
      return {
        kind: 'session_submit',
        session: sessionKind(v.getUint8(1)),
        userId: v.getUint32(4, true),
        token: v.getFloat64(8, true),
        client: readU128LE(bytes, 16),
        epoch: v.getBigUint64(32, true),
        request: v.getBigUint64(40, true),
      };
    case MessageKindCode.session_result: {
      assert(bytes.length === FIXED.session_result, 'envelope: session_result length');
      const outcome = SESSION_OUTCOMES[v.getUint8(2)];
      assert(outcome !== undefined, 'envelope: session outcome');
      return {
        kind: 'session_result',
        session: sessionKind(v.getUint8(1)),
        outcome,
        userId: v.getUint32(4, true),
        token: v.getFloat64(8, true),
        client: readU128LE(bytes, 16),
        epoch: v.getBigUint64(32, true),
        watermark: v.getBigUint64(40, true),
      };
    }
    case MessageKindCode.replica_frame:
      return {
        kind: 'replica_frame',
        direction: v.getUint8(1) === 1 ? 'in' : 'out',
        replica: v.getUint8(2),
        group: v.getBigUint64(8, true),
        frame: bytes.subarray(FIXED.replica_frame),
      };
    default:
      throw new AssertionError(`envelope: unknown message kind ${code}`);
  }
}

function sessionKind(code: number): SessionKind {
  assert(code === 1 || code === 2, `envelope: session kind ${code}`);
  return code === 1 ? 'register' : 'logout';
}
