/**
 * The merge rule of §5.5, as a pure function of the recorded DoViewChanges.
 *
 *   1. canonical log_view = max log_view; canonical senders = DVCs with it;
 *   2. commit_max = max over DVCs of {commit, op − 127, head header's commit field}
 *      (never the lowest suffix op, pitfall 3);
 *   3. op_head_max = max(op of canonical senders, commit_max);
 *   4. scan op = max(commit_max, 1) .. op_head_max: canonical header, tally copies (present
 *      matching headers) and nacks (explicit bits; a log ending below, unless the sender does not
 *      know where its log ends: a blank head without a nack bit; an older-log_view header
 *      that differs from a known canonical header, or, above commit_max with no canonical
 *      header, from the op the canonical header right above names as its parent:
 *      `impliedCanonical`); abstain outside a sender's window; a nack quorum truncates above commit_max
 *      (and deadlocks at or below it); no usable canonical copy waits for repair (or, once all
 *      n DVCs are in, drops an op nobody holds a body of, and deadlocks otherwise); with no
 *      canonical header but one older-log_view header H that its holders plus the nacks make a
 *      nack quorum against any other op, H is the op there (`olderViewCandidate`; right above the
 *      commit point only when it chains to the committed op); above the end of the log of the
 *      canonical log view's primary, when its DVC knows that end, the log is cut (`canonicalLogEnd`);
 *      at the commit point with no canonical header, the merging replica's own applied entry, or
 *      else the header a DVC's head chains down to when that head's commit field reaches it, or
 *      else the one older-log_view header there on `olderViewCandidate`'s nack-quorum condition;
 *      where canonical senders disagree, the copy stamped above the canonical log view
 *      (`stampedAbove`);
 *   5. chain the canonical headers from op_head down to max(commit_max, 1) (an op with parent 0
 *      right above the commit point leaves the commit point's header out);
 *   6. "committed elsewhere": older-log_view headers at or below their sender's commit that the
 *      header list does not cover, kept only when chained to the header above them.
 */
import { assert } from '@shoal/stdx';
import { SUFFIX_MAX } from './types.js';
import type { Op } from './types.js';
import type { DvcEntry, DvcRecord } from './view-change-state.js';

export type MergeResult =
  | { readonly kind: 'awaiting_quorum' }
  /** A quorum is in, but too few of its senders know where their logs end (see `merge`). */
  | { readonly kind: 'awaiting_intact' }
  | { readonly kind: 'awaiting_repair'; readonly op: Op }
  | { readonly kind: 'deadlocked'; readonly op: Op }
  | {
      readonly kind: 'ready';
      readonly opHead: Op;
      readonly commitMax: Op;
      /** High to low: opHead down to max(commitMax, 1). */
      readonly headers: readonly DvcEntry[];
      readonly committedElsewhere: readonly DvcEntry[];
      /** The rare rules this merge used (coverage marks; each listed once). */
      readonly paths: readonly MergePath[];
    };

/** Rules of the merge beyond the plain scan (docs/internals-view-change.md). */
export type MergePath =
  | 'nack_truncation'
  | 'primary_log_end'
  | 'unservable_truncation'
  | 'commit_point_without_copy'
  | 'log_end_unknown'
  | 'committed_elsewhere'
  | 'older_view_adopted'
  | 'commit_point_from_head_chain'
  | 'stamp_resolved';

export interface MergeQuorums {
  readonly viewChange: number;
  readonly nack: number;
}

/** The entry a DVC holds at `op`, or null outside its window. */
function entryAt(dvc: DvcRecord, op: Op): DvcEntry | null {
  const index = dvc.op - op;
  if (index < 0 || index >= dvc.entries.length) return null;
  return dvc.entries[index] ?? null;
}

function mergedCommitMax(dvcs: readonly DvcRecord[]): Op {
  let commitMax = 0;
  for (const dvc of dvcs) {
    commitMax = Math.max(commitMax, dvc.commit, Math.max(0, dvc.op - (SUFFIX_MAX - 1)));
    const head = dvc.entries[0];
    if (head !== undefined && !head.blank) commitMax = Math.max(commitMax, head.commit);
  }
  return commitMax;
}

