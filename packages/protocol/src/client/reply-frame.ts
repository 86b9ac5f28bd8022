import { assert } from '@shoal/stdx';
import { type Decoded, fail, ok } from '../codec/decoded.js';
import { ErrorCode } from '../errors/error-codes.js';
import { type EvictionHeader, decodeEvictionHeader } from './eviction-header.js';
import { evictionErrorCode } from './eviction-reason.js';
import { ClientCommand, COMMAND_OFFSET, HEADER_SIZE, SIZE_OFFSET } from './frame-prefix.js';
import { getU32, getU8 } from './header-bytes.js';
import { isOperation, isResultFramed } from './operation.js';
import { type ReplyHeader, REPLY_HEADER, type ReplyHeaderFields, decodeReplyHeader, encodeReplyHeader } from './reply-header.js';
import { encodeResultRejection, encodeResultSuccess, parseResultSection } from './result-section.js';

/** A decoded server-to-client frame. */
export type ServerFrame =
  | { readonly kind: 'reply'; readonly header: ReplyHeader; readonly body: Uint8Array }
  | { readonly kind: 'eviction'; readonly header: EvictionHeader };

export function encodeReplyFrame(fields: Omit<ReplyHeaderFields, 'size'>, body: Uint8Array): Uint8Array {
  const frame = new Uint8Array(HEADER_SIZE + body.length);
  frame.set(encodeReplyHeader({ ...fields, size: HEADER_SIZE + body.length }), 0);
  frame.set(body, HEADER_SIZE);
  return frame;
}

/** Structural decode of one reply or eviction frame; `size` must equal the buffer length. */
export function decodeServerFrame(frame: Uint8Array): Decoded<ServerFrame> {
  if (frame.length < HEADER_SIZE) return fail('truncated_header');
  const command = getU8(frame, COMMAND_OFFSET);
  const size = getU32(frame, SIZE_OFFSET);
  if (size !== frame.length) return fail('size_mismatch');
  if (command === ClientCommand.Eviction) {
    const header = decodeEvictionHeader(frame);
    return header.ok ? ok({ kind: 'eviction', header: header.value }) : header;
  }
  if (command === ClientCommand.Reply) {
    const header = decodeReplyHeader(frame);
    return header.ok ? ok({ kind: 'reply', header: header.value, body: frame.subarray(HEADER_SIZE, size) }) : header;
  }
  return fail('command_not_client_bound');
}

/**
 * The body a server sends for a successful reply: a result section (count = 0) ahead of the
 * payload when the operation is result-framed (Register always gets one on success), the payload
 * alone otherwise.
 */
export function encodeReplySuccessBody(operation: number, payload: Uint8Array): Uint8Array {
  return isResultFramed(operation, 1) ? encodeResultSuccess(payload) : payload;
}

/** The body of a committed business rejection of a result-framed operation. */
export function encodeReplyRejectionBody(operation: number, code: number): Uint8Array {
  assert(isResultFramed(operation, 1), `operation ${operation} is not result-framed`);
  return encodeResultRejection(code);
}

/** What a client makes of a frame, in the SDK decode order. */
export type ReplyOutcome =
  | { readonly outcome: 'ok'; readonly operation: number; readonly payload: Uint8Array }
  | {
    readonly outcome: 'error';
    /** An IggyError code (or the SDK-local 14003 for an IncompatibleProtocol eviction). */
    readonly errorCode: number;
    readonly source: 'frame' | 'eviction' | 'status' | 'result_section';
    readonly evictionReason?: number;
  };

/**
 * The client decode funnel of `decodeResponse` (foreign/node/src/wire/vsr/reply.ts) and
 * `decode_response` (core/sdk/src/vsr.rs), strict order: frame length, command (an eviction maps to
 * an error code), declared size, pre-commit status, operation byte (must be declared), then the
 * result section for result-framed operations. Deliberately as lenient as the SDKs about reserved
 * bytes: this is what a stock client would conclude.
 */
export function classifyServerFrame(frame: Uint8Array): ReplyOutcome {
  if (frame.length < HEADER_SIZE) return { outcome: 'error', errorCode: ErrorCode.EmptyResponse, source: 'frame' };
  const command = getU8(frame, COMMAND_OFFSET);
  if (command === ClientCommand.Eviction) {
    const reason = getU8(frame, 255);
    const windowMax = getU32(frame, 144);
    const windowMin = getU32(frame, 148);
    return { outcome: 'error', errorCode: evictionErrorCode(reason, windowMax, windowMin), source: 'eviction', evictionReason: reason };
  }
  if (command !== ClientCommand.Reply) return { outcome: 'error', errorCode: ErrorCode.InvalidCommand, source: 'frame' };
  const size = getU32(frame, SIZE_OFFSET);
  if (size < HEADER_SIZE || frame.length < size) return { outcome: 'error', errorCode: ErrorCode.InvalidCommand, source: 'frame' };
  const status = getU32(frame, REPLY_HEADER.status.offset);
  if (status !== 0) return { outcome: 'error', errorCode: status, source: 'status' };
  const operation = getU8(frame, REPLY_HEADER.operation.offset);
  if (!isOperation(operation)) return { outcome: 'error', errorCode: ErrorCode.InvalidCommand, source: 'frame' };
  const body = frame.subarray(HEADER_SIZE, size);
  if (!isResultFramed(operation, body.length)) return { outcome: 'ok', operation, payload: body };
  const section = parseResultSection(body);
  if (!section.ok) return { outcome: 'error', errorCode: ErrorCode.InvalidCommand, source: 'result_section' };
  if (section.value.code !== 0) return { outcome: 'error', errorCode: section.value.code, source: 'result_section' };
  return { outcome: 'ok', operation, payload: section.value.payload };
}
