/**
 * Client-plane frames a host produces or adjusts next to the driver.
 *
 * - `echoReply`: the core builds committed replies from the PREPARE header (so every replica
 *   caches the same bytes): `operation` is the prepare's (64 for a CreateTopic 132) and
 *   `timestamp` the prepare's. Clients correlate on (request, operation, timestamp), so the host
 *   patches the copy it writes to the connection with the request's own values.
 * - `buildStatusReply` / `buildEvictionFrame`: pre-commit answers decided by the host (admission
 *   rejects, refused logins), shaped like the core's own (§7.3 table).
 */
import { encodeEvictionHeader, encodeReplyFrame, encodeResultRejection, isResultFramed, REPLY_HEADER } from '@shoal/protocol';

const COMMAND_REPLY = 8;

/** A copy of `frame` echoing the request's operation and timestamp (evictions are returned as is). */
export function echoReply(frame: Uint8Array, request: { readonly operation: number; readonly timestamp: bigint }): Uint8Array {
  if (frame.length < 256 || frame[60] !== COMMAND_REPLY) return frame;
  const out = frame.slice();
  out[REPLY_HEADER.operation.offset] = request.operation;
  new DataView(out.buffer, out.byteOffset, out.byteLength).setBigUint64(REPLY_HEADER.timestamp.offset, request.timestamp, true);
  return out;
}

export interface ReplyContext {
  readonly cluster: bigint;
  readonly view: number;
  readonly replica: number;
  readonly client: bigint;
  readonly request: bigint;
  readonly operation: number;
  readonly timestamp: bigint;
  readonly requestChecksum?: bigint;
  readonly commit?: bigint;
}

/**
 * A pre-commit rejection: result-framed operations get the one-entry result section
 * `[1][0][code]` with status 0, the others a header status (empty body).
 */
export function buildStatusReply(ctx: ReplyContext, code: number): Uint8Array {
  const framed = isResultFramed(ctx.operation, 1);
  return encodeReplyFrame(
    {
      cluster: ctx.cluster, view: ctx.view, replica: ctx.replica, requestChecksum: ctx.requestChecksum ?? 0n, client: ctx.client,
      commit: ctx.commit ?? 0n, timestamp: ctx.timestamp, request: ctx.request, operation: ctx.operation, status: framed ? 0 : code,
    },
    framed ? encodeResultRejection(code) : new Uint8Array(0),
  );
}

/** A successful reply with an explicit body (e.g. the login reply of a bound session). */
export function buildReply(ctx: ReplyContext, body: Uint8Array): Uint8Array {
  return encodeReplyFrame(
    {
      cluster: ctx.cluster, view: ctx.view, replica: ctx.replica, requestChecksum: ctx.requestChecksum ?? 0n, client: ctx.client,
      commit: ctx.commit ?? 0n, timestamp: ctx.timestamp, request: ctx.request, operation: ctx.operation,
    },
    body,
  );
}

export function buildEvictionFrame(ctx: { readonly cluster: bigint; readonly view: number; readonly replica: number; readonly client: bigint }, reason: number): Uint8Array {
  return encodeEvictionHeader({ cluster: ctx.cluster, view: ctx.view, replica: ctx.replica, client: ctx.client, reason });
}