/** The canonical header at `op`, or 'conflict' when canonical senders disagree. */
function canonicalAt(canonical: readonly DvcRecord[], op: Op): DvcEntry | null | 'conflict' {
  let found: DvcEntry | null = null;
  for (const dvc of canonical) {
    const e = entryAt(dvc, op);
    if (e === null || e.blank) continue;
    if (found === null) found = e;
    else if (found.checksum !== e.checksum) return 'conflict';
  }
  return found;
}

/**
 * The checksum of the canonical log view's op at `op` when no canonical sender holds its header
 * but one holds the next op's: that header's `parent` (the hash chain names the op below it in
 * the same log). It rests on what `canonicalAt` assumes at `op` itself: a canonical sender's
 * header above its commit, stamped at or below the canonical log view, is an op of that view's
 * log (or of a later merged log, which holds every op that can be committed). Never one stamped
 * above it (an unvouched primary-elect's proposal can reach a replica by repair, `stampedAbove`),
 * a conflict, or a parent of 0 (a primary that started its view there without the header).
 * Seed 1135380 of 3: the canonical sender held op 51 of log view 2 but blanks at 49 and 50
 * (nacked: never received); the older log view's ops 49 and 50 were adopted under it, and the
 * header walk deadlocked on 51's parent with the third replica dead for good.
 */
function impliedCanonical(canonical: readonly DvcRecord[], op: Op, canonicalLogView: number): bigint | null {
  const above = canonicalAt(canonical, op + 1);
  if (above === null || above === 'conflict' || above.view > canonicalLogView || above.parent === 0n) return null;
  return above.parent;
}

/** An older log view's candidate, unless the canonical log names another op there. */
function impliedOlder<T extends { readonly entry: DvcEntry }>(older: T | null, implied: bigint | null): T | null {
  return older !== null && implied !== null && older.entry.checksum !== implied ? null : older;
}

/** Some DVC holds the body of an op at `op` (any log view: it may be the canonical op). */
function presentAnywhere(dvcs: readonly DvcRecord[], op: Op): boolean {
  return dvcs.some((d) => entryAt(d, op)?.present === true);
}

/** No DVC holds a non-blank header at `op`. */
function noValidHeader(dvcs: readonly DvcRecord[], op: Op): boolean {
  return dvcs.every((d) => {
    const e = entryAt(d, op);
    return e === null || e.blank;
  });
}

/**
 * A sender that does not know where its log ends: its head entry is a blank without a nack bit
 * above its commit point (a replica voting blind with an incomplete journal, dvc-suffix.ts; or one
 * whose head op is faulty). Its log "ending below" an op is then no evidence against that op.
 */
function logEndUnknown(dvc: DvcRecord): boolean {
  const head = dvc.entries[0];
  return head !== undefined && head.blank && !head.nack && dvc.op > dvc.commit;
}

/**
 * A sender whose DVC may not show every op it acked: its log end is unknown and its suffix runs
 * to the end of its window (commit + 127), so what it may hold above is cut off. A lost tail
 * that ends inside the window shows all of it (blanks without nacks up to the top faulty op:
 * nothing above was acked) and counts as any other sender.
 */
function mayHideAcks(dvc: DvcRecord): boolean {
  return logEndUnknown(dvc) && dvc.op - dvc.commit >= SUFFIX_MAX - 1;
}

/**
 * Above the commit point, where no canonical sender holds a header: the one header H that the
 * older-log_view senders hold there (null when none holds one, or two differ), and how many
 * hold it without a nack bit. A sender of log_view L < canonical that holds H at op never acked
 * another op X there: X of a view above L it could not have acked (it was never normal in that
 * view), and X of a view at or below L would be in its log in place of H (an op dropped from the
 * log of view L never comes back in a later one: every later canonical log descends from it).
 * So when those holders and the nacks together reach a nack quorum, no op other than H can have
 * been committed there, and H (committed or not) is a sound choice: taking it is never wrong,
 * and waiting was forever once every DVC was in (seed 100423 of 5: the canonical senders' lost
 * tails hold blanks without nacks above the commit point, the only copy is a replica's own
 * older-view prepare).
 */
