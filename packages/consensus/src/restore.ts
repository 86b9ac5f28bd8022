/**
 * Boot (§5.10, §9.4): the host hands the core what storage recovered; the core rebuilds its state
 * and replays the committed, hash-chained journal above the checkpoint through the state machine
 * (the state machine must be at `checkpointOp` when the core is constructed).
 *
 * Replay is stricter than upstream: op k is applied only when it chains to op k−1 and a journaled
 * entry at or above k whose hash chain reaches k carries a `commit` field >= k (so a prepare left
 * over from an older view below the commit point is never replayed). A solo replica commits its
 * whole connected journal.
 */
import { applyOne, recordOf } from './apply.js';
import type { ClientTableCheckpointEntry } from './client-table.js';
import type { Core } from './core.js';
import type { DurableVsrState } from './effects.js';
import { entryFromFrame, type JournalEntry } from './journal.js';
import { Mark } from './marks.js';
import { setStage } from './state-transfer.js';
import { asView, type Op } from './types.js';
import { startProbing } from './view-change.js';

export interface RestoreRecord {
  /** Whether any prior state exists (WAL entries, a snapshot or a superblock record). */
  readonly priorState: boolean;
  /** The superblock's durable VSR state, or null when none was ever written. */
  readonly superblock: DurableVsrState | null;
  /** The op the state machine was restored to (snapshot op; 0 for a fresh state machine). */
  readonly checkpointOp: Op;
  readonly checkpointChecksum: bigint;
  /** Metadata: the WAL's prepare frames (command 6, verified by storage), in op order. */
  readonly journal: readonly Uint8Array[];
  /** Ops storage could not verify: repaired, never trusted, never nacked. */
  readonly faultyOps: readonly Op[];
  /** Metadata: the client table's checkpoint form from snapshot.bin, or null. */
  readonly clientTable: readonly ClientTableCheckpointEntry[] | null;
  /** Partition: the op the durable state reflects (flushed segments). Metadata: ignored. */
  readonly commit: Op;
}

/** A replica with no prior state (a new cluster, a new partition). */
export const FRESH_RESTORE: RestoreRecord = Object.freeze({
  priorState: false,
  superblock: null,
  checkpointOp: 0,
  checkpointChecksum: 0n,
  journal: [],
  faultyOps: [],
  clientTable: null,
  commit: 0,
});

/** Ops k in (from, head] that a committed successor on an intact chain vouches for. */
function confirmedOps(c: Core): Set<Op> {
  const confirmed = new Set<Op>();
  let maxCommit = 0;
  let above: JournalEntry | undefined;
  for (let op = c.journal.head; op > c.journal.watermark; op--) {
    const entry = c.journal.get(op);
    if (entry === undefined) {
      above = undefined;
      maxCommit = 0;
      continue;
    }
    if (above === undefined || above.parent !== entry.checksum) maxCommit = 0; // a new chain segment
    maxCommit = Math.max(maxCommit, entry.commit);
    if (c.n === 1 || maxCommit >= op) confirmed.add(op);
    above = entry;
  }
  return confirmed;
}

function replay(c: Core): void {
  const confirmed = confirmedOps(c);
  let previous = c.journal.get(c.commitMin);
  for (let op = c.commitMin + 1; confirmed.has(op); op++) {
    const entry = c.journal.get(op) as JournalEntry;
    if (previous !== undefined && entry.parent !== previous.checksum) break;
    entry.trusted = true;
    c.commitMax = op;
    applyOne(c, entry);
    previous = entry;
  }
}

export function restore(c: Core, record: RestoreRecord): void {
  if (record.clientTable !== null && c.clientTable !== null) c.clientTable.restoreCheckpoint(record.clientTable);
  c.sb.checkpointOp = record.checkpointOp;
  c.sb.checkpointChecksum = record.checkpointChecksum;
  c.sb.durable = record.superblock;
  // The entry at the checkpoint op stays servable (pitfall 8).
  c.journal.compactThrough(Math.max(0, record.checkpointOp - 1));
  c.commitMin = record.checkpointOp;
  c.commitMax = record.checkpointOp;
  for (const frame of record.journal) {
    const entry = entryFromFrame(frame, true, false);
    if (entry.op <= c.journal.watermark || c.journal.has(entry.op)) continue;
    c.journal.put(entry);
    if (entry.op > c.commitMin) c.sm.journaled(recordOf(entry), 'restore');
    if (entry.timestamp > c.lastTimestamp) c.lastTimestamp = entry.timestamp;
  }
  for (const op of record.faultyOps) if (op > c.commitMin && !c.journal.has(op)) c.journal.faulty.add(op);
  const head = c.journal.get(c.journal.head);
  if (record.superblock !== null) {
    c.view = asView(record.superblock.view);
    c.logView = asView(record.superblock.logView);
  } else if (head !== undefined) {
    c.view = asView(head.view);
    c.logView = asView(0);
  }
  if (c.plane.journalDurable) replay(c);
  else {
    c.commitMin = Math.max(c.commitMin, record.commit);
    c.commitMax = c.commitMin;
    c.journal.compactThrough(c.commitMin);
  }
  c.op = Math.max(c.journal.head, c.commitMin);
  c.lastPrepareChecksum = c.journal.get(c.op)?.checksum ?? 0n;
  if (c.commitMin < c.op) {
    c.recoveryBarrier = c.op;
    c.mark(Mark.RecoveryBarrierArmed, `${c.commitMin} < ${c.op}`);
  }
  bootMode(c, record);
}

function bootMode(c: Core, record: RecordLike): void {
  if (c.n > 1 && record.priorState) {
    c.ceded = true;
    c.status = 'normal';
    if (c.plane.journalDurable) setStage(c, 'awaiting_target');
    else c.journalIncomplete = true; // the in-memory partition journal is gone: never vote on it
    startProbing(c);
    return;
  }
  c.status = 'normal';
  c.logView = c.view; // plain init runs the restored view's log (a solo replica, or a new group)
  if (c.isPrimaryByIndex()) c.timers.commitMessage.start();
  else c.timers.normalHeartbeat.start();
}

type RecordLike = Pick<RestoreRecord, 'priorState'>;
