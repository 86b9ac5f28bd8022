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
import { faultyTopFrom } from './trust.js';
import { asView, SUFFIX_MAX, type Op } from './types.js';
import { startProbing } from './view-change.js';

export interface RestoreRecord {
  /** Whether any prior state exists (WAL entries, a snapshot or a superblock record). */
  readonly priorState: boolean;
  /** The superblock's durable VSR state, or null when none was ever written. */
  readonly superblock: DurableVsrState | null;
  /** The op the state machine was restored to (snapshot op; 0 for a fresh state machine). */
  readonly checkpointOp: Op;
  readonly checkpointChecksum: bigint;
  /**
   * The journal's prepare frames (command 6, verified by storage), in op order. Metadata: the
   * WAL above the snapshot. Partition: the journal file above the durable commit frontier.
   */
  readonly journal: readonly Uint8Array[];
  /**
   * Ops this replica may have acknowledged but does not hold (storage could not verify them, or a
   * truncation dropped them): repaired, never trusted, never nacked.
   */
  readonly faultyOps: readonly Op[];
  /**
   * Storage lost the journal's tail (a power loss beyond the last fdatasync, a damaged record): every
   * op above what it holds through this one may have been acknowledged (the journal's durable
   * reservation, the persisted floor). They are faulty: never nacked. 0 = nothing lost.
   */
  readonly lostThrough: Op;
  /**
   * The journal is gone and nothing bounds what this replica acknowledged (a `--fresh` rejoin, a
   * partition with prior state but no journal): it abstains, then votes blind (replica.ts).
   */
  readonly journalLost: boolean;
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
  lostThrough: 0,
  journalLost: false,
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
  const entries = record.journal.map((frame) => entryFromFrame(frame, true, false));
  const unvouchedFrom = unvouchedFromOp(entries, record.superblock);
  for (const entry of entries) {
    if (entry.op <= c.journal.watermark || c.journal.has(entry.op)) continue;
    if (unvouchedFrom > 0 && entry.op >= unvouchedFrom) continue;
    c.journal.put(entry);
    if (entry.op > c.commitMin) c.sm.journaled(recordOf(entry), 'restore');
    if (entry.timestamp > c.lastTimestamp) c.lastTimestamp = entry.timestamp;
  }
  const head = c.journal.get(c.journal.head);
  if (record.superblock !== null) {
    c.view = asView(record.superblock.view);
    c.logView = asView(record.superblock.logView);
  } else if (head !== undefined) {
    c.view = asView(head.view);
    c.logView = asView(0);
  }
  if (c.plane.checkpoints) replay(c);
  else {
    c.commitMin = Math.max(c.commitMin, record.commit);
    c.commitMax = c.commitMin;
    c.journal.compactThrough(c.commitMin);
    // A solo replica committed every op it journaled (it is the whole quorum): apply them.
    if (c.n === 1) replay(c);
  }
  c.op = Math.max(c.journal.head, c.commitMin);
  restoreLogHead(c, record.superblock);
  markLost(c, record);
  if (unvouchedFrom > 0) dropUnvouched(c, unvouchedFrom, record.superblock as DurableVsrState);
  c.lastPrepareChecksum = c.journal.get(c.op)?.checksum ?? 0n;
  if (c.commitMin < c.op) {
    c.recoveryBarrier = c.op;
    c.mark(Mark.RecoveryBarrierArmed, `${c.commitMin} < ${c.op}`);
  }
  bootMode(c, record);
}

/**
 * The lowest op journaled in a view above the durable log view, or 0. The core journals a new
 * view's prepares (as its primary, or a StartView's suffix as a backup) in the entry point that
 * enters the view, and asks for the superblock write at its end; a crash between the two leaves
 * such entries beside a superblock that still names the older log view. Nothing vouched for them
 * (every send waits for the view to be durable: send.ts), and an entry prepared in view v at op k
 * means view v's log had already left out whatever older views held at k and above (an op
 * prepared in view v is new above the log the view started with), so those ops were never
 * committed. Kept, they joined the older log view's log in this replica's DoViewChange: a view-5
 * prepare at op 71 under log view 4 broke the hash chain of the view-4 log held by the others and
 * the merge deadlocked for good (seed 1057611 of 5). Everything from that op up is dropped.
 */
