/**
 * Session forwarding (§8) and in-process session proposals.
 *
 * A host asks its metadata core to register or log out a client (`submitSession`). On the acting
 * primary the core proposes it in-process (Register/Logout prepares); elsewhere, in Normal, it
 * forwards to the current primary (ForwardRegister / ForwardLogout, nonce = origin << 64 |
 * counter) and reports the primary's answer, or a timeout after 5 s, as a `session_result`. The
 * primary proposes forwarded sessions in-process too and answers with the Result frame once the
 * op commits (or is cancelled by a view change). No retransmits exist for these frames.
 */
import {
  Command,
  ForwardLogoutHeaderView,
  ForwardLogoutResultHeaderView,
  ForwardRegisterHeaderView,
  ForwardRegisterResultHeaderView,
  OFFSET_COMMAND,
  OFFSET_REPLICA,
  Operation,
} from '@shoal/protocol';
import { answerForward, LOGOUT_OUTCOMES, REGISTER_OUTCOMES, report, resolve } from './answers.js';
import { admit } from './commit.js';
import type { Core } from './core.js';
import { Drop } from './drops.js';
import type { SessionOutcome } from './effects.js';
import { nextNonce, type PendingForward, type SessionRequest } from './forwarding-state.js';
import { forwardLogoutFrame, forwardRegisterFrame } from './frames.js';
import { Mark } from './marks.js';
import type { Awaiter } from './pipeline.js';
import { sendDirect } from './send.js';
import type { ReplicaIndex } from './types.js';

/**
 * In-process proposal on the primary (§7.2 in-process order). Returns an immediate outcome, or
 * null when the proposal is pipelined / parked (answered later through the awaiter).
 */
export function proposeSession(c: Core, req: SessionRequest, awaiter: Awaiter): SessionOutcome | null {
  if (!c.isPrimaryByIndex() || c.status !== 'normal' || c.ceded || c.transferring()) return 'not_primary';
  const table = c.clientTable;
  if (table === null) return 'not_primary';
  const entry = table.get(req.client);
  if (req.session === 'register' && c.isCaughtUpPrimary() && entry !== undefined && entry.userId !== req.userId) {
    return 'client_id_owned_by_another_user';
  }
  if (c.pipeline.hasClient(req.client)) return 'in_progress';
  if (req.session === 'logout' && entry === undefined && c.isCaughtUpPrimary()) {
    // Already absent: success carrying the current commit point.
    resolve(c, awaiter, req.client, 'ok', BigInt(c.commitMax), 0n);
    return null;
  }
  const outcome = admit(c, {
    client: req.client,
    request: req.session === 'register' ? 0n : req.request,
    session: req.session === 'register' ? 0n : req.epoch,
    requestChecksum: 0n,
    operation: req.session === 'register' ? Operation.Register : Operation.Logout,
    body: new Uint8Array(0),
    userId: req.userId,
    timestamp: 0n,
    token: null,
    awaiter,
  });
  if (outcome === 'dropped') return null; // admit already answered pipeline_full through the awaiter
  return null;
}

/** Host entry point: register or log out a client (local proposal or forward to the primary). */
export function submitSession(c: Core, req: SessionRequest): void {
  if (c.clientTable === null || req.client === 0n) {
    report(c, req.token, req.client, req.session, 'not_primary', 0n, 0n);
    return;
  }
  if (c.isPrimaryByIndex() && c.status === 'normal' && !c.ceded) {
    const awaiter: Awaiter = { kind: 'session_local', token: req.token, session: req.session, commitMaxBefore: c.commitMax };
    const immediate = proposeSession(c, req, awaiter);
    if (immediate !== null) report(c, req.token, req.client, req.session, immediate, 0n, 0n);
    return;
  }
  if (c.status !== 'normal' || c.isPrimaryByIndex()) {
    report(c, req.token, req.client, req.session, 'not_primary', 0n, 0n);
    return;
  }
  const nonce = nextNonce(c.forwarding);
  const pending: PendingForward = { nonce, request: req, primary: c.primaryIndex(), view: c.view, ticksLeft: c.config.ticks.forwardTimeout, extended: false };
  c.forwarding.pending.set(nonce, pending);
  sendForward(c, pending);
}

function sendForward(c: Core, p: PendingForward): void {
  const req = p.request;
  const frame = req.session === 'register'
    ? forwardRegisterFrame(c, req.client, p.nonce, req.userId)
    : forwardLogoutFrame(c, req.client, p.nonce, req.epoch === 0n ? 1n : req.epoch, req.request === 0n ? 1n : req.request);
  sendDirect(c, p.primary as ReplicaIndex, frame);
}