function olderViewCandidate(dvcs: readonly DvcRecord[], op: Op, canonicalLogView: number): { entry: DvcEntry; holders: number; present: boolean } | null {
  let found: DvcEntry | null = null;
  let holders = 0;
  let present = false;
  for (const dvc of dvcs) {
    if (dvc.logView >= canonicalLogView) continue;
    const e = entryAt(dvc, op);
    if (e === null || e.blank) continue;
    if (found !== null && found.checksum !== e.checksum) return null;
    found = e;
    if (!e.nack) holders++;
    if (e.present) present = true;
  }
  return found === null ? null : { entry: found, holders, present };
}

/**
 * The op at which the canonical log view's log ends, when its primary's DVC is in and knows where
 * its log ends; else null. Only that view's primary assigned ops in it, and it sends a Prepare only
 * once its own journal holds it (send.ts), so its log is the whole log of that view: an op above
 * its end was never in it. And every op committed before that view started is in its log (the
 * merge that started it held a quorum). So no op above the end is committed, by any view up to the
 * canonical one, nor by a later one (none started: its log view would be the canonical one).
 * Seed 1017918 of 3: the primary of log view 1 ended at op 8, the other canonical sender had lost
 * its tail, and the only headers above were an older view's: without this bound the merge took
 * them (`olderViewCandidate`) on top of a committed op 8 they did not chain to.
 */
function canonicalLogEnd(canonical: readonly DvcRecord[], canonicalLogView: number, replicaCount: number): Op | null {
  const primary = canonical.find((d) => d.replica === canonicalLogView % replicaCount);
  return primary === undefined || logEndUnknown(primary) ? null : primary.op;
}

/**
 * The checksum of the committed op at the commit point, when the merge knows it: a canonical
 * sender's header there (the canonical log holds the committed prefix), or the merging replica's
 * own applied entry. Null when unknown (every copy compacted or lost).
 */
function committedChecksumAt(dvcs: readonly DvcRecord[], canonical: readonly DvcRecord[], op: Op, self: MergeSelf | null): bigint | null {
  const header = canonicalAt(canonical, op);
  if (header === 'conflict') return null;
  return (header ?? appliedHere(dvcs, op, self))?.checksum ?? null;
}

/**
 * `below`: the checksum of the op the merged log holds at `op` − 1, when known (else null). Any
 * op committed at `op` chains to it.
 */
function tally(
  dvcs: readonly DvcRecord[],
  op: Op,
  canonical: DvcEntry | null,
  canonicalLogView: number,
  below: bigint | null,
  implied: bigint | null = null,
): { copies: number; nacks: number; unknownEnds: number } {
  let copies = 0;
  let nacks = 0;
  let unknownEnds = 0;
  for (const dvc of dvcs) {
    if (dvc.op < op) {
      if (!logEndUnknown(dvc)) nacks++; // its log ends below this op
      else unknownEnds++;
      continue;
    }
    const e = entryAt(dvc, op);
    if (e === null) continue; // outside its window: abstain
    if (!e.blank && canonical !== null && e.checksum === canonical.checksum && e.present) copies++;
    if (e.nack) nacks++;
    // An older log view's header is evidence against the canonical op only when that op is
    // known and differs: with no canonical header (its senders hold a blank there: a restarted
    // replica's unheld tail, a lost tail) the older copy may be the committed op itself.
    else if (!e.blank && dvc.logView < canonicalLogView && canonical !== null && e.checksum !== canonical.checksum) nacks++;
    // The same when no canonical sender holds the header but the canonical header above names
    // the op by its checksum (`impliedCanonical`): the older header is another op.
    else if (!e.blank && dvc.logView < canonicalLogView && canonical === null && implied !== null && e.checksum !== implied) nacks++;
    // With no canonical header, an older log view's header H is still evidence against every op
    // other than H (`olderViewCandidate`: its sender never acked another op there). An H that
    // does not chain to the op the log holds below (`below`) cannot be committed itself, so its
    // sender nacks every op that can (seed 1038933 of 5: the old primary of log view 1 held a
    // branch the canonical log view never took; the canonical senders' logs end below or lost
    // their tail, and the merge waited for a replica dead for good). Not an H with parent 0: its
    // primary started the view at the commit point without that op's header.
    else if (!e.blank && dvc.logView < canonicalLogView && canonical === null && below !== null && e.parent !== 0n && e.parent !== below) nacks++;
  }
  return { copies, nacks, unknownEnds };
}

