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
  const unvouchedFrom = unvouchedFromOp(c, entries, record);
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
 * Where boot drops the journal's tail (0: nothing to drop): the lowest op holding a prepare this
 * replica built itself as the primary of a view above the durable log view. An entry's `view` is
 * the stamp of the copy (restamped on every retransmit and chain forward), not the view that
 * prepared the op; only the builder (header `replica`) and a stamp whose primary is the builder
 * say "built in that view": this replica journals its own prepare with the view it proposed it
 * in and never restamps its journal; a copy stamped with a view it leads can reach it back only
 * by repair from a replica that got it from this one's Prepares in that view (gated: see below).
 *
 * A primary proposes in the entry point that starts its view and asks for the superblock write at
 * the end of it (and later ones while that write is in flight); a crash before it lands leaves
 * such an entry beside a superblock that still names an older log view. Nothing vouched for it
 * (every gated send waits for the view to be durable: send.ts; a repair reply, ungated, may have
 * handed a copy to a requester, which takes it untrusted and never as a vote). View v's log ended
 * below op k when its primary proposed k, so every older version of an op at k or above is
 * excluded from v's log and was never committed; this replica acked no version of any of them in
 * a view at or above v (its log view was never durable there). So every op from k up may be
 * nacked: the entries are dropped, not marked faulty (a lost tail's markLost and the host's
 * recorded range may still mark some of them faulty: more caution, never less). Kept, they
 * joined the older log view's log in this replica's DoViewChange: a view-5 prepare at op 71 under
 * log view 4 broke the hash chain of the view-4 log the others held and the merge deadlocked for
 * good (seed 1057611 of 5). A backup that journaled such a view's new ops before its own
 * superblock landed keeps them; the merge settles the conflict they cause by their stamp
 * (merge.ts `stampedAbove`).
 *
 * Copies stamped by others (a restamped Prepare of a newer view, a repair) are kept: they may be
 * committed ops this replica acked before (helper-48's schedule: a refilled lost op was dropped,
 * then nacked and truncated). An op at or below the restored commit point (the snapshot, the
 * partition's flushed frontier) cannot be such an entry (committing it needs a backup's ack); if
 * one is, nothing is dropped.
 */
function unvouchedFromOp(c: Core, entries: readonly JournalEntry[], record: RestoreRecord): Op {
  const superblock = record.superblock;
  if (superblock === null || c.n === 1) return 0;
  let lowest = 0;
  for (const e of entries) {
    const ownProposal = e.replica === c.self && c.primaryIndex(asView(e.view)) === c.self;
    if (ownProposal && e.view > superblock.logView && (lowest === 0 || e.op < lowest)) lowest = e.op;
  }
  return lowest > Math.max(record.checkpointOp, record.commit) ? lowest : 0;
}

/**
 * The host forgets the dropped entries too (they would come back at the next boot, when a later
 * durable log view could make them look like its own). The truncation replaces what the host
 * records as faulty from `from` up with [from, the highest op the core now holds faulty there]
 * (markLost ran first, so the record's faulty ops and lost tail stay covered).
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