/**
 * This replica entered Normal in a new view (started it, or adopted it). A forward that went to
 * another replica than the new primary (typically: the old primary died with it, and no answer
 * will ever come) follows the view: proposed here when this replica now leads, else sent again to
 * the new primary with a fresh deadline. Without it, a client logging in on a backup while the
 * metadata primary died waited for the 5 s forwarding deadline, got 57, and often retried into
 * the view change: failover measured 10.8 s instead of one heartbeat window.
 *
 * A forward the old primary did propose may have committed in the new view: the new Register then
 * binds the client with a newer epoch (the older one is fenced), as a client's own retry would.
 */
export function reforwardSessions(c: Core): void {
  if (c.status !== 'normal' || c.forwarding.pending.size === 0) return;
  const primary = c.primaryIndex();
  for (const p of [...c.forwarding.pending.values()]) {
    if (p.primary === primary && p.view === c.view) continue;
    if (primary === c.self) {
      c.forwarding.pending.delete(p.nonce);
      submitSession(c, p.request);
      continue;
    }
    c.mark(Mark.ForwardFollowedView, `to ${primary} in view ${c.view}`);
    p.primary = primary;
    p.view = c.view;
    p.ticksLeft = c.config.ticks.forwardTimeout;
    p.extended = false;
    sendForward(c, p);
  }
}

const registerView = new ForwardRegisterHeaderView();
const logoutView = new ForwardLogoutHeaderView();
const registerResultView = new ForwardRegisterResultHeaderView();
const logoutResultView = new ForwardLogoutResultHeaderView();

/** Primary side of ForwardRegister / ForwardLogout. */
export function onForward(c: Core, frame: Uint8Array): string | null {
  const register = frame[OFFSET_COMMAND] === Command.ForwardRegister;
  const origin = frame[OFFSET_REPLICA] as number;
  const h = register ? registerView.bind(frame, 0) : logoutView.bind(frame, 0);
  const nonce = h.nonce;
  const client = h.client;
  const session = register ? 'register' : 'logout';
  const req: SessionRequest = register
    ? { session, client, userId: registerView.bind(frame, 0).userId, epoch: 0n, request: 0n, token: 0 }
    : { session, client, userId: 0, epoch: logoutView.bind(frame, 0).session, request: logoutView.bind(frame, 0).request, token: 0 };
  const awaiter: Awaiter = { kind: 'session_forwarded', origin, nonce, session, commitMaxBefore: c.commitMax };
  const immediate = proposeSession(c, req, awaiter);
  if (immediate !== null) answerForward(c, origin, nonce, client, session, immediate, 0n, 0n);
  return null;
}

/** Origin side: match the result by (nonce, client) and report it. */
export function onForwardResult(c: Core, frame: Uint8Array): string | null {
  const register = frame[OFFSET_COMMAND] === Command.ForwardRegisterResult;
  const h = register ? registerResultView.bind(frame, 0) : logoutResultView.bind(frame, 0);
  const pending = c.forwarding.pending.get(h.nonce);
  if (pending === undefined || pending.request.client !== h.client || pending.request.session !== (register ? 'register' : 'logout')) {
    return c.drop(frame[OFFSET_COMMAND] as number, frame[OFFSET_REPLICA] as number, Drop.ForwardResultUnmatched);
  }
  c.forwarding.pending.delete(h.nonce);
  const code = h.outcome;
  const outcome = (register ? REGISTER_OUTCOMES : LOGOUT_OUTCOMES)[code] ?? 'canceled';
  const epoch = register ? registerResultView.bind(frame, 0).epoch : logoutResultView.bind(frame, 0).commit;
  const watermark = register ? registerResultView.bind(frame, 0).watermark : 0n;
  report(c, pending.request.token, pending.request.client, pending.request.session, outcome, epoch, watermark);
  return null;
}

export function tickForwarding(c: Core): void {
  for (const p of [...c.forwarding.pending.values()]) {
    p.ticksLeft -= 1;
    if (p.ticksLeft > 0) continue;
    if (c.status !== 'normal' && !p.extended) {
      // A view change is under way: its new primary gets the forward (`reforwardSessions`).
      c.mark(Mark.ForwardDeadlineExtended);
      p.extended = true;
      p.ticksLeft = c.config.ticks.forwardTimeout;
      continue;
    }
    c.forwarding.pending.delete(p.nonce);
    c.mark(Mark.ForwardTimedOut);
    report(c, p.request.token, p.request.client, p.request.session, 'forward_timed_out', 0n, 0n);
  }
}