/**
 * What the merging replica itself applied: its own DVC's entries at or below `commitMin` are
 * committed ops (applied only once verified), whatever their log view.
 */
export interface MergeSelf {
  readonly replica: number;
  readonly commitMin: Op;
}

/**
 * The canonical header at the merged commit point when no canonical sender holds one there: the
 * merging replica's own applied entry. Canonical senders may all hold a blank at an op they
 * never received (a backup that adopted a log it had not fetched yet), while the op is
 * committed and applied here, in an older log view (seed 182 of 3: the commit point waited for
 * a copy forever with the third replica down for good).
 */
/** The merging replica applied `op` (so it is committed, whatever anyone's header says). */
function appliedBy(self: MergeSelf | null, op: Op): boolean {
  return self !== null && op <= self.commitMin;
}

function appliedHere(dvcs: readonly DvcRecord[], op: Op, self: MergeSelf | null): DvcEntry | null {
  if (self === null || op > self.commitMin) return null;
  const own = dvcs.find((d) => d.replica === self.replica);
  const e = own === undefined ? null : entryAt(own, op);
  return e === null || e.blank ? null : e;
}

/**
 * The committed op at `op` as a sender's head header vouches for it: a prepare whose `commit`
 * field is at or above `op` was prepared by a primary that had committed `op` in its own log, and
 * the parent chain from that head down to `op` (every header in between held, each the parent of
 * the one above) is that log. So the header it reaches at `op` is the committed one, whatever
 * the sender's log view. Null when no head vouches for `op` this way (or two differ).
 * Seed 1075070 of 3: the commit point came from an older log view's head header; the only
 * canonical sender, restarted before it fetched the StartView's bodies, held blanks with nack
 * bits there, and the merge waited for a copy from the replica dead for good.
 */
function headChainAt(dvcs: readonly DvcRecord[], op: Op): DvcEntry | null {
  let found: DvcEntry | null = null;
  for (const dvc of dvcs) {
    const head = dvc.entries[0];
    const index = dvc.op - op;
    if (head === undefined || head.blank || head.commit < op || index < 0 || index >= dvc.entries.length) continue;
    let e: DvcEntry = head;
    let chained = true;
    for (let i = 1; i <= index && chained; i++) {
      const next = dvc.entries[i];
      if (next === undefined || next.blank || e.parent !== next.checksum) chained = false;
      else e = next;
    }
    if (!chained) continue;
    if (found !== null && found.checksum !== e.checksum) return null;
    found = e;
  }
  return found;
}

/**
 * Where canonical senders disagree at `op`: the copy with the highest stamp (the view of its last
 * sender) when that stamp is above the canonical log view L; else null. Why it is the only op
 * that can be committed there:
 *   - no op was committed in a view above L: a commit in view y needs a quorum that made log view
 *     y durable, and this DVC quorum would meet it;
 *   - a copy stamped w that a replica holds left w's primary by a gated send (a Prepare, a
 *     retransmit, a chain forward of one; a repair reply keeps the server's stamp), so that
 *     primary had made (w, w) durable first: view w had started from a merge, whose log holds
 *     every op committed in a view up to L. A log of view w that never got that far (a
 *     primary-elect that counted its own DoViewChange, proposed and crashed) sends nothing, and
 *     boot drops its own proposals (restore.ts `unvouchedFromOp`);
 * so this copy is the op view w's log holds at `op`, and any op committed there is it. It arises
 * when a backup journaled a prepare of view w and crashed before its superblock named log view
 * w: its DoViewChange shows the copy inside its older log view; with w's primary gone for good
 * the conflict was waited on forever (scenario unvouched-restore.test.ts, the backup case).
 */
