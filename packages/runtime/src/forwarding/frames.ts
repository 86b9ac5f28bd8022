/**
 * The frames of a forwarding channel (docs/cluster.md "Forwarded partition requests"): one
 * node carries a client's partition request to the partition's primary on another node and gets
 * the primary's reply back. The channel is a TCP connection from the forwarding node to the
 * primary's CLIENT port; nothing of it ever travels on the replica plane.
 *
 * Every frame has the 256-byte shape of the client protocol (`size` u32 at 48, `command` u8 at
 * 60, little-endian), so the client port's frame decoder reads it, followed by an inner frame:
 *
 * | command | frame           | inner frame                                  | direction           |
 * |---------|-----------------|----------------------------------------------|---------------------|
 * | 14..16  | Hello, Challenge, Finish (the replica handshake's layouts, a channel key) | — | handshake |
 * | 5       | ForwardRequest  | the client's 256-byte request header + body  | forwarder → primary |
 * | 8       | ForwardReply    | the primary's Reply or Eviction frame, or none | primary → forwarder |
 *
 * Channel header (bytes not named are zero):
 *
 * | offset | field       | type | ForwardRequest                           | ForwardReply                 |
 * |--------|-------------|------|------------------------------------------|------------------------------|
 * | 48     | size        | u32  | 256 + inner length                       | same                         |
 * | 60     | command     | u8   | 5                                        | 8                            |
 * | 64     | forward_id  | u64  | chosen by the forwarder, unique per link | echoed                       |
 * | 72     | route       | u8   | channels/messages.ts RequestRoute        | flags: 1 inner frame present, 2 completes the request |
 * | 76     | user_id     | u32  | the user the client's session is bound to| 0                            |
 * | 80     | group       | u64  | the partition group                      | 0                            |
 * | 88     | metadata_op | u64  | the forwarder's applied metadata op (the primary waits for it) | 0      |
 * | 96     | fence_op    | u64  | the connection's read-your-writes op     | 0                            |
 * | 104    | host_value  | u64  | route-specific (the resolved consumer)   | 0                            |
 */
import { assert } from '@shoal/stdx';
import { FRAME_HEADER_SIZE } from '@shoal/protocol';

export const CHANNEL_HEADER_SIZE = FRAME_HEADER_SIZE;
export const CHANNEL_SIZE_AT = 48;
export const CHANNEL_COMMAND_AT = 60;
export const CHANNEL_FORWARD_ID_AT = 64;
export const CHANNEL_ROUTE_AT = 72;
export const CHANNEL_FLAGS_AT = 72;
export const CHANNEL_USER_AT = 76;
export const CHANNEL_GROUP_AT = 80;
export const CHANNEL_METADATA_OP_AT = 88;
export const CHANNEL_FENCE_OP_AT = 96;
export const CHANNEL_HOST_VALUE_AT = 104;

/** Channel commands (the client protocol's Request and Reply values, byte 60). */
export const ChannelCommand = { ForwardRequest: 5, ForwardReply: 8 } as const;

const REPLY_HAS_FRAME = 1;
const REPLY_COMPLETES = 2;

/** What a ForwardRequest carries besides the client's frame. */
export interface ForwardRequestFields {
  readonly forwardId: bigint;
  readonly route: number;
  readonly userId: number;
  readonly group: bigint;
  readonly metadataOp: bigint;
  readonly fenceOp: bigint;
  readonly hostValue: bigint;
}

export interface ForwardRequestFrame extends ForwardRequestFields {
  /** Views into the received frame. */
  readonly header: Uint8Array;
  readonly body: Uint8Array;
}

export interface ForwardReplyFrame {
  readonly forwardId: bigint;
  /** A view into the received frame; null: the request ended without an answer. */
  readonly frame: Uint8Array | null;
  readonly completes: boolean;
}

