/**
 * Finishing a view change.
 *
 * New primary (§5.6), every tick while a merged log is parked:
 *   1. reconcile: one suffix truncation removing local entries above the floor that disagree
 *      with the merged headers, and everything above the new head;
 *   2. coverage: the lowest op in (commit_min, op_head] whose entry is missing or not trusted
 *      (we also cover committed ops below the merged window: upstream only checks the window);
 *   3. missing → pull it from a DVC sender that can serve it (both planes; upstream's partition
 *      primary-elect only waits);
 *   4. nothing missing → start the view: rebuild the pipeline from the journal, persist the
 *      superblock, broadcast StartView, apply what is committed.
 *
 * Backup (§5.7): adopt a StartView, reconcile, ack what it holds, repair or transfer.
 */
import { Command, PrepareHeaderView, StartViewHeaderView, packSuffix, type SuffixEntryInput } from '@shoal/protocol';
import { dropRequests } from './answers.js';
import { advanceCommitMax, commitWalk } from './commit.js';
import type { Core } from './core.js';
import { Drop } from './drops.js';
import { SuffixChain } from './dvc-suffix.js';
import { reforwardSessions } from './forwarding.js';
import { startViewFrame } from './frames.js';
import { ackJournaled } from './journal-write.js';
import { Mark } from './marks.js';
import { startElectRepair, startRepair } from './repair.js';
import { broadcastGated, sendGated } from './send.js';
import { startTransfer } from './state-transfer.js';
import { discardBogus, forgetFaultyAbove, headerAt, resetTrust, truncateJournal, verify } from './trust.js';
import { asView, SUFFIX_MAX, type Op, type ReplicaIndex, type View } from './types.js';
import { newViewChangeState, suffixEntries, type DvcEntry } from './view-change-state.js';

/** What `reconcile` reads of a canonical header. */
export type CanonicalHeader = Pick<DvcEntry, 'op' | 'checksum' | 'parent'>;

/**
 * §5.6 step 1 / §5.7 step 1: a single suffix truncation at X = the lowest op above commit_min
 * whose entry disagrees with the canonical header there, or the first op above the new head, or
 * the commit point when no header names its op and the entry there is unverified (deviation 29).
 * Entries that agreed but sit above X are marked faulty (we may have acked them).
 *
 * The scan starts at commit_min, not at the new log's commit point: an entry of an older log view
 * at or below that commit point is not this log's op either, and once the new log view is durable
 * a restart would hold it as an op of that log view (its canonical header is not remembered
 * across the restart) and a DoViewChange would claim it there, against the real op's copies:
 * the merge then waits for a repair forever (seed 1008032 of 3: an adopted StartView at commit 8
 * left a truncated view's ops 7 and 8 in the journal). The lowest header's parent names the
 * canonical op below it, too.
 */
export function reconcile(c: Core, opHead: Op, commit: Op, canonicalHeaders: readonly CanonicalHeader[]): void {
  const floor = c.commitMin;
  const top = Math.max(opHead, commit, floor);
  const headers = canonicalChecksums(canonicalHeaders);
  let x = Number.POSITIVE_INFINITY;
  for (let op = floor + 1; op <= Math.min(c.journal.head, top); op++) {
    const entry = c.journal.get(op);
    const canonical = headers.get(op);
    if (entry === undefined || canonical === undefined) continue;
    if (canonical !== 0n && entry.checksum !== 0n && canonical !== entry.checksum) {
      x = op;
      break;
    }
  }
  if (c.journal.head >= top + 1) x = Math.min(x, top + 1);
  // No header names the op at the commit point (the new primary had no copy of it:
  // `commit_point_without_copy`): an entry held there that no anchor verified may be an older
  // view's orphan, and in this log view it would read as the committed op, shown in a
  // DoViewChange as this log view's header there (and applied). It goes, faulty (it may have been
  // acked); the committed op comes back by repair or state transfer
  // (commit-point-orphan.test.ts: view 0's orphan replaced committed op 7).
  const atCommit = commit > floor ? c.journal.get(commit) : undefined;
  if (atCommit !== undefined && !atCommit.trusted && !headers.has(commit) && commit <= c.journal.head) x = Math.min(x, commit);
  if (!Number.isFinite(x)) return;
  const agreeing: Op[] = [];
  for (let op = x; op <= Math.min(c.journal.head, top); op++) {
    const entry = c.journal.get(op);
    if (entry !== undefined && (headers.get(op) === entry.checksum || (op === commit && !headers.has(op)))) agreeing.push(op);
  }
  if (truncateJournal(c, x, 'reconcile', agreeing).length > 0) c.mark(Mark.ReconcileTruncation, `from ${x}`);
  if (agreeing.length > 0) c.mark(Mark.ReconcileFaulty, `${agreeing.length} ops from ${agreeing[0]}`);
}

