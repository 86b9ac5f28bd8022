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
import { U64_MAX } from '@shoal/stdx';
import {
  ForwardLogoutHeaderView,
  ForwardLogoutResultHeaderView,
  ForwardRegisterHeaderView,
  ForwardRegisterResultHeaderView,
} from '@shoal/protocol';
import type { Core } from './core.js';
import type { SessionOutcome } from './effects.js';
import { forwardLogoutFrame, forwardLogoutResultFrame, forwardRegisterFrame, forwardRegisterResultFrame } from './frames.js';
import type { Awaiter, PipelineEntry } from './pipeline.js';
import { sendDirect } from './send.js';
import type { ClientToken, Op, ReplicaIndex } from './types.js';

interface PendingForward {
  readonly nonce: bigint;
  readonly request: SessionRequest;
  /** The replica the forward went to, and in which view. */
  primary: number;
  view: number;
  ticksLeft: number;
  /** The deadline fell inside a view change once and was extended (at most once). */
  extended: boolean;
}

export interface ForwardingState {
  counter: bigint;
  readonly origin: bigint;
  readonly pending: Map<bigint, PendingForward>;
}

export function newForwardingState(incarnation: bigint, replica: number): ForwardingState {
  return { counter: incarnation & U64_MAX, origin: BigInt(replica), pending: new Map() };
}

function nextNonce(f: ForwardingState): bigint {
  f.counter = (f.counter + 1n) & U64_MAX;
  if (f.counter === 0n) f.counter = 1n;
  return (f.origin << 64n) | f.counter;
}

/** A session operation submitted by the host (a login verified locally, a logout or disconnect). */
export interface SessionRequest {
  readonly session: 'register' | 'logout';
  readonly client: bigint;
  readonly userId: number;
  /** Logout: the session epoch and request number the client used (disconnect: u64::MAX). */
  readonly epoch: bigint;
  readonly request: bigint;
  readonly token: ClientToken;
}

const REGISTER_CODES: Readonly<Record<SessionOutcome, number>> = {
  ok: 0, not_primary: 1, not_caught_up: 2, pipeline_full: 3, in_progress: 4, canceled: 5, client_id_owned_by_another_user: 6,
  primary_unreachable: 5, forward_timed_out: 5,
};
const LOGOUT_CODES: Readonly<Record<SessionOutcome, number>> = {
  ok: 0, not_primary: 1, not_caught_up: 1, pipeline_full: 2, in_progress: 3, canceled: 4, client_id_owned_by_another_user: 4,
  primary_unreachable: 4, forward_timed_out: 4,
};
const REGISTER_OUTCOMES: readonly SessionOutcome[] = ['ok', 'not_primary', 'not_caught_up', 'pipeline_full', 'in_progress', 'canceled', 'client_id_owned_by_another_user'];
const LOGOUT_OUTCOMES: readonly SessionOutcome[] = ['ok', 'not_primary', 'pipeline_full', 'in_progress', 'canceled'];

function report(c: Core, token: ClientToken, client: bigint, session: 'register' | 'logout', outcome: SessionOutcome, epoch: bigint, watermark: bigint): void {
  c.effects.push({ kind: 'session_result', token, client, session, outcome, epoch, watermark });
}

/** Sends the primary's answer to a forwarded session operation. */
function answerForward(c: Core, origin: number, nonce: bigint, client: bigint, session: 'register' | 'logout', outcome: SessionOutcome, epoch: bigint, watermark: bigint): void {
  if (origin >= c.n || origin === c.self) return;
  const to = origin as ReplicaIndex;
  if (session === 'register') {
    const ok = outcome === 'ok';
    sendDirect(c, to, forwardRegisterResultFrame(c, nonce, client, ok ? epoch : 0n, ok ? watermark : 0n, REGISTER_CODES[outcome]));
  } else {
    sendDirect(c, to, forwardLogoutResultFrame(c, nonce, client, outcome === 'ok' ? epoch : 0n, LOGOUT_CODES[outcome]));
  }
}

