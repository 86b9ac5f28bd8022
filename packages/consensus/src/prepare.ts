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
import { Command, ErrorCode, EvictionReason, Operation, PrepareHeaderView, PrepareOkHeaderView } from '@shoal/protocol';
import { cancelAwaiter, evict, preCommitReply } from './answers.js';
import { recordOf } from './apply.js';
import { journalHasRoom, maybeCheckpoint } from './checkpoint.js';
import { admit, advanceCommitMax, commitWalk, selfAck } from './commit.js';
import type { Core } from './core.js';
import { Drop } from './drops.js';
import { noteAck } from './hand-back-state.js';
import { entryFromFrame, type JournalEntry } from './journal.js';
import { forwardAlongChain, journalAppend, sendAppliedAck, sendPrepareOk } from './journal-write.js';
import { Mark } from './marks.js';
import type { Awaiter, ClientRequest, QueuedRequest, RequestOutcome } from './pipeline.js';
import { startRepair } from './repair.js';
import { setCanon, truncateJournal } from './trust.js';
import type { Op, ReplicaIndex, View } from './types.js';

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
  if (req.client === 0n || req.operation === Operation.Reserved || req.operation === Operation.NonReplicated) {
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
  if (req.operation === Operation.Register) return onRegisterRequest(c, req);
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

// ---------------------------------------------------------------------------------------------
// Backup (§4.7).

const view = new PrepareHeaderView();

/** `owned`: the host hands the frame's buffer over (ingress.ts), so the journal keeps it as is. */
export function onPrepare(c: Core, frame: Uint8Array, owned = false): string | null {
  const h = view.bind(frame, 0);
  const from = h.replica;
  if (c.transferring()) return c.drop(Command.Prepare, from, Drop.Transferring);
  if (c.status !== 'normal') return c.drop(Command.Prepare, from, Drop.NotNormal);
  if (h.view > c.view) {
    if (h.view > c.observedNewerView) c.observedNewerView = h.view as View;
    return c.drop(Command.Prepare, from, Drop.PrepareNewerView);
  }
  if (h.view < c.view) return c.drop(Command.Prepare, from, Drop.PrepareOlderView);
  if (c.isPrimaryByIndex()) return c.drop(Command.Prepare, from, Drop.PrepareAtPrimary);
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
      c.mark(Mark.AppliedAckWithoutCopy, `op ${op}`);
      sendAppliedAck(c, frame);
      return null;
    }
    return c.drop(Command.Prepare, from, Drop.AlreadyApplied);
  }
  const existing = c.journal.get(op);
  if (existing !== undefined) {
    if (existing.checksum !== h.checksum) {
      commitWalk(c); // the new anchor exposes the stale entry; the walk discards it
      return c.drop(Command.Prepare, from, Drop.JournalConflict);
    }
    forwardAlongChain(c, existing);
    sendPrepareOk(c, existing);
    commitWalk(c);
    return null;
  }
  const previous = c.journal.get(op - 1);
  if (previous !== undefined && previous.view === h.view && previous.checksum !== h.parent) {
    // §13.4: upstream panics here; we drop the prepare (no ack) and let the trust walk repair.
    c.mark(Mark.HashChainBreak, `op ${op}`);
    commitWalk(c);
    return c.drop(Command.Prepare, from, Drop.HashChainBreak);
  }
  const appends = op === c.op + 1;
  const fillsHole = op <= c.op; // a hole (faulty or reconciled away): the current primary's copy is canonical
  if (!appends && !fillsHole) {
    commitWalk(c);
    // The ops between are committed without us (the chain's successor died and the quorum
    // formed elsewhere; the primary retransmits only ops that lack a quorum): fetch them now
    // rather than at the next heartbeat, or every prepare until then is dropped here.
    if (c.commitMin < c.commitMax) startRepair(c, from as ReplicaIndex);
    return c.drop(Command.Prepare, from, Drop.Gap);
  }
  maybeCheckpoint(c);
  if (!journalHasRoom(c, op)) return c.drop(Command.Prepare, from, Drop.JournalFull);
  const candidate = entryFromFrame(frame, false, true, owned);
  // A hole's fill sits below the journal head: the state machine's next position (the partition's
  // dirty offset) is past it, so it is admitted and journaled as a repaired prepare is, with the
  // current primary's stamp (seed 1004762 of 3: a backup missing ops 37-38 below its head dropped
  // every retransmission of them as a base-offset mismatch, and with the third replica down for
  // good the partition never committed again).
  const problem = c.sm.verify(recordOf(candidate), appends ? 'append' : 'fill');
  if (problem !== null) return c.dropInvalid(Command.Prepare, from, `${Drop.PrepareRejected}_${problem}`);
  journalAppend(c, candidate, appends ? 'live' : 'repair');
  if (appends) {
    c.op = op;
    c.lastPrepareChecksum = candidate.checksum;
    // Repair may already hold ops above this one (it filled in past a hole that this live
    // prepare now closes): the sequencer advances over the contiguous run, as repair does.
    while (c.journal.has(c.op + 1)) c.op += 1;
    if (c.op !== op) {
      c.mark(Mark.SequencerOverRepaired, `op ${op} -> ${c.op}`);
      c.lastPrepareChecksum = (c.journal.get(c.op) as JournalEntry).checksum;
    }
  }
  if (h.timestamp > c.lastTimestamp) c.lastTimestamp = h.timestamp;
  forwardAlongChain(c, candidate);
  sendPrepareOk(c, candidate);
  commitWalk(c);
  return null;
}