/** Op → canonical checksum: each header's own, and the parent it names at the op below. */
function canonicalChecksums(headers: readonly CanonicalHeader[]): Map<Op, bigint> {
  const map = new Map<Op, bigint>();
  for (const e of headers) map.set(e.op, e.checksum);
  for (const e of headers) if (e.op > 1 && !map.has(e.op - 1)) map.set(e.op - 1, e.parent);
  return map;
}

const svHeaderView = new PrepareHeaderView();

/** The StartView body: headers from op down to max(commit, 1), blanks where we hold nothing. */
export function startViewBody(c: Core, op: Op, commit: Op): Uint8Array {
  const entries: SuffixEntryInput[] = [];
  const low = Math.max(Math.max(commit, 1), op - (SUFFIX_MAX - 1));
  const chain = new SuffixChain();
  let blanked = 0;
  for (let entryOp = op; entryOp >= low && op > 0; entryOp--) {
    const header = headerAt(c, entryOp);
    if (header !== null) {
      const h = svHeaderView.bind(header, 0);
      if (chain.fits(entryOp, h.checksum, h.timestamp)) {
        chain.push(entryOp, h.parent, h.timestamp);
        entries.push({ header: header.slice(), op: BigInt(entryOp) });
        continue;
      }
      blanked++;
    }
    entries.push({ header: null, op: BigInt(entryOp) });
  }
  if (blanked > 0) c.mark(Mark.SuffixBlankedStale, `start view: ${blanked} headers`);
  return packSuffix(entries).body;
}

// ---------------------------------------------------------------------------------------------
// New primary.

/** The lowest op in (commit_min, op_head] the journal cannot vouch for, or null. */
function firstUncovered(c: Core, opHead: Op): Op | null {
  for (let op = c.commitMin + 1; op <= opHead; op++) {
    const { verdict, bogusOp } = verify(c, op);
    if (verdict === 'trusted') continue;
    if (verdict === 'bogus') discardBogus(c, bogusOp);
    return op;
  }
  return null;
}

/** Picks a body source for `op`: DVC senders other than us with a present bit, highest log_view first. */
function repairSource(c: Core, op: Op): ReplicaIndex | null {
  const parked = c.vc.parked;
  if (parked === null) return null;
  const candidates = parked.sources
    .filter((d) => d.replica !== c.self)
    .map((d) => {
      const entry: DvcEntry | undefined = d.entries[d.op - op];
      const present = entry !== undefined && entry.present;
      return { d, score: (present ? 2 : d.commit >= op ? 1 : 0) };
    })
    .filter((x) => x.score > 0)
    .sort((a, b) => b.score - a.score || b.d.logView - a.d.logView || a.d.replica - b.d.replica);
  if (candidates.length === 0) return null;
  const pick = candidates[c.vc.repairAttempts % candidates.length];
  return pick === undefined ? null : (pick.d.replica as ReplicaIndex);
}

export function tryFinishView(c: Core): void {
  const parked = c.vc.parked;
  if (parked === null || c.status !== 'view_change' || c.primaryIndex() !== c.self) return;
  if (c.transferring()) return;
  reconcile(c, parked.opHead, parked.commitMax, parked.headers);
  const missing = firstUncovered(c, parked.opHead);
  if (missing !== null) {
    if (c.repair !== null) return;
    const source = repairSource(c, missing);
    if (source === null) {
      c.mark(Mark.ElectNoSource, `op ${missing}`);
      c.event('view_change', `op ${missing} has no body source; waiting`);
      return;
    }
    c.mark(Mark.ElectRepair, `op ${missing} from ${source}`);
    startElectRepair(c, source, missing, parked.opHead);
    return;
  }
  startView(c);
}

