/**
 * Journal repair (§6.1, §6.2): a replica missing committed prepares pulls them from a peer, chunk
 * by chunk (at most `repair_chunk_max` per round: per-peer send queues drop overruns), and a
 * stalled session re-asks every `repair_retry` ticks.
 *
 *   requester                          server
 *   RequestPrepares{nonce, from, to} ─▶ [RangeEvicted{op = first servable}]
 *                                      RepairPrepare × k (journaled frames, command byte 19)
 *                                   ◀─ RepairDone{op = last served}
 *
 * Ingested prepares are journaled but trusted only once chained to an anchor (trust.ts); the
 * walk, not the server's claim, decides completion. A RangeEvicted means repair cannot work:
 * state transfer (metadata as upstream; partition: always, see docs/internals-repair.md). The
 * answers to a round (RepairDone, RangeEvicted) are handled in repair-done.ts.
 */
import { Command, PrepareHeaderView, repairPrepareFrom, RequestPreparesHeaderView } from '@shoal/protocol';
import { journalHasRoom } from './checkpoint.js';
import type { Core } from './core.js';
import { Drop } from './drops.js';
import { repairResponseFrame, requestPreparesFrame } from './frames.js';
import { entryFromFrame } from './journal.js';
import { journalAppend } from './journal-write.js';
import { Mark } from './marks.js';
import { newNonce, type RepairSession } from './repair-state.js';
import { sendDirect } from './send.js';
import type { Op, ReplicaIndex } from './types.js';

/** The first op above commit_min the journal lacks (bounded by `to`), or null. */
export function firstMissing(c: Core, to: Op): Op | null {
  for (let op = c.commitMin + 1; op <= to; op++) if (!c.journal.has(op)) return op;
  return null;
}

export function request(c: Core, s: RepairSession, from: Op): void {
  const to = Math.min(s.toOp, from + c.config.repairChunkMax - 1);
  if (from > to) return;
  sendDirect(c, s.peer, requestPreparesFrame(c, s.nonce, from, to));
}

/** §6.1: a backup behind commit_max asks `peer` for the missing committed ops. */
export function startRepair(c: Core, peer: ReplicaIndex): void {
  if (c.status !== 'normal' || c.transferring() || c.repair !== null) return;
  if (c.commitMin >= c.commitMax || peer === c.self) return;
  const from = firstMissing(c, c.commitMax);
  if (from === null) return; // held but not yet verifiable: the next anchor (heartbeat) settles it
  const session: RepairSession = { nonce: newNonce(c.prng), peer, toOp: c.commitMax, idleTicks: 0, forElect: false };
  c.repair = session;
  request(c, session, from);
}

/** §5.6 step 3: the primary-elect pulls [from, opHead] from a DVC sender. */
export function startElectRepair(c: Core, peer: ReplicaIndex, from: Op, opHead: Op): void {
  const session: RepairSession = { nonce: newNonce(c.prng), peer, toOp: opHead, idleTicks: 0, forElect: true };
  c.repair = session;
  // `from` is the first op the journal cannot vouch for; when it is held (unverified: no anchor
  // chains down to it yet), asking for it again brings copies already held, one chunk from there
  // every round, and never the holes higher up that the chain from the merged head needs (seed
  // 1038836 of 3: ops 209..399 held, 400..426 missing, every round asked for 209..336). The
  // holes come first; a held op the chain contradicts is discarded and then missing.
  request(c, session, firstMissing(c, opHead) ?? from);
}