function stampedAbove(canonical: readonly DvcRecord[], op: Op, canonicalLogView: number): DvcEntry | null {
  let found: DvcEntry | null = null;
  for (const dvc of canonical) {
    const e = entryAt(dvc, op);
    if (e === null || e.blank || e.view <= canonicalLogView) continue;
    if (found === null || e.view > found.view) found = e;
    // One view has one log: two ops under one stamp break the model; leave it to the old rule.
    else if (e.view === found.view && e.checksum !== found.checksum) return null;
  }
  return found;
}

export function merge(dvcs: readonly DvcRecord[], replicaCount: number, q: MergeQuorums, self: MergeSelf | null = null): MergeResult {
  if (dvcs.length < q.viewChange) return { kind: 'awaiting_quorum' };
  // Quorum intersection holds only among senders whose DVC can show every op they may have
  // acked. One whose log end is unknown and whose suffix is full (a blind vote, or a lost tail
  // reaching past its window, which ends 127 above a commit point that may be stale) may have
  // acked ops above it, so a committed op can sit on it and on replicas not heard from, and
  // nowhere in the others' logs (seed 1004652 of 3: the primary lost its tail to a power loss,
  // the primary-elect lagged one op behind the commit it knew, and the merge of those two dropped
  // committed op 193). Until `nack` senders that show all they may have acked (every replication
  // quorum meets them) or all n DVCs are in, the merge waits.
  if (dvcs.length < replicaCount && dvcs.filter((d) => !mayHideAcks(d)).length < q.nack) return { kind: 'awaiting_intact' };
  const canonicalLogView = Math.max(...dvcs.map((d) => d.logView));
  const canonical = dvcs.filter((d) => d.logView === canonicalLogView);
  const commitMax = mergedCommitMax(dvcs);
  const opHeadMax = Math.max(commitMax, ...canonical.map((d) => d.op));
  if (opHeadMax === 0) return { kind: 'ready', opHead: 0, commitMax, headers: [], committedElsewhere: [], paths: [] };

  const paths = new Set<MergePath>();
  /** Older-log_view headers taken where no canonical sender holds one (`olderViewCandidate`). */
  const adopted = new Map<Op, DvcEntry>();
  let opHead = opHeadMax;
  const low = Math.max(commitMax, 1);
  const logEnd = canonicalLogEnd(canonical, canonicalLogView, replicaCount);
  /**
   * The checksum of the op the merged log holds at `op` − 1, when known: the committed op at the
   * commit point, then each header the scan kept. Any op committed at `op` chains to it.
   */
  let below: bigint | null = null;
  for (let op = low; op <= opHeadMax; op++) {
    if (logEnd !== null && op > logEnd && op > commitMax) {
      paths.add('primary_log_end');
      opHead = op - 1;
      break;
    }
    const header = canonicalAt(canonical, op);
    const conflict = header === 'conflict';
    const vouched = !conflict && header === null && op === commitMax && appliedHere(dvcs, op, self) === null ? headChainAt(dvcs, op) : null;
    if (vouched !== null) adopted.set(op, vouched);
    const canon = conflict ? null : (header ?? (op === commitMax ? (appliedHere(dvcs, op, self) ?? vouched) : null));
    // Only above the commit point: the commit point is committed, so an older header there that
    // the next op's parent contradicts is a broken journal, better judged by deviation 28's rule.
    const implied = canon === null && !conflict && op > commitMax ? impliedCanonical(canonical, op, canonicalLogView) : null;
    const { copies, nacks, unknownEnds } = tally(dvcs, op, canon, canonicalLogView, below, implied);
    if (unknownEnds > 0) paths.add('log_end_unknown');
    if (nacks >= q.nack) {
      if (op <= commitMax) return { kind: 'deadlocked', op };
      paths.add('nack_truncation');
      opHead = op - 1;
      break;
    }
    // At the commit point with no header of the canonical log view, the older log views' one
    // header there is the committed op when its holders and the nacks make a nack quorum (the
    // argument of `olderViewCandidate`: no commit quorum avoids them, none of them acked another
    // op there). A replica that restarted after installing the canonical log view knows this
    // commit point only from its superblock and never received the op (dvc-suffix.ts).
    const atCommit = !conflict && canon === null && op === commitMax && op > 0 ? impliedOlder(olderViewCandidate(dvcs, op, canonicalLogView), implied) : null;
    if (atCommit !== null && nacks + atCommit.holders >= q.nack) {
      adopted.set(op, atCommit.entry);
      paths.add('older_view_adopted');
      below = atCommit.entry.checksum;
      continue;
    }
    if (op === commitMax && !conflict && (canon !== null || noValidHeader(dvcs, op) || appliedBy(self, op))) {
      // The commit point itself is already committed: the new log needs no copy of its body
      // (those behind fetch it, or a snapshot, from the new primary), and possibly not even its
      // header, when every copy was compacted or lost with a memory journal. Deviation: upstream
      // waits for a present copy and deadlocks once all DVCs are in. Nor a header when the merging
      // replica applied it (its own copy compacted away; another's older header there is no
      // evidence either way: seed 144 of 3 deadlocked on one).
      if (copies === 0) paths.add('commit_point_without_copy');
      if (vouched !== null) paths.add('commit_point_from_head_chain');
      below = commitMax > 0 ? (vouched?.checksum ?? committedChecksumAt(dvcs, canonical, commitMax, self)) : null;
      continue;
    }
    if (dvcs.length >= replicaCount && op > commitMax && !conflict && copies === 0 && !presentAnywhere(dvcs, op)) {
      // Every replica spoke and none holds this op's body (some may know its header: a faulty
      // slot it will not nack, a StartView anchor): nobody can ever serve it. It is dropped with
      // everything above it. Deviation: upstream deadlocks here forever. Not when an older log
      // view holds a body there while the canonical header is unknown: it may be the committed
      // op (waiting is the safe outcome).
      paths.add('unservable_truncation');
      opHead = op - 1;
      break;
    }
    if (!conflict && canon === null && op > commitMax) {
      const older = impliedOlder(olderViewCandidate(dvcs, op, canonicalLogView), implied);
      // The candidate must chain to the op the log holds below it (right above the commit point,
      // the committed op there): an older log view's op may sit on a branch that a later view
      // truncated below the commit point (seed 1017918 of 3), or below an op the scan kept.
      const chains = older !== null && (op - 1 === commitMax && commitMax === 0 ? true : below === older.entry.parent);
      if (older !== null && chains && older.present && nacks + older.holders >= q.nack) {
        // Deviation: upstream counts every older-log_view header as a nack here. That is
        // unsound when the canonical op is unknown (it may be this very header: merge.test.ts);
        // counted as "a nack against any other op", the header is the one op that may be
        // committed, so it is taken (and chained below like any canonical header).
        adopted.set(op, older.entry);
        paths.add('older_view_adopted');
        below = older.entry.checksum;
        continue;
      }
    }
    const stamped = conflict ? stampedAbove(canonical, op, canonicalLogView) : null;
    if (stamped !== null) {
      const resolved = tally(dvcs, op, stamped, canonicalLogView, below);
      if (resolved.nacks >= q.nack) {
        if (op <= commitMax) return { kind: 'deadlocked', op };
        paths.add('nack_truncation');
        opHead = op - 1;
        break;
      }
      if (resolved.copies > 0) {
        // What this replica applied is committed: a stamped copy that differs breaks the argument.
        const own = appliedHere(dvcs, op, self);
        assert(own === null || own.checksum === stamped.checksum, `merge: op ${op} stamped ${stamped.view} differs from the applied op`);
        adopted.set(op, stamped);
        paths.add('stamp_resolved');
        below = stamped.checksum;
        continue;
      }
    }
    if (conflict || canon === null || copies === 0) {
      return dvcs.length < replicaCount ? { kind: 'awaiting_repair', op } : { kind: 'deadlocked', op };
    }
    below = canon.checksum;
  }

  const headers: DvcEntry[] = [];
  for (let op = opHead; op >= low; op--) {
    const at = canonicalAt(canonical, op);
    // A conflict the scan settled by stamp (`stampedAbove`) is in `adopted`.
    const found = at === 'conflict' ? (adopted.get(op) ?? at) : (at ?? adopted.get(op) ?? null);
    const header = found === null && op === commitMax ? appliedHere(dvcs, op, self) : found;
    if (header === null && op === commitMax && op === low && (noValidHeader(dvcs, op) || appliedBy(self, op))) break;
    if (header === null || header === 'conflict') return { kind: 'deadlocked', op: opHead };
    const above = headers[headers.length - 1];
    // An op whose parent is 0 was prepared by a primary that started its view at this commit
    // point without its header (`commit_point_without_copy`, start-view.ts): it follows the
    // committed op, whichever header is seen here. That header is then unverified and left out,
    // as when nobody holds one (seed 1015906 of 3: deadlocked for good on the parent mismatch).
    if (above !== undefined && above.parent === 0n && op === commitMax && op === low) break;
    if (above !== undefined && above.parent !== header.checksum) return { kind: 'deadlocked', op: opHead };
    headers.push(header);
  }

  const elsewhere = committedElsewhere(dvcs, canonicalLogView, headers, low, opHead);
  if (elsewhere === 'conflict') return { kind: 'deadlocked', op: opHead };
  if (elsewhere.length > 0) paths.add('committed_elsewhere');
  return { kind: 'ready', opHead, commitMax, headers, committedElsewhere: elsewhere, paths: [...paths] };
}