function startView(c: Core): void {
  const parked = c.vc.parked;
  if (parked === null) return;
  c.repair = null;
  c.vc = newViewChangeState();
  c.status = 'normal';
  c.ceded = false;
  c.op = parked.opHead;
  c.sb.logHead = parked.opHead;
  forgetLostTail(c);
  capRecoveryBarrier(c);
  if (c.journalIncomplete) {
    // Leading the view it merged, this replica holds the whole log of the view (coverage above):
    // nothing is left that it could nack by omission (liveness: it was never cleared here before,
    // so after a full-cluster restart the first primary abstained at the next failover).
    c.journalIncomplete = false;
    c.votesBlind = false;
    c.mark(Mark.JournalComplete, `leading view ${c.view}`);
  }
  const head = c.journal.get(parked.opHead);
  c.lastPrepareChecksum = parked.opHead === 0 ? 0n : (head?.checksum ?? parked.headers[0]?.checksum ?? 0n);
  for (const h of parked.headers) if (h.timestamp > c.lastTimestamp) c.lastTimestamp = h.timestamp;
  c.logView = c.view;
  c.timers.stopViewChangeTimers();
  c.timers.normalHeartbeat.stop();
  c.timers.commitMessage.startPhased(c.jitter);
  // Rebuild the pipeline before anything else can be sequenced (pitfall 1). Ops this replica
  // already applied are committed: the pipeline starts above them even when the merged commit
  // point is lower (our own DVC, with the higher commit, may not have been in the merge).
  if (c.commitMin > parked.commitMax && c.commitMin < parked.opHead) c.mark(Mark.PipelineAboveApplied, `applied ${c.commitMin} > merged ${parked.commitMax}`);
  for (let op = Math.max(parked.commitMax, c.commitMin) + 1; op <= parked.opHead; op++) {
    const entry = c.journal.get(op);
    if (entry === undefined) break;
    if (entry.timestamp > c.lastTimestamp) c.lastTimestamp = entry.timestamp;
    c.pipeline.push({
      op, checksum: entry.checksum, parent: entry.parent, client: entry.client, request: entry.request,
      operation: entry.operation, token: null, awaiter: null, members: null, echo: null, acks: 0, quorum: false,
    });
  }
  if (!c.pipeline.empty) c.timers.prepare.start();
  else c.timers.prepare.stop();
  c.event('view_start', `view ${c.view} op_head=${parked.opHead} commit_max=${parked.commitMax}`);
  const body = startViewBody(c, parked.opHead, parked.commitMax);
  broadcastGated(c, startViewFrame(c, parked.opHead, parked.commitMax, 0n, body));
  for (const p of [...c.pipeline.entries()]) {
    const entry = c.journal.get(p.op);
    if (entry !== undefined && entry.durable) c.pipeline.ack(p, c.self, c.quorums.replication);
  }
  commitWalk(c);
  advanceCommitMax(c);
  reforwardSessions(c);
}

/** §4.11 / §5.8: an unsolicited StartView for our current view (incarnation 0), broadcast. */
export function sendUnsolicitedStartView(c: Core): void {
  if (!c.isActingPrimary() || c.logView !== c.view) return;
  broadcastGated(c, startViewFrame(c, c.op, Math.min(c.commitMax, c.op), 0n, startViewBody(c, c.op, Math.min(c.commitMax, c.op))));
}

/** §5.9: the current primary answers a probe with a unicast StartView echoing its incarnation. */
export function sendProbeAnswer(c: Core, to: ReplicaIndex, incarnation: bigint): void {
  const commit = Math.min(c.commitMax, c.op);
  sendGated(c, to, startViewFrame(c, c.op, commit, incarnation, startViewBody(c, c.op, commit)));
}

// ---------------------------------------------------------------------------------------------
// Backup.

const svView = new StartViewHeaderView();