function resolve(c: Core, awaiter: Awaiter, client: bigint, outcome: SessionOutcome, epoch: bigint, watermark: bigint): void {
  if (awaiter.kind === 'session_local') report(c, awaiter.token, client, awaiter.session, outcome, epoch, watermark);
  else answerForward(c, awaiter.origin, awaiter.nonce, client, awaiter.session, outcome, epoch, watermark);
}

/** The in-process proposal committed. */
export function finishAwaiter(c: Core, awaiter: Awaiter, entry: PipelineEntry, _outcome: 'ok'): void {
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
 * In-process proposal on the primary (§7.2 in-process order). Returns an immediate outcome, or
 * null when the proposal is pipelined / parked (answered later through the awaiter).
 */
export function proposeSession(c: Core, req: SessionRequest, awaiter: Awaiter, admitFn: (c: Core, q: import('./pipeline.js').QueuedRequest) => string): SessionOutcome | null {
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
  const outcome = admitFn(c, {
    client: req.client,
    request: req.session === 'register' ? 0n : req.request,
    session: req.session === 'register' ? 0n : req.epoch,
    requestChecksum: 0n,
    operation: req.session === 'register' ? 1 : 3,
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
export function submitSession(c: Core, req: SessionRequest, admitFn: (c: Core, q: import('./pipeline.js').QueuedRequest) => string): void {
  if (c.clientTable === null || req.client === 0n) {
    report(c, req.token, req.client, req.session, 'not_primary', 0n, 0n);
    return;
  }
  if (c.isPrimaryByIndex() && c.status === 'normal' && !c.ceded) {
    const awaiter: Awaiter = { kind: 'session_local', token: req.token, session: req.session, commitMaxBefore: c.commitMax };
    const immediate = proposeSession(c, req, awaiter, admitFn);
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
export function reforwardSessions(c: Core, admitFn: (c: Core, q: import('./pipeline.js').QueuedRequest) => string): void {
  if (c.status !== 'normal' || c.forwarding.pending.size === 0) return;
  const primary = c.primaryIndex();
  for (const p of [...c.forwarding.pending.values()]) {
    if (p.primary === primary && p.view === c.view) continue;
    if (primary === c.self) {
      c.forwarding.pending.delete(p.nonce);
      submitSession(c, p.request, admitFn);
      continue;
    }
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
export function onForward(c: Core, frame: Uint8Array, admitFn: (c: Core, q: import('./pipeline.js').QueuedRequest) => string): string | null {
  const register = frame[60] === 26;
  const origin = frame[61] as number;
  const h = register ? registerView.bind(frame, 0) : logoutView.bind(frame, 0);
  const nonce = h.nonce;
  const client = h.client;
  const session = register ? 'register' : 'logout';
  const req: SessionRequest = register
    ? { session, client, userId: registerView.bind(frame, 0).userId, epoch: 0n, request: 0n, token: 0 }
    : { session, client, userId: 0, epoch: logoutView.bind(frame, 0).session, request: logoutView.bind(frame, 0).request, token: 0 };
  const awaiter: Awaiter = { kind: 'session_forwarded', origin, nonce, session, commitMaxBefore: c.commitMax };
  const immediate = proposeSession(c, req, awaiter, admitFn);
  if (immediate !== null) answerForward(c, origin, nonce, client, session, immediate, 0n, 0n);
  return null;
}

/** Origin side: match the result by (nonce, client) and report it. */
export function onForwardResult(c: Core, frame: Uint8Array): string | null {
  const register = frame[60] === 27;
  const h = register ? registerResultView.bind(frame, 0) : logoutResultView.bind(frame, 0);
  const pending = c.forwarding.pending.get(h.nonce);
  if (pending === undefined || pending.request.client !== h.client || pending.request.session !== (register ? 'register' : 'logout')) {
    return c.drop(frame[60] as number, frame[61] as number, 'forward_result_unmatched');
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
      p.extended = true;
      p.ticksLeft = c.config.ticks.forwardTimeout;
      continue;
    }
    c.forwarding.pending.delete(p.nonce);
    report(c, p.request.token, p.request.client, p.request.session, 'forward_timed_out', 0n, 0n);
  }
}

export type { Op };
