/**
 * Liveness in Normal status: the primary's Commit heartbeat (§4.11), the backup's reaction to it,
 * and the primary's prepare retransmit (§4.12).
 */
import { Command, CommitHeaderView } from '@shoal/protocol';
import { commitWalk } from './commit.js';
import type { Core } from './core.js';
import { Drop } from './drops.js';
import { commitFrame, restampedPrepare } from './frames.js';
import { Mark } from './marks.js';
import { startRepair } from './repair.js';
import { broadcastGated, sendGated } from './send.js';
import { sendUnsolicitedStartView } from './start-view.js';
import { checksumAt, setCanon } from './trust.js';
import type { ReplicaIndex, View } from './types.js';
import { startProbing } from './view-change.js';

/** CommitMessage timer fire (primary). */
export function onCommitMessageTimeout(c: Core): void {
  const t = c.timers.commitMessage;
  if (!c.isPrimaryByIndex() || c.status !== 'normal') {
    t.stop();
    return;
  }
  if (c.observedNewerView > c.view || c.ceded) {
    // §5.8: a primary-by-index that saw a newer view (or a ceded one) probes instead.
    if (c.observedNewerView > c.view) {
      t.stop();
      c.mark(Mark.ProbeNewerView, `primary of view ${c.view} saw ${c.observedNewerView}`);
      startProbing(c);
      return;
    }
    t.reset();
    return;
  }
  c.heartbeatTimestamp += 1n;
  broadcastGated(c, commitFrame(c, checksumAt(c, c.commitMin)));
  t.reset();
}

const commitView = new CommitHeaderView();

/** §4.11 Commit on a backup (and on a primary from an older view's primary). */
export function onCommit(c: Core, frame: Uint8Array): string | null {
  const h = commitView.bind(frame, 0);
  const from = h.replica;
  if (c.status !== 'normal') return c.drop(Command.Commit, from, Drop.NotNormal);
  if (h.view > c.view) {
    if (h.view > c.observedNewerView) c.observedNewerView = h.view as View;
    return c.drop(Command.Commit, from, Drop.CommitNewerView);
  }
  if (h.view < c.view) {
    // §4.11 / §5.8: a stale primary still heartbeating; tell it about our view.
    if (c.isActingPrimary() && from === c.primaryIndex(h.view)) sendUnsolicitedStartView(c);
    return c.drop(Command.Commit, from, Drop.CommitOlderView);
  }
  if (from !== c.primaryIndex()) return c.drop(Command.Commit, from, Drop.CommitNotFromPrimary);
  if (c.isPrimaryByIndex()) return c.drop(Command.Commit, from, Drop.CommitAtPrimary);
  // The counter is the primary's own: it orders the heartbeats of one view, not across views. A
  // backup that had led a view while cut off (its counter ran on) ignored every heartbeat of the
  // next primary until that primary's counter caught up, timed out and started view changes
  // against a healthy primary (heartbeat-counter.test.ts).
  if (c.heartbeatView !== c.view || h.timestampMonotonic > c.heartbeatTimestamp) {
    c.heartbeatView = c.view;
    c.heartbeatTimestamp = h.timestampMonotonic;
    c.timers.normalHeartbeat.reset();
  }
  const commit = h.commitNumber;
  if (h.commitChecksum !== 0n) setCanon(c, commit, { checksum: h.commitChecksum, parent: null, header: null });
  if (commit > c.commitMax) c.commitMax = commit;
  commitWalk(c);
  if (c.commitMin < c.commitMax) startRepair(c, from as ReplicaIndex);
  return null;
}

/** §4.12: Prepare timer fire (primary): resend un-acked prepares directly, then back off. */
export function onPrepareTimeout(c: Core): void {
  const t = c.timers.prepare;
  if (!c.isActingPrimary() || c.pipeline.empty) {
    t.stop();
    return;
  }
  for (const entry of c.pipeline.entries()) {
    if (entry.quorum || entry.op <= c.commitMax) continue;
    const journaled = c.journal.get(entry.op);
    if (journaled === undefined || journaled.checksum !== entry.checksum) continue;
    for (const to of c.others()) {
      if (((entry.acks >>> to) & 1) === 1) continue;
      sendGated(c, to, restampedPrepare(journaled.frame, c.view), { op: entry.op, checksum: entry.checksum });
    }
  }
  t.backoff(c.jitter);
}