export function onStartView(c: Core, frame: Uint8Array): string | null {
  const h = svView.bind(frame, 0);
  const from = h.replica;
  if (from !== c.primaryIndex(h.view)) return c.drop(Command.StartView, from, Drop.SvNotFromPrimary);
  if (h.view < c.view) return c.drop(Command.StartView, from, Drop.SvOlderView);
  const op = h.opNumber;
  const commit = h.commitNumber;
  if (
    c.status === 'recovering' && c.plane.incarnation !== 0n && h.incarnation !== 0n && h.view <= c.view &&
    op < c.op && h.incarnation !== c.plane.incarnation
  ) {
    c.mark(Mark.StartViewPreviousIncarnation, `from ${from}`);
    return c.drop(Command.StartView, from, Drop.SvPreviousIncarnation);
  }
  if (h.view === c.logView && op < c.commitMin) return c.drop(Command.StartView, from, Drop.SvStale);
  if (op < c.commitMin) return c.drop(Command.StartView, from, Drop.SvBelowCommitMin);
  if (c.status === 'normal' && h.view === c.view && c.logView === c.view) {
    // Already in this view's log: a late or duplicate StartView must not truncate what we have
    // journaled (and acked) since it was built. Take its commit point only.
    if (commit > c.commitMax) c.commitMax = commit;
    c.mark(Mark.StartViewCurrentView, `view ${c.view}`);
    commitWalk(c);
    return c.drop(Command.StartView, from, Drop.SvCurrentView);
  }
  const entries = suffixEntries(frame);
  const headers = typeof entries === 'string' ? [] : entries.filter((e) => !e.blank);
  adopt(c, asView(h.view), op, commit, headers);
  c.event('view_adopt', `view ${c.view} op=${op} commit=${commit} from ${from}`);
  // (op may be 0: a group nobody wrote to is complete at once; `max(op, 1)` here kept it abstaining forever.)
  if (c.journalIncomplete && c.incompleteUntil === null) c.incompleteUntil = op;
  if (!c.transferring()) ackJournaled(c, commit, op);
  if (c.transfer.stage === 'awaiting_target' && c.transfer.session === null) {
    startTransfer(c, from as ReplicaIndex);
    return null;
  }
  if (c.transferring()) return null;
  commitWalk(c);
  if (c.commitMin < c.commitMax) startRepair(c, from as ReplicaIndex);
  return null;
}

function adopt(c: Core, view: View, op: Op, commit: Op, headers: readonly DvcEntry[]): void {
  c.status = 'normal';
  c.probeAttempts = 0;
  c.view = view;
  c.logView = view;
  c.ceded = false;
  resetTrust(c, c.commitMax); // still the old log's commit point here
  if (commit > c.commitMax) c.commitMax = commit;
  c.vc = newViewChangeState();
  dropRequests(c, true);
  c.repair = null;
  for (const e of headers) if (e.op >= c.commitMin) c.canon.set(e.op, { checksum: e.checksum, parent: e.parent, header: e.header });
  for (const e of headers) if (e.timestamp > c.lastTimestamp) c.lastTimestamp = e.timestamp;
  reconcile(c, op, commit, headers);
  c.op = op;
  // Persisted with the log view (the superblock write gates every send in it): after a restart
  // this log still ends at op where the journal may not (restore.ts), or a DoViewChange would
  // claim this log view with the journal's shorter head and a merge drop ops committed in an
  // older view (seed 20 of 3).
  c.sb.logHead = op;
  forgetLostTail(c);
  capRecoveryBarrier(c);
  const head = c.journal.get(op);
  c.lastPrepareChecksum = headers[0]?.op === op ? headers[0].checksum : (head?.checksum ?? c.lastPrepareChecksum);
  c.timers.stopViewChangeTimers();
  c.timers.prepare.stop();
  c.timers.commitMessage.stop();
  c.timers.normalHeartbeat.start();
  reforwardSessions(c);
}

/**
 * A new log view is installed: faulty ops above its head were lost from older log views. The new
 * view's log was merged from a quorum of DoViewChanges, so nothing above its head is committed,
 * and this replica never acked those ops in this view: a later vote may nack them.
 */
function forgetLostTail(c: Core): void {
  forgetFaultyAbove(c, c.op);
}

/**
 * The recovery barrier (§5.10: a boot with an uncommitted WAL tail) waits for commit_max to reach
 * the restored head. A newly installed log (view started or adopted) may have truncated that tail:
 * the barrier then is the installed head, never an op that no longer exists.
 */
function capRecoveryBarrier(c: Core): void {
  if (c.recoveryBarrier <= c.op) return;
  c.mark(Mark.RecoveryBarrierCapped, `${c.recoveryBarrier} -> ${c.op}`);
  c.recoveryBarrier = c.op;
}
