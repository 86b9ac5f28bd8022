/**
 * Normal operation, the prepare path (§4.3–§4.8):
 *
 *   client ─▶ onRequest ─▶ preflight (metadata §7.3) ─▶ request queue? ─▶ propose: build prepare
 *            (primary)                                                    (§4.4), journal, chain
 *                                                                         forward, self-ack
 *   peer ───▶ onPrepare (backup §4.7): checks, journal, forward along the chain, PrepareOk, walk
 *
 * Sends that vouch for a journal entry (the forward, the PrepareOk) are gated on its durability
 * (send.ts); the journal write itself is an effect completed by `onJournalWritten`.
 */
import { assert } from '@shoal/stdx';
import {
  EvictionReason,
  encodeEvictionHeader,
  encodeReplyFrame,
  encodeResultRejection,
  ErrorCode,
  isResultFramed,
  PrepareHeaderView,
} from '@shoal/protocol';
import { advanceCommitMax, commitWalk, OPERATION_LOGOUT, OPERATION_REGISTER, recordOf, selfAck } from './commit.js';
import type { Core } from './core.js';
import { cancelAwaiter } from './forwarding.js';
import { prepareFrame, prepareOkFrame, restampedPrepare } from './frames.js';
import { entryFromFrame, type JournalEntry } from './journal.js';
import type { Awaiter, QueuedRequest } from './pipeline.js';
import { sendGated } from './send.js';
import { maybeCheckpoint, journalHasRoom } from './checkpoint.js';
import { setCanon, truncateJournal } from './trust.js';
import type { ClientToken, Op } from './types.js';

/** A client request, authenticated and authorised by the host (the session fence is ours). */
export interface ClientRequest {
  readonly client: bigint;
  readonly request: bigint;
  readonly session: bigint;
  readonly requestChecksum: bigint;
  readonly operation: number;
  readonly body: Uint8Array;
  /** The user the host authenticated (Register) or bound to the connection. */
  readonly userId: number;
  /** The request header's timestamp (echoed in pre-commit replies). */
  readonly timestamp: bigint;
  readonly token: ClientToken;
}

export type RequestOutcome = 'proposed' | 'queued' | 'answered' | 'dropped';

// ---------------------------------------------------------------------------------------------
// Pre-commit answers.