// ---------------------------------------------------------------------------------------------
// Primary: acks (§4.9).

const ackView = new PrepareOkHeaderView();

export function onPrepareOk(c: Core, frame: Uint8Array): string | null {
  const h = ackView.bind(frame, 0);
  if (!c.isActingPrimary()) return c.drop(Command.PrepareOk, h.replica, Drop.NotActingPrimary);
  if (h.view !== c.view) return c.drop(Command.PrepareOk, h.replica, h.view < c.view ? Drop.AckOlderView : Drop.AckNewerView);
  if (c.transferring()) return c.drop(Command.PrepareOk, h.replica, Drop.Transferring);
  // Progress of each backup (hand-back.ts), late acks of committed ops included: the quorum's
  // slowest member acks after the commit, and that is the one whose progress matters.
  if (c.journal.get(h.opNumber)?.checksum === h.prepareChecksum) noteAck(c.acks, h.replica, c.view, h.opNumber, c.steps);
  const entry = c.pipeline.get(h.opNumber);
  if (entry === undefined) return c.drop(Command.PrepareOk, h.replica, Drop.AckNotInPipeline);
  if (entry.checksum !== h.prepareChecksum) return c.drop(Command.PrepareOk, h.replica, Drop.AckChecksumMismatch);
  if (!c.pipeline.ack(entry, h.replica, c.quorums.replication)) return null; // duplicate
  if (entry.quorum) advanceCommitMax(c);
  return null;
}

// ---------------------------------------------------------------------------------------------
// Journal write completions.

export function onJournalWritten(c: Core, op: Op, checksum: bigint, ok: boolean): void {
  const entry = c.journal.get(op);
  if (entry === undefined || entry.checksum !== checksum) return; // truncated meanwhile
  if (ok) {
    entry.durable = true;
    c.appendRetries = 0;
    selfAck(c, op, checksum);
    return;
  }
  if (op <= c.commitMin) retryAppliedAppend(c, entry);
  else rollbackFailedAppend(c, entry);
}

/** Consecutive rewrites of failed appends of applied ops before the core gives up (fatal). */
const APPLIED_APPEND_RETRIES_MAX = 8;

/**
 * A backup applies an op once the primary's commit covers it, and a primary once a quorum of
 * backups acked it: either may do so before its own append completed. When that append then
 * fails, the op is committed and in the state machine; rolling it back would put the head below
 * commit_min (and a primary would then propose another op at a committed number: simulator seed
 * 47 of 5). Nothing vouched for it yet (its PrepareOk and forwards wait for durability in the
 * outbox), so it is written again; the WAL accepts an op out of file order.
 */
function retryAppliedAppend(c: Core, entry: JournalEntry): void {
  c.appendRetries += 1;
  if (c.appendRetries > APPLIED_APPEND_RETRIES_MAX) {
    c.mark(Mark.JournalWriteFatal, `op ${entry.op}`);
    c.fatal(`journal_write_failed at applied op ${entry.op} after ${APPLIED_APPEND_RETRIES_MAX} retries`);
    return;
  }
  c.mark(Mark.JournalWriteRetried, `op ${entry.op}`);
  c.effects.push({ kind: 'journal_append', op: entry.op, checksum: entry.checksum, frame: entry.frame });
}

/**
 * §4.5: a failed append is rolled back while nothing above it was vouched for; otherwise the
 * journal can no longer be trusted and the core stops (fatal), as upstream does.
 */
function rollbackFailedAppend(c: Core, entry: JournalEntry): void {
  for (let op = entry.op + 1; op <= c.journal.head; op++) {
    const above = c.journal.get(op);
    if (above !== undefined && above.durable) {
      c.mark(Mark.JournalWriteFatal, `op ${entry.op}`);
      c.fatal(`journal_write_failed at op ${entry.op} below durable op ${op}`);
      return;
    }
  }
  const fromOp = entry.op;
  c.mark(Mark.JournalWriteRollback, `op ${fromOp}`);
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