function unvouchedFromOp(entries: readonly JournalEntry[], superblock: DurableVsrState | null): Op {
  if (superblock === null) return 0;
  let from = 0;
  for (const e of entries) if (e.view > superblock.logView && (from === 0 || e.op < from)) from = e.op;
  return from;
}

/**
 * The host forgets the dropped entries too (they would come back at the next boot, when a later
 * durable log view could make them look like its own). Faulty ops recorded at or above `from`
 * stay recorded (the truncation replaces that range with the faulty ops the core now holds).
 */
function dropUnvouched(c: Core, from: Op, superblock: DurableVsrState): void {
  c.mark(Mark.RestoreUnvouched, `from op ${from} (durable log view ${superblock.logView})`);
  c.effects.push({ kind: 'journal_truncate', fromOp: from, faultyThrough: faultyTopFrom(c, from) });
}

/**
 * The log of the restored log view ends at least at the head it had when installed (persisted
 * with it), even where the journal stops short: ops of that log this replica never received.
 * Its DoViewChange then speaks of them (blanks; nacks unless faulty: it never acked them), so
 * the merge never takes the journal's head for the head of this log view.
 */
function restoreLogHead(c: Core, superblock: DurableVsrState | null): void {
  if (superblock === null || superblock.logView !== c.logView) return;
  c.sb.logHead = superblock.logHead;
  if (superblock.logHead <= c.op) return;
  c.mark(Mark.RestoreLogHead, `${c.op} -> ${superblock.logHead}`);
  c.op = superblock.logHead;
}

/**
 * Ops this replica may have acknowledged and no longer holds become faulty (never nacked): the
 * ones storage names, and after a lost tail every op above the held log through `lostThrough`,
 * capped one suffix window above it (a DoViewChange cannot speak of ops further up; the replica
 * installs a new log view before its commit point moves on). The DoViewChange then reports its
 * log as ending at the top faulty op (dvc-suffix.ts), so nothing it acked is nacked by omission.
 */
function markLost(c: Core, record: RestoreRecord): void {
  let marked = 0;
  for (const op of record.faultyOps) {
    if (op > c.commitMin && !c.journal.has(op) && !c.journal.faulty.has(op)) {
      c.journal.faulty.add(op);
      marked++;
    }
  }
  const top = Math.min(record.lostThrough, c.op + SUFFIX_MAX);
  for (let op = c.commitMin + 1; op <= top; op++) {
    if (c.journal.has(op) || c.journal.faulty.has(op)) continue;
    c.journal.faulty.add(op);
    marked++;
  }
  if (marked > 0) c.mark(Mark.RestoreFaulty, `${marked} ops (lost through ${record.lostThrough})`);
}

function bootMode(c: Core, record: RecordLike): void {
  if (c.n > 1 && record.priorState) {
    c.ceded = true;
    c.status = 'normal';
    if (c.plane.checkpoints) setStage(c, 'awaiting_target');
    // Nothing bounds what a replica without its journal acknowledged: it must not vote on it.
    if (record.journalLost) {
      c.journalIncomplete = true;
      c.mark(Mark.JournalLost);
    }
    startProbing(c);
    return;
  }
  c.status = 'normal';
  c.logView = c.view; // plain init runs the restored view's log (a solo replica, or a new group)
  if (c.isPrimaryByIndex()) c.timers.commitMessage.startPhased(c.jitter);
  else c.timers.normalHeartbeat.start();
}

type RecordLike = Pick<RestoreRecord, 'priorState' | 'journalLost'>;
