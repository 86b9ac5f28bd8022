import { type Decoded, fail, ok } from '../codec/decoded.js';
import { commandForOperation } from './command-code.js';
import { HEADER_SIZE } from './frame-prefix.js';
import { registerCodeOfBody } from './login.js';
import { Operation } from './operation.js';
import { type RequestHeader, type RequestHeaderFields, decodeRequestHeader, encodeRequestHeader } from './request-header.js';

/** A whole request frame: header + body (size = 256 + body length). */
export interface RequestFrame {
  readonly header: RequestHeader;
  /** A view into the frame (no copy). */
  readonly body: Uint8Array;
}

export function encodeRequestFrame(fields: Omit<RequestHeaderFields, 'size'>, body: Uint8Array): Uint8Array {
  const frame = new Uint8Array(HEADER_SIZE + body.length);
  frame.set(encodeRequestHeader({ ...fields, size: HEADER_SIZE + body.length }), 0);
  frame.set(body, HEADER_SIZE);
  return frame;
}

/**
 * Decodes exactly one frame: the header (structural checks of decodeRequestHeader), then `size`
 * must equal the buffer length (the frame decoder hands us one frame) and be at least 256.
 */
export function decodeRequestFrame(frame: Uint8Array): Decoded<RequestFrame> {
  const header = decodeRequestHeader(frame);
  if (!header.ok) return header;
  if (header.value.size < HEADER_SIZE) return fail('size_below_header');
  if (header.value.size !== frame.length) return fail('size_mismatch');
  return ok({ header: header.value, body: frame.subarray(HEADER_SIZE, header.value.size) });
}

/**
 * The command code a request stands for: the code at 196..200 for NonReplicated, the unique
 * command of a replicated operation, 39 for Logout, and for Register the body decides (40 or 45).
 */
export function requestCommandCode(header: RequestHeader, body: Uint8Array): Decoded<number> {
  if (header.operation === Operation.NonReplicated) return ok(header.nonReplicatedCode);
  if (header.operation === Operation.Register) return registerCodeOfBody(body);
  const info = commandForOperation(header.operation);
  return info === null ? fail('operation_without_command') : ok(info.code);
}
