/**
 * Every answer to a waiting party: a client's pre-commit reply or eviction, the reply of a
 * committed op, the outcome of a session operation for the host (`session_result`) or for the
 * replica that forwarded it (ForwardRegisterResult / ForwardLogoutResult), and the cancellation
 * of everything in flight when the pipeline is dropped (§5.1).
 */
import {
  ErrorCode,
  EvictionReason,
  HEADER_SIZE,
  REPLY_LAYOUT,
  encodeEvictionHeader,
  encodeReplyFrame,
  encodeResultRejection,
  isResultFramed,
} from '@shoal/protocol';
import type { Core } from './core.js';
import type { SessionOutcome } from './effects.js';
import { forwardLogoutResultFrame, forwardRegisterResultFrame } from './frames.js';
import { memberReplyFrame } from './group-commit.js';
import type { JournalEntry } from './journal.js';
import type { Awaiter, ClientRequest, PipelineEntry } from './pipeline.js';
import { sendDirect } from './send.js';
import type { ClientToken, ReplicaIndex } from './types.js';

// ---------------------------------------------------------------------------------------------
// Clients.

/** The fields of a client request a pre-commit reply needs. */
export type Answerable = Pick<ClientRequest, 'client' | 'request' | 'requestChecksum' | 'timestamp' | 'operation' | 'token'>;

/** A reply before commit (57 TransientNotCommitted, 59 RequestAlreadyApplied, …). */
export function preCommitReply(c: Core, req: Answerable, code: number): void {
  const framed = isResultFramed(req.operation, 1);
  const frame = encodeReplyFrame(
    {
      cluster: c.config.cluster,
      view: c.view,
      replica: c.self,
      requestChecksum: req.requestChecksum,
      client: req.client,
      commit: BigInt(c.commitMax),
      timestamp: req.timestamp,
      request: req.request,
      operation: req.operation,
      status: framed ? 0 : code,
    },
    framed ? encodeResultRejection(code) : new Uint8Array(0),
  );
  c.effects.push({ kind: 'client_frame', client: req.client, token: req.token, frame });
}

export function evict(c: Core, client: bigint, token: ClientToken | null, reason: EvictionReason): void {
  const frame = encodeEvictionHeader({ cluster: c.config.cluster, view: c.view, replica: c.self, client, reason });
  c.effects.push({ kind: 'client_frame', client, token, frame });
}

/**
 * The committed reply of a pipeline entry, to its awaiter or its client (§4.10); a group's
 * members each get their own (group-commit.ts), in the order they were queued.
 */
export function answerCommitted(c: Core, entry: PipelineEntry, reply: Uint8Array, journal: JournalEntry): void {
  if (entry.awaiter !== null) {
    finishAwaiter(c, entry.awaiter, entry);
    return;
  }
  if (entry.members !== null) {
    const payload = reply.subarray(HEADER_SIZE);
    for (const m of entry.members) c.effects.push({ kind: 'client_frame', client: m.client, token: m.token, frame: memberReplyFrame(c, journal, m, payload) });
    return;
  }
  if (entry.client === 0n) return;
  c.effects.push({ kind: 'client_frame', client: entry.client, token: entry.token, frame: echoed(c, entry, reply) });
}

/**
 * The reply as its client expects it. The committed reply is built from the prepare header (the
 * same bytes on every replica, which the metadata client table caches); a client matches replies
 * by the operation and timestamp it sent, so on the partition plane (no cache) the core hands out
 * a copy carrying the request's own. The metadata worker patches its replies itself.
 */
function echoed(c: Core, entry: PipelineEntry, reply: Uint8Array): Uint8Array {
  const echo = entry.echo;
  if (c.clientTable !== null || echo === null) return reply;
  const frame = reply.slice();
  new DataView(frame.buffer).setBigUint64(REPLY_LAYOUT.timestamp.offset, echo.timestamp, true);
  frame[REPLY_LAYOUT.operation.offset] = echo.operation;
  return frame;
}

// ---------------------------------------------------------------------------------------------
// Session operations (§8).

const REGISTER_CODES: Readonly<Record<SessionOutcome, number>> = {
  ok: 0, not_primary: 1, not_caught_up: 2, pipeline_full: 3, in_progress: 4, canceled: 5, client_id_owned_by_another_user: 6,
  primary_unreachable: 5, forward_timed_out: 5,
};
const LOGOUT_CODES: Readonly<Record<SessionOutcome, number>> = {
  ok: 0, not_primary: 1, not_caught_up: 1, pipeline_full: 2, in_progress: 3, canceled: 4, client_id_owned_by_another_user: 4,
  primary_unreachable: 4, forward_timed_out: 4,
};
/** Result-frame outcome codes back to outcomes (index = code). */
export const REGISTER_OUTCOMES: readonly SessionOutcome[] = ['ok', 'not_primary', 'not_caught_up', 'pipeline_full', 'in_progress', 'canceled', 'client_id_owned_by_another_user'];
export const LOGOUT_OUTCOMES: readonly SessionOutcome[] = ['ok', 'not_primary', 'pipeline_full', 'in_progress', 'canceled'];