function committedElsewhere(
  dvcs: readonly DvcRecord[],
  canonicalLogView: number,
  headers: readonly DvcEntry[],
  low: Op,
  opHead: Op,
): DvcEntry[] | 'conflict' {
  const candidates = new Map<Op, DvcEntry>();
  for (const dvc of dvcs) {
    if (dvc.logView === canonicalLogView) continue;
    for (const e of dvc.entries) {
      if (e.blank || e.op > dvc.commit) continue;
      if (headers.length > 0 && e.op >= low && e.op <= opHead) continue;
      const seen = candidates.get(e.op);
      if (seen !== undefined && seen.checksum !== e.checksum) return 'conflict';
      candidates.set(e.op, e);
    }
  }
  const byOp = new Map<Op, DvcEntry>(headers.map((h) => [h.op, h]));
  const kept: DvcEntry[] = [];
  const ops = [...candidates.keys()].sort((a, b) => b - a);
  for (const op of ops) {
    const candidate = candidates.get(op) as DvcEntry;
    const above = byOp.get(op + 1);
    // Kept only when the header above names it as parent: then it is the canonical op by the hash
    // chain alone, whatever its sender's commit claims. A parent of 0 ("unknown": the view above
    // started at a commit point without its header) proves nothing, and the sender's claim is not
    // enough on its own: a primary-elect raises commit_max at its merge, and the reconcile that
    // drops an older view's orphan there waits while a state transfer is in flight
    // (`tryFinishView`); should that view change fail, its next DoViewChange reports the raised
    // commit point with the orphan on it.
    if (above === undefined || above.parent !== candidate.checksum) continue;
    kept.push(candidate);
    byOp.set(op, candidate);
  }
  return kept;
}
