/**
 * Every answer to a waiting party: a client's pre-commit reply or eviction, the reply of a
 * committed op, the outcome of a session operation for the host (`session_result`) or for the
 * replica that forwarded it (ForwardRegisterResult / ForwardLogoutResult), and the cancellation
 * of everything in flight when the pipeline is dropped (§5.1).
 */
import {
  EvictionReason,
  HEADER_SIZE,
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

/** A reply before commit (57 TransientNotCommitted, 59 RequestAlreadyApplied, …). */
export function preCommitReply(c: Core, req: ClientRequest, code: number): void {
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
  c.effects.push({ kind: 'client_frame', client: entry.client, token: entry.token, frame: reply });
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

/** Cancels every in-process awaiter and drops the request queue (§5.1); the prepares too when asked. */
export function dropRequests(c: Core, alsoPrepares: boolean): void {
  for (const q of c.pipeline.clearRequests()) if (q.awaiter !== null) cancelAwaiter(c, q.awaiter, 'canceled', q.client);
  for (const p of c.pipeline.entries()) {
    if (p.awaiter === null) continue;
    cancelAwaiter(c, p.awaiter, 'canceled', p.client);
    p.awaiter = null;
  }
  if (alsoPrepares) c.pipeline.clear();
}