export function report(c: Core, token: ClientToken, client: bigint, session: 'register' | 'logout', outcome: SessionOutcome, epoch: bigint, watermark: bigint): void {
  c.effects.push({ kind: 'session_result', token, client, session, outcome, epoch, watermark });
}

/** Sends the primary's answer to a forwarded session operation. */
export function answerForward(c: Core, origin: number, nonce: bigint, client: bigint, session: 'register' | 'logout', outcome: SessionOutcome, epoch: bigint, watermark: bigint): void {
  if (origin >= c.n || origin === c.self) return;
  const to = origin as ReplicaIndex;
  if (session === 'register') {
    const ok = outcome === 'ok';
    sendDirect(c, to, forwardRegisterResultFrame(c, nonce, client, ok ? epoch : 0n, ok ? watermark : 0n, REGISTER_CODES[outcome]));
  } else {
    sendDirect(c, to, forwardLogoutResultFrame(c, nonce, client, outcome === 'ok' ? epoch : 0n, LOGOUT_CODES[outcome]));
  }
}

export function resolve(c: Core, awaiter: Awaiter, client: bigint, outcome: SessionOutcome, epoch: bigint, watermark: bigint): void {
  if (awaiter.kind === 'session_local') report(c, awaiter.token, client, awaiter.session, outcome, epoch, watermark);
  else answerForward(c, awaiter.origin, awaiter.nonce, client, awaiter.session, outcome, epoch, watermark);
}

/** The in-process proposal committed. */
export function finishAwaiter(c: Core, awaiter: Awaiter, entry: PipelineEntry): void {
  const watermark = c.clientTable?.get(entry.client)?.watermark ?? 0n;
  resolve(c, awaiter, entry.client, 'ok', BigInt(entry.op), awaiter.session === 'register' ? watermark : 0n);
}

/** The proposal was dropped (view change, full queue, failed write). §7.2: a Register whose entry
 * moved above the commit point sampled before dispatch did bind. */
export function cancelAwaiter(c: Core, awaiter: Awaiter, outcome: SessionOutcome, client = 0n): void {
  if (awaiter.session === 'register' && client !== 0n) {
    const entry = c.clientTable?.get(client);
    if (entry !== undefined && entry.epoch > BigInt(awaiter.commitMaxBefore)) {
      resolve(c, awaiter, client, 'ok', entry.epoch, entry.watermark);
      return;
    }
  }
  resolve(c, awaiter, client, outcome, 0n, 0n);
}

/**
 * Cancels every in-process awaiter and drops the request queue (§5.1); the prepares too when
 * asked. With `answerDroppedRequests`, every client request that loses its chance here is
 * answered 57 (its outcome is unknown: a new primary may still commit a prepared one).
 */
export function dropRequests(c: Core, alsoPrepares: boolean): void {
  const answer = c.config.answerDroppedRequests;
  for (const q of c.pipeline.clearRequests()) {
    if (q.awaiter !== null) cancelAwaiter(c, q.awaiter, 'canceled', q.client);
    else if (answer && q.token !== null) preCommitReply(c, { ...q, token: q.token }, ErrorCode.TransientNotCommitted);
  }
  for (const p of c.pipeline.entries()) {
    if (answer) answerDropped(c, p);
    if (p.awaiter === null) continue;
    cancelAwaiter(c, p.awaiter, 'canceled', p.client);
    p.awaiter = null;
  }
  if (alsoPrepares) c.pipeline.clear();
}

/**
 * 57 to every client waiting on an uncommitted prepare this replica no longer leads; its token
 * is forgotten, so a later commit of the same prepare (the new primary kept it) answers no one
 * twice.
 */
function answerDropped(c: Core, p: PipelineEntry): void {
  if (p.members !== null) {
    for (const m of p.members) preCommitReply(c, m, ErrorCode.TransientNotCommitted);
  } else if (p.token !== null && p.echo !== null && p.awaiter === null) {
    preCommitReply(c, { client: p.client, request: p.request, token: p.token, ...p.echo }, ErrorCode.TransientNotCommitted);
  }
  p.members = null;
  p.token = null;
}
