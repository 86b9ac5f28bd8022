/**
 * Building the frames a node sends to clients when the answer is decided outside a consensus
 * core: pre-commit denials (header status), local reads, login replies, evictions. Every reply
 * echoes the request's `client`, `request`, `operation`, `timestamp` and `request_checksum`
 * (framing.mdx ReplyHeader).
 */
import {
  EvictionReason, FRAME_HEADER_SIZE, type RequestHeaderView, SHOAL_PROTOCOL_VERSION, SHOAL_PROTOCOL_WINDOW,
  encodeEvictionHeader, encodeIncompatibleProtocolEviction, encodeLoginReply, encodeReplyHeader, encodeResultRejection,
  encodeResultSuccess, formatProtocolVersion, isResultFramed,
} from '@shoal/protocol';

/** Node-wide fields every server frame carries. */
export interface ReplyContext {
  readonly cluster: bigint;
  readonly replica: number;
  view(): number;
  commit(): bigint;
}

/** The request fields a reply echoes (a request header, or what a ledger kept of one). */
export type EchoedRequest = Pick<RequestHeaderView, 'requestChecksum' | 'client' | 'timestamp' | 'request' | 'operation'>;

/** The server version string of the login reply: the protocol version Shoal implements. */
export const SERVER_VERSION = formatProtocolVersion(SHOAL_PROTOCOL_VERSION);

function header(ctx: ReplyContext, request: EchoedRequest, bodyLength: number, status: number, op = 0n): Uint8Array {
  return encodeReplyHeader({
    size: FRAME_HEADER_SIZE + bodyLength,
    cluster: ctx.cluster,
    view: ctx.view(),
    replica: ctx.replica,
    requestChecksum: request.requestChecksum,
    client: request.client,
    op,
    commit: ctx.commit(),
    timestamp: request.timestamp,
    request: request.request,
    operation: request.operation,
    status,
  });
}

function frameOf(head: Uint8Array, body: Uint8Array): Uint8Array {
  if (body.length === 0) return head;
  const frame = new Uint8Array(head.length + body.length);
  frame.set(head, 0);
  frame.set(body, head.length);
  return frame;
}

/** A failure decided before commit: header status, empty body (framing.mdx). */
export function statusReply(ctx: ReplyContext, request: EchoedRequest, status: number): Uint8Array {
  return header(ctx, request, 0, status);
}

/** A successful non-replicated answer: the payload is the whole body (no result section). */
export function payloadReply(ctx: ReplyContext, request: RequestHeaderView, payload: Uint8Array): Uint8Array {
  return frameOf(header(ctx, request, payload.length, 0), payload);
}

/**
 * Parts of a large payload reply (a poll): the header and the body parts, for a gathered socket
 * write without joining them.
 */
export function payloadReplyParts(ctx: ReplyContext, request: RequestHeaderView, parts: readonly Uint8Array[]): Uint8Array[] {
  let length = 0;
  for (const part of parts) length += part.length;
  return [header(ctx, request, length, 0), ...parts];
}

/**
 * A reply whose outcome is a code decided by the host after admission: a result-section
 * rejection for result-framed operations, a header status otherwise.
 */
export function codeReply(ctx: ReplyContext, request: EchoedRequest, code: number): Uint8Array {
  if (isResultFramed(request.operation, 1)) {
    const body = encodeResultRejection(code);
    return frameOf(header(ctx, request, body.length, 0), body);
  }
  return statusReply(ctx, request, code);
}

/**
 * The login-register reply: `[count = 0]` then `[user_id][session][server_protocol_version]
 * [server_version]` (the vector `reply_login_register_ok`); `op` and `commit` are the register op.
 */
export function loginReply(ctx: ReplyContext, request: RequestHeaderView, userId: number, epoch: bigint): Uint8Array {
  const body = encodeResultSuccess(encodeLoginReply({
    userId, session: epoch, serverProtocolVersion: SHOAL_PROTOCOL_VERSION, serverVersion: SERVER_VERSION,
  }));
  const head = encodeReplyHeader({
    size: FRAME_HEADER_SIZE + body.length,
    cluster: ctx.cluster,
    view: ctx.view(),
    replica: ctx.replica,
    requestChecksum: request.requestChecksum,
    client: request.client,
    op: epoch,
    commit: epoch > ctx.commit() ? epoch : ctx.commit(),
    timestamp: request.timestamp,
    request: request.request,
    operation: request.operation,
    status: 0,
  });
  return frameOf(head, body);
}

/** Session-terminal: no body, no request correlation. */
export function eviction(ctx: ReplyContext, client: bigint, reason: EvictionReason): Uint8Array {
  return encodeEvictionHeader({ cluster: ctx.cluster, view: ctx.view(), replica: ctx.replica, client, reason });
}

/** Reason 14 with the accepted protocol window at bytes 144/148. */
export function incompatibleProtocolEviction(ctx: ReplyContext, client: bigint): Uint8Array {
  return encodeIncompatibleProtocolEviction(client, SHOAL_PROTOCOL_WINDOW.max, SHOAL_PROTOCOL_WINDOW.min, {
    cluster: ctx.cluster, view: ctx.view(), replica: ctx.replica,
  });
}

export { EvictionReason };