function preCommitReply(c: Core, req: ClientRequest, code: number): void {
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

function evict(c: Core, client: bigint, token: ClientToken | null, reason: number): void {
  const frame = encodeEvictionHeader({ cluster: c.config.cluster, view: c.view, replica: c.self, client, reason });
  c.effects.push({ kind: 'client_frame', client, token, frame });
}

// ---------------------------------------------------------------------------------------------
// Admission (primary).

/**
 * The request as the pipeline takes it. The body stays the caller's view: a request proposed at
 * once is copied into its prepare frame (`propose`), so only a request that is parked needs its
 * own copy (`admit`). Copying every SendMessages body here cost 15–20 % of the primary's time.
 */
function queued(req: ClientRequest, awaiter: Awaiter | null = null): QueuedRequest {
  return { ...req, awaiter };
}

/** §4.3 / §7.2 / §7.3: the admission order of a request arriving at this replica. */
export function onRequest(c: Core, req: ClientRequest): RequestOutcome {
  if (req.client === 0n || req.operation === 0 || req.operation === 2) {
    c.event('request_refused', `client=${req.client} operation=${req.operation}`);
    return 'dropped';
  }
  const table = c.clientTable;
  if (table === null) {
    if (!c.isCaughtUpPrimary()) {
      preCommitReply(c, req, ErrorCode.TransientNotCommitted);
      return 'answered';
    }
    return admit(c, queued(req));
  }
  if (req.operation === OPERATION_REGISTER) return onRegisterRequest(c, req);
  // §7.3 request preflight, in order.
  if (c.pipeline.hasClient(req.client) || !c.isCaughtUpPrimary()) {
    preCommitReply(c, req, ErrorCode.TransientNotCommitted);
    return 'answered';
  }
  const check = table.check(req.client, req.session, req.request, req.requestChecksum);
  switch (check.kind) {
    case 'new':
      return admit(c, queued(req));
    case 'duplicate':
      c.effects.push({ kind: 'client_frame', client: req.client, token: req.token, frame: check.reply.slice() });
      return 'answered';
    case 'no_session':
      evict(c, req.client, req.token, EvictionReason.NoSession);
      return 'answered';
    case 'fenced':
      evict(c, req.client, req.token, EvictionReason.SessionTooLow);
      return 'answered';
    case 'already_applied':
      preCommitReply(c, req, ErrorCode.RequestAlreadyApplied);
      return 'answered';
    case 'epoch_ahead':
    case 'checksum_mismatch':
      c.event('client_bug', `${check.kind} client=${req.client} request=${req.request}`);
      return 'dropped';
  }
}

function onRegisterRequest(c: Core, req: ClientRequest): RequestOutcome {
  const table = c.clientTable;
  assert(table !== null, 'register without a client table');
  if (!c.isActingPrimary() || c.transferring()) {
    preCommitReply(c, req, ErrorCode.TransientNotCommitted);
    return 'answered';
  }
  const entry = table.get(req.client);
  if (c.isCaughtUpPrimary() && entry !== undefined && entry.userId !== req.userId) {
    evict(c, req.client, req.token, EvictionReason.SessionError);
    return 'answered';
  }
  if (c.pipeline.hasClient(req.client)) return 'dropped';
  return admit(c, { ...queued(req), body: new Uint8Array(0) });
}

/** Parks the request when no prepare slot is free (or the primary is catching up), else proposes. */
export function admit(c: Core, q: QueuedRequest): RequestOutcome {
  if (c.pipeline.full || !c.isCaughtUpPrimary() || !journalHasRoom(c, c.op + 1) || c.pipeline.requests.length > 0) {
    // Parked: the caller may reuse the body's buffer once this call returns.
    if (c.pipeline.requests.push(q.body.length === 0 ? q : { ...q, body: q.body.slice() })) return 'queued';
    if (q.awaiter !== null) cancelAwaiter(c, q.awaiter, 'pipeline_full', q.client);
    return 'dropped';
  }
  return propose(c, q) ? 'proposed' : 'answered';
}

/** Moves parked requests into free prepare slots (FIFO) while this is a caught-up primary. */
export function promoteRequests(c: Core): void {
  while (!c.pipeline.full && c.pipeline.requests.length > 0 && c.isCaughtUpPrimary() && journalHasRoom(c, c.op + 1)) {
    const q = c.pipeline.requests.shift() as QueuedRequest;
    propose(c, q);
  }
}

/** §4.4 + §4.5: build the prepare for op + 1, journal it, start replicating. False if rejected. */
export function propose(c: Core, q: QueuedRequest): boolean {
  assert(c.isActingPrimary() && !c.pipeline.full, 'propose: not an acting primary with a free slot');
  maybeCheckpoint(c);
  const op = c.op + 1;
  const now = c.time.realtimeMicros();
  const timestamp = now > c.lastTimestamp ? now : c.lastTimestamp + 1n;
  let operation = q.operation;
  let body: Uint8Array = new Uint8Array(0);
  let userId = 0;
  if (c.clientTable !== null) {
    // The acting user is stamped from the client table, never trusted from the wire (§4.4).
    userId = q.operation === OPERATION_REGISTER ? q.userId : (c.clientTable.get(q.client)?.userId ?? q.userId);
  }
  if (q.operation !== OPERATION_REGISTER && q.operation !== OPERATION_LOGOUT) {
    const verdict = c.sm.prepare({ operation: q.operation, body: q.body, client: q.client, userId, op, timestamp });
    if (!verdict.ok) {
      if (q.awaiter === null && q.token !== null) evict(c, q.client, q.token, verdict.eviction);
      return false;
    }
    operation = verdict.operation;
    body = verdict.body;
  }
  const frame = prepareFrame(c, {
    client: q.client,
    parent: c.lastPrepareChecksum,
    requestChecksum: q.requestChecksum,
    op,
    commit: c.commitMax,
    timestamp,
    request: q.request,
    operation,
    userId,
  }, body);
  const entry = entryFromFrame(frame, !c.plane.journalDurable, true, true);
  c.pipeline.push({
    op, checksum: entry.checksum, parent: entry.parent, client: q.client, request: q.request, operation,
    token: q.token, awaiter: q.awaiter, acks: 0, quorum: false,
  });
  // Pre-advance the sequencer, the chain and the timestamp floor with the append (pitfall 1).
  c.op = op;
  c.lastPrepareChecksum = entry.checksum;
  c.lastTimestamp = timestamp;
  setCanon(c, op, { checksum: entry.checksum, parent: entry.parent, header: null });
  journalAppend(c, entry, frame, 'primary');
  forwardAlongChain(c, entry);
  if (!c.timers.prepare.running) c.timers.prepare.start();
  if (entry.durable) selfAck(c, op, entry.checksum);
  return true;
}

/** Puts the entry in the journal, tells the state machine, and asks the host to persist it. */
export function journalAppend(c: Core, entry: JournalEntry, frame: Uint8Array, source: 'primary' | 'live' | 'repair'): void {
  c.journal.put(entry);
  c.sm.journaled(recordOf(entry), source);
  // The effect shares the entry's immutable frame (command 6), never the caller's buffer.
  if (c.plane.journalDurable) c.effects.push({ kind: 'journal_append', op: entry.op, checksum: entry.checksum, frame: entry.frame });
}

/** §4.6: forward to the successor unless it is the primary of the prepare's view (pitfall 6). */
function forwardAlongChain(c: Core, entry: JournalEntry): void {
  if (entry.op <= c.commitMin) return;
  const next = ((c.self + 1) % c.n) as typeof c.self;
  if (next === c.self || next === c.primaryIndex(c.view)) return;
  sendGated(c, next, restampedPrepare(entry.frame, c.view), { op: entry.op, checksum: entry.checksum });
}

function sendPrepareOk(c: Core, entry: JournalEntry): void {
  if (c.status !== 'normal' || c.transferring()) return;
  const primary = c.primaryIndex();
  if (primary === c.self) return;
  const ack = prepareOkFrame(c, entry);
  sendGated(c, primary, ack, { op: entry.op, checksum: entry.checksum });
}

function sendAppliedAck(c: Core, frame: Uint8Array): void {
  if (c.status !== 'normal' || c.transferring()) return;
  const primary = c.primaryIndex();
  if (primary === c.self) return;
  const h = view.bind(frame, 0);
  const ack = prepareOkFrame(c, { parent: h.parent, checksum: h.checksum, op: h.opNumber, timestamp: h.timestamp, request: h.request, operation: h.operation });
  sendGated(c, primary, ack);
}

// ---------------------------------------------------------------------------------------------
// Backup (§4.7).

const view = new PrepareHeaderView();

export function onPrepare(c: Core, frame: Uint8Array): string | null {
  const h = view.bind(frame, 0);
  const from = h.replica;
  if (c.transferring()) return c.drop(6, from, 'transferring');
  if (c.status !== 'normal') return c.drop(6, from, 'not_normal');
  if (h.view > c.view) {
    if (h.view > c.observedNewerView) c.observedNewerView = h.view as typeof c.view;
    return c.drop(6, from, 'prepare_newer_view');
  }
  if (h.view < c.view) return c.drop(6, from, 'prepare_older_view');
  if (c.isPrimaryByIndex()) return c.drop(6, from, 'prepare_at_primary');
  const op = h.opNumber;
  if (h.commitNumber > c.commitMax) c.commitMax = h.commitNumber;
  // A prepare of the current view from its primary is on the canonical log: an anchor.
  setCanon(c, op, { checksum: h.checksum, parent: h.parent, header: null });
  if (op <= c.commitMin) {
    // Already applied here, so committed: re-ack it when we still hold it, or a primary whose
    // merged commit point lags ours (and whose StartView acks were lost) never completes it.
    const held = c.journal.get(op);
    if (held !== undefined && held.checksum === h.checksum) {
      sendPrepareOk(c, held);
      return null;
    }
    if (held === undefined) {
      // Applied (so committed) but compacted away (a snapshot install, the retention window):
      // the current primary's copy at a committed op is the committed prepare; acking it only
      // confirms a decision already made, so nothing needs to be durable for it.
      sendAppliedAck(c, frame);
      return null;
    }
    return c.drop(6, from, 'already_applied');
  }
  const existing = c.journal.get(op);
  if (existing !== undefined) {
    if (existing.checksum !== h.checksum) {
      commitWalk(c); // the new anchor exposes the stale entry; the walk discards it
      return c.drop(6, from, 'journal_conflict');
    }
    forwardAlongChain(c, existing);
    sendPrepareOk(c, existing);
    commitWalk(c);
    return null;
  }
  const previous = c.journal.get(op - 1);
  if (previous !== undefined && previous.view === h.view && previous.checksum !== h.parent) {
    // §13.4: upstream panics here; we drop the prepare (no ack) and let the trust walk repair.
    commitWalk(c);
    return c.drop(6, from, 'hash_chain_break');
  }
  const appends = op === c.op + 1;
  const fillsHole = op <= c.op; // a hole (faulty or reconciled away): the current primary's copy is canonical
  if (!appends && !fillsHole) {
    commitWalk(c);
    return c.drop(6, from, 'gap');
  }
  maybeCheckpoint(c);
  if (!journalHasRoom(c, op)) return c.drop(6, from, 'journal_full');
  const candidate = entryFromFrame(frame, !c.plane.journalDurable, true);
  const problem = c.sm.verify(recordOf(candidate));
  if (problem !== null) return c.drop(6, from, `prepare_rejected_${problem}`);
  journalAppend(c, candidate, frame, 'live');
  if (appends) {
    c.op = op;
    c.lastPrepareChecksum = candidate.checksum;
    // Repair may already hold ops above this one (it filled in past a hole that this live
    // prepare now closes): the sequencer advances over the contiguous run, as repair does.
    while (c.journal.has(c.op + 1)) c.op += 1;
    if (c.op !== op) c.lastPrepareChecksum = (c.journal.get(c.op) as JournalEntry).checksum;
  }
  if (h.timestamp > c.lastTimestamp) c.lastTimestamp = h.timestamp;
  forwardAlongChain(c, candidate);
  sendPrepareOk(c, candidate);
  commitWalk(c);
  return null;
}

/** Re-sends PrepareOks for journaled ops in (from, to] (StartView adoption, §5.7 step 2). */
export function ackJournaled(c: Core, from: Op, to: Op): void {
  for (let op = from + 1; op <= to; op++) {
    const entry = c.journal.get(op);
    if (entry !== undefined) sendPrepareOk(c, entry);
  }
}

// ---------------------------------------------------------------------------------------------
// Journal write completions.

export function onJournalWritten(c: Core, op: Op, checksum: bigint, ok: boolean): void {
  const entry = c.journal.get(op);
  if (entry === undefined || entry.checksum !== checksum) return; // truncated meanwhile
  if (ok) {
    entry.durable = true;
    selfAck(c, op, checksum);
    return;
  }
  rollbackFailedAppend(c, entry);
}

/**
 * §4.5: a failed append is rolled back while nothing above it was vouched for; otherwise the
 * journal can no longer be trusted and the core stops (fatal), as upstream does.
 */
function rollbackFailedAppend(c: Core, entry: JournalEntry): void {
  for (let op = entry.op + 1; op <= c.journal.head; op++) {
    const above = c.journal.get(op);
    if (above !== undefined && above.durable) {
      c.fatal(`journal_write_failed at op ${entry.op} below durable op ${op}`);
      return;
    }
  }
  const fromOp = entry.op;
  truncateJournal(c, fromOp, 'rollback');
  for (const op of [...c.canon.keys()]) if (op >= fromOp && c.isActingPrimary()) c.canon.delete(op);
  if (c.op >= fromOp) {
    c.op = fromOp - 1;
    c.lastPrepareChecksum = entry.parent;
  }
  for (const dropped of c.pipeline.dropFrom(fromOp)) {
    if (dropped.awaiter !== null) cancelAwaiter(c, dropped.awaiter, 'canceled', dropped.client);
  }
  if (c.pipeline.empty) c.timers.prepare.stop();
  advanceCommitMax(c);
}