/** Stall retry (§6.1): every `repair_retry` idle ticks, re-ask the remaining window. */
export function tickRepair(c: Core): void {
  const s = c.repair;
  if (s === null) return;
  const electing = s.forElect && c.vc.parked !== null && c.status === 'view_change';
  if (!(c.status === 'normal' && !s.forElect) && !electing) {
    c.repair = null;
    return;
  }
  s.idleTicks += 1;
  if (s.idleTicks < c.config.ticks.repairRetry) return;
  s.idleTicks = 0;
  if (electing) {
    // Re-pick a source next tick (rotation) rather than insisting on a silent peer.
    c.mark(Mark.ElectSourceRotated, `silent ${s.peer}`);
    c.vc.repairAttempts += 1;
    c.repair = null;
    return;
  }
  if (s.peer !== c.primaryIndex()) {
    // A backup's repair from another replica (after a damaged source's transfer, state-transfer.ts
    // `abandonToRepair`) is not insisted on: that replica may be down for good. The primary's next
    // Commit restarts the repair from the primary, and its way back to a transfer the next source.
    c.event('repair', `source ${s.peer} stalled; dropped`);
    c.repair = null;
    return;
  }
  if (s.toOp < c.commitMax) s.toOp = c.commitMax;
  const from = firstMissing(c, s.toOp);
  if (from === null) {
    c.repair = null;
    return;
  }
  c.mark(Mark.RepairStallRetry, `from ${from}`);
  request(c, s, from);
}

// ---------------------------------------------------------------------------------------------
// Serving.

const requestView = new RequestPreparesHeaderView();

export function onRequestPrepares(c: Core, frame: Uint8Array): string | null {
  const h = requestView.bind(frame, 0);
  const from = h.replica as ReplicaIndex;
  if (c.transferring()) return c.drop(Command.RequestPrepares, from, Drop.Transferring);
  if (c.status !== 'normal' && c.status !== 'view_change') return c.drop(Command.RequestPrepares, from, Drop.NotServing);
  const nonce = h.nonce;
  const requestedFrom = h.fromOpNumber;
  const to = Math.min(h.toOpNumber, Math.max(c.commitMax, c.op));
  let first = Math.max(requestedFrom, c.journal.watermark + 1);
  while (first <= to && !c.journal.has(first)) first++;
  if (first > to) {
    sendDirect(c, from, repairResponseFrame(c, Command.RangeEvicted, nonce, first));
    sendDirect(c, from, repairResponseFrame(c, Command.RepairDone, nonce, requestedFrom - 1));
    return null;
  }
  if (first > requestedFrom) sendDirect(c, from, repairResponseFrame(c, Command.RangeEvicted, nonce, first));
  const last = Math.min(to, first + c.config.repairChunkMax - 1);
  let served = first - 1;
  for (let op = first; op <= last; op++) {
    const entry = c.journal.get(op);
    if (entry === undefined) break;
    sendDirect(c, from, repairPrepareFrom(entry.frame));
    served = op;
  }
  sendDirect(c, from, repairResponseFrame(c, Command.RepairDone, nonce, served));
  return null;
}

// ---------------------------------------------------------------------------------------------
// Ingesting.

const prepareView = new PrepareHeaderView();

/** In scope for the live session: a backup takes ops above commit_min; the primary-elect its window. */
function inScope(c: Core, s: RepairSession, op: Op): boolean {
  if (op <= c.commitMin || op > s.toOp) return false;
  if (!s.forElect) return true;
  const parked = c.vc.parked;
  return parked !== null && op <= parked.opHead;
}

export function onRepairPrepare(c: Core, frame: Uint8Array): string | null {
  const h = prepareView.bind(frame, 0);
  const from = h.replica;
  const s = c.repair;
  if (s === null) return c.drop(Command.RepairPrepare, from, Drop.NoRepairSession);
  const op = h.opNumber;
  if (!inScope(c, s, op)) return c.drop(Command.RepairPrepare, from, Drop.RepairOutOfScope);
  const canon = c.canon.get(op);
  if (canon !== undefined && canon.checksum !== h.checksum) return c.drop(Command.RepairPrepare, from, Drop.RepairNotCanonical);
  if (c.journal.has(op)) return c.drop(Command.RepairPrepare, from, Drop.RepairAlreadyHeld);
  if (!journalHasRoom(c, op)) return c.drop(Command.RepairPrepare, from, Drop.JournalFull);
  const entry = entryFromFrame(frame, false, canon !== undefined);
  journalAppend(c, entry, 'repair');
  // The sequencer advances over the contiguous run of journaled ops, never past a hole.
  if (op === c.op + 1) {
    while (c.journal.has(c.op + 1)) c.op += 1;
    c.lastPrepareChecksum = c.journal.get(c.op)?.checksum ?? c.lastPrepareChecksum;
  }
  s.idleTicks = 0;
  return null;
}