/** The channel header of a ForwardRequest; send it followed by `header` and `body`. */
export function encodeForwardRequestHeader(fields: ForwardRequestFields, header: Uint8Array, body: Uint8Array): Uint8Array {
  assert(header.length === FRAME_HEADER_SIZE, 'forward request: the client header is 256 bytes');
  const out = new Uint8Array(CHANNEL_HEADER_SIZE);
  const v = new DataView(out.buffer);
  v.setUint32(CHANNEL_SIZE_AT, CHANNEL_HEADER_SIZE + header.length + body.length, true);
  v.setUint8(CHANNEL_COMMAND_AT, ChannelCommand.ForwardRequest);
  v.setBigUint64(CHANNEL_FORWARD_ID_AT, fields.forwardId, true);
  v.setUint8(CHANNEL_ROUTE_AT, fields.route);
  v.setUint32(CHANNEL_USER_AT, fields.userId, true);
  v.setBigUint64(CHANNEL_GROUP_AT, fields.group, true);
  v.setBigUint64(CHANNEL_METADATA_OP_AT, fields.metadataOp, true);
  v.setBigUint64(CHANNEL_FENCE_OP_AT, fields.fenceOp, true);
  v.setBigUint64(CHANNEL_HOST_VALUE_AT, fields.hostValue, true);
  return out;
}

/** The channel header of a ForwardReply; send it followed by `frame` (when not null). */
export function encodeForwardReplyHeader(forwardId: bigint, frame: Uint8Array | null, completes: boolean): Uint8Array {
  const out = new Uint8Array(CHANNEL_HEADER_SIZE);
  const v = new DataView(out.buffer);
  v.setUint32(CHANNEL_SIZE_AT, CHANNEL_HEADER_SIZE + (frame?.length ?? 0), true);
  v.setUint8(CHANNEL_COMMAND_AT, ChannelCommand.ForwardReply);
  v.setBigUint64(CHANNEL_FORWARD_ID_AT, forwardId, true);
  v.setUint8(CHANNEL_FLAGS_AT, (frame === null ? 0 : REPLY_HAS_FRAME) | (completes ? REPLY_COMPLETES : 0));
  return out;
}

function view(frame: Uint8Array): DataView {
  return new DataView(frame.buffer, frame.byteOffset, frame.byteLength);
}

/**
 * A ForwardRequest as the frame decoder delivered it (whole frame, size checked), or null when it
 * is malformed: the peer is authenticated, so a bad frame is a bug on its side and closes the
 * channel.
 */
export function decodeForwardRequest(frame: Uint8Array): ForwardRequestFrame | null {
  if (frame.length < CHANNEL_HEADER_SIZE + FRAME_HEADER_SIZE || frame[CHANNEL_COMMAND_AT] !== ChannelCommand.ForwardRequest) return null;
  const v = view(frame);
  if (v.getUint32(CHANNEL_SIZE_AT, true) !== frame.length) return null;
  return {
    forwardId: v.getBigUint64(CHANNEL_FORWARD_ID_AT, true),
    route: v.getUint8(CHANNEL_ROUTE_AT),
    userId: v.getUint32(CHANNEL_USER_AT, true),
    group: v.getBigUint64(CHANNEL_GROUP_AT, true),
    metadataOp: v.getBigUint64(CHANNEL_METADATA_OP_AT, true),
    fenceOp: v.getBigUint64(CHANNEL_FENCE_OP_AT, true),
    hostValue: v.getBigUint64(CHANNEL_HOST_VALUE_AT, true),
    header: frame.subarray(CHANNEL_HEADER_SIZE, CHANNEL_HEADER_SIZE + FRAME_HEADER_SIZE),
    body: frame.subarray(CHANNEL_HEADER_SIZE + FRAME_HEADER_SIZE),
  };
}

/** A ForwardReply (whole frame), or null when malformed. */
export function decodeForwardReply(frame: Uint8Array): ForwardReplyFrame | null {
  if (frame.length < CHANNEL_HEADER_SIZE || frame[CHANNEL_COMMAND_AT] !== ChannelCommand.ForwardReply) return null;
  const v = view(frame);
  if (v.getUint32(CHANNEL_SIZE_AT, true) !== frame.length) return null;
  const flags = v.getUint8(CHANNEL_FLAGS_AT);
  const hasFrame = (flags & REPLY_HAS_FRAME) !== 0;
  if (hasFrame !== (frame.length > CHANNEL_HEADER_SIZE)) return null;
  return {
    forwardId: v.getBigUint64(CHANNEL_FORWARD_ID_AT, true),
    frame: hasFrame ? frame.subarray(CHANNEL_HEADER_SIZE) : null,
    completes: (flags & REPLY_COMPLETES) !== 0,
  };
}
