/**
 * View change (§5.1–§5.5): entering a view change, StartViewChange and DoViewChange handling, the
 * view-change timers, and running the merge on the new primary.
 *
 *   suspect ─▶ SVC(v) ─▶ f SVCs from others ─▶ DVC(v) broadcast ─▶ primary of v: quorum of DVCs
 *                                                                  ─▶ merge ─▶ park ─▶ start view
 */
import { Command, DoViewChangeHeaderView, StartViewChangeHeaderView } from '@shoal/protocol';
import { dropRequests } from './answers.js';
import type { Core } from './core.js';
import { Drop } from './drops.js';
import { buildOwnDvc } from './dvc-suffix.js';
import { startViewChangeFrame } from './frames.js';
import { Mark } from './marks.js';
import { merge, type MergePath } from './merge.js';
import { countBits, maskWith } from './quorums.js';
import { broadcastGated } from './send.js';
import { setStage } from './state-transfer.js';
import { tryFinishView } from './start-view.js';
import { resetTrust } from './trust.js';
import { asView, type View } from './types.js';
import { dvcRecordFromFrame, newViewChangeState } from './view-change-state.js';

/**
 * §5.9: a replica that restarted, or that saw a newer view, asks the current primary for a
 * StartView instead of trusting its own stale view (probe.ts sends the probes).
 */
export function startProbing(c: Core): void {
  c.status = 'recovering';
  c.probeAttempts = 0;
  dropRequests(c, true);
  c.timers.prepare.stop();
  c.timers.commitMessage.stop();
  c.timers.normalHeartbeat.stop();
  c.timers.requestStartViewMessage.start();
  c.event('probe', `probing from view ${c.view}`);
}

/** §5.1 entering a view change at view v (v >= current view). */
export function enterViewChange(c: Core, v: View): void {
  if (v < c.view) return;
  c.view = v;
  c.status = 'view_change';
  c.vc = newViewChangeState();
  c.vc.sentSvc = true;
  c.vc.svcFrom = maskWith(0, c.self);
  dropRequests(c, false);
  const t = c.timers;
  t.normalHeartbeat.stop();
  t.startViewChangeMessage.start();
  t.viewChangeStatus.start();
  t.requestStartViewMessage.start();
  t.doViewChangeMessage.stop();
  c.event('view_change', `enter view ${v}`);
  broadcastGated(c, startViewChangeFrame(c));
  maybeSendDoViewChange(c);
}

/** A probing replica stops waiting for a StartView (as when its probes run out, probe.ts). */
function leaveProbing(c: Core, view: number): void {
  c.mark(Mark.ProbeJoinsViewChange, `view ${view}`);
  c.timers.requestStartViewMessage.stop();
  if (c.transfer.stage === 'awaiting_target' && c.transfer.session === null) setStage(c, 'idle');
}

const svcView = new StartViewChangeHeaderView();

export function onStartViewChange(c: Core, frame: Uint8Array): string | null {
  const h = svcView.bind(frame, 0);
  // A probing (restarted) replica joins a view change others started beyond its view: nobody
  // leads the view it asks about, and waiting for its probes to run out (5 s) kept a group with
  // a restarted replica and a dead primary from electing (issue 12 item 9). Its journal came back
  // with it (or it abstains: journalIncomplete), so its vote is sound.
  if (c.status === 'recovering' && h.view <= c.view) return c.drop(Command.StartViewChange, h.replica, Drop.Recovering);
  if (c.status === 'recovering') leaveProbing(c, h.view);
  if (h.view < c.view) return c.drop(Command.StartViewChange, h.replica, Drop.SvcOlderView);
  if (h.view > c.view) enterViewChange(c, asView(h.view));
  else if (c.status !== 'view_change') return c.drop(Command.StartViewChange, h.replica, Drop.SvcCurrentViewNotInViewChange); // §13.7
  c.vc.svcFrom = maskWith(c.vc.svcFrom, h.replica);
  maybeSendDoViewChange(c);
  return null;
}

/** §5.2: once f StartViewChanges from others are in, send our DoViewChange (once per view). */
export function maybeSendDoViewChange(c: Core): void {
  if (c.status !== 'view_change' || c.vc.sentDvc) return;
  const others = countBits(c.vc.svcFrom) - (((c.vc.svcFrom >>> c.self) & 1) === 1 ? 1 : 0);
  if (others < c.quorums.svcFromOthers) return;
  // A replica that lost journal entries it may have acked abstains (its DVC could nack them),
  // until it votes blind (dvc-suffix.ts).
  if (c.journalIncomplete && !c.votesBlind) {
    if (!c.vc.abstained) c.mark(Mark.VoteAbstain, `view ${c.view}`);
    c.vc.abstained = true;
    return;
  }
  const own = buildOwnDvc(c);
  c.vc.sentDvc = true;
  c.event('dvc', `sent view ${c.view} to replica ${c.primaryIndex()} op=${c.op} commit=${c.commitMax}`);
  broadcastGated(c, own.frame);
  c.timers.doViewChangeMessage.start();
  if (c.primaryIndex() === c.self) {
    if (!c.vc.dvcs.has(c.self)) c.vc.dvcs.set(c.self, own.record);
    tryMerge(c);
  }
}

const dvcView = new DoViewChangeHeaderView();

export function onDoViewChange(c: Core, frame: Uint8Array): string | null {
  const h = dvcView.bind(frame, 0);
  if (c.status === 'recovering' && h.view <= c.view) return c.drop(Command.DoViewChange, h.replica, Drop.Recovering);
  if (c.status === 'recovering') leaveProbing(c, h.view);
  const record = dvcRecordFromFrame(frame);
  if (typeof record === 'string') return c.dropInvalid(Command.DoViewChange, h.replica, record);
  if (h.view < c.view) return c.drop(Command.DoViewChange, h.replica, Drop.DvcOlderView);
  if (h.view > c.view) enterViewChange(c, asView(h.view));
  if (c.primaryIndex() !== c.self) return null;
  if (c.status !== 'view_change') return c.drop(Command.DoViewChange, h.replica, Drop.DvcNotInViewChange);
  if (!c.vc.dvcs.has(c.self) && (!c.journalIncomplete || c.votesBlind)) c.vc.dvcs.set(c.self, buildOwnDvc(c).record);
  if (!c.vc.dvcs.has(h.replica)) {
    c.vc.dvcs.set(h.replica, record);
    c.event('dvc', `received view ${c.view} from replica ${h.replica} (${c.vc.dvcs.size} of ${c.quorums.viewChange})`);
  }
  if (c.vc.dvcs.size >= c.quorums.viewChange && !c.vc.decided) tryMerge(c);
  return null;
}

const MERGE_MARKS: Readonly<Record<MergePath, Mark>> = {
  nack_truncation: Mark.MergeNackTruncation,
  primary_log_end: Mark.MergePrimaryLogEnd,
  unservable_truncation: Mark.MergeUnservableTruncation,
  commit_point_without_copy: Mark.MergeCommitPointWithoutCopy,
  log_end_unknown: Mark.MergeLogEndUnknown,
  committed_elsewhere: Mark.MergeCommittedElsewhere,
  older_view_adopted: Mark.MergeOlderViewAdopted,
  commit_point_from_head_chain: Mark.MergeCommitPointFromHeadChain,
  stamp_resolved: Mark.MergeStampResolved,
};

/** §5.5 on the primary-elect: merge the recorded DVCs; on Ready, park the log (§5.5 last para). */
export function tryMerge(c: Core): void {
  if (c.vc.decided || c.vc.dvcs.size < c.quorums.viewChange) return;
  const sources = [...c.vc.dvcs.values()];
  const result = merge(sources, c.n, c.quorums, { replica: c.self, commitMin: c.commitMin });
  if (result.kind !== 'ready') {
    if (result.kind === 'awaiting_repair') c.mark(Mark.MergeAwaitingRepair, `op ${result.op}`);
    if (result.kind === 'deadlocked') c.mark(Mark.MergeDeadlocked, `op ${result.op}`);
    if (result.kind === 'awaiting_intact') c.mark(Mark.MergeAwaitingIntact, `view ${c.view}`);
    c.event('merge', result.kind === 'awaiting_quorum' || result.kind === 'awaiting_intact' ? result.kind : `${result.kind} at op ${result.op}`);
    return;
  }
  if (result.opHead - result.commitMax > c.config.prepareQueueDepth) {
    c.mark(Mark.MergeRefusedPipeline, `${result.opHead - result.commitMax} ops`);
    c.event('merge', `refused: ${result.opHead - result.commitMax} uncommitted ops exceed the pipeline`);
    return;
  }
  for (const path of result.paths) c.mark(MERGE_MARKS[path], `view ${c.view} op_head=${result.opHead}`);
  c.vc.decided = true;
  // The merged headers are the canonical log of the new view: the trust anchors.
  resetTrust(c, c.commitMax);
  if (result.commitMax > c.commitMax) c.commitMax = result.commitMax;
  c.vc.parked = { ...result, sources };
  dropRequests(c, true);
  for (const h of [...result.headers, ...result.committedElsewhere]) {
    if (h.op >= c.commitMin) c.canon.set(h.op, { checksum: h.checksum, parent: h.parent, header: h.header });
  }
  c.event('merge', `ready op_head=${result.opHead} commit_max=${result.commitMax}`);
  tryFinishView(c);
}

// ---------------------------------------------------------------------------------------------
// Timers.

/** NormalHeartbeat fire: a backup (or ceded primary) suspects the primary (§5.1). */
export function onNormalHeartbeatTimeout(c: Core): void {
  if (c.status !== 'normal' || c.isActingPrimary()) {
    c.timers.normalHeartbeat.stop();
    return;
  }
  if (c.observedNewerView > c.view) {
    c.mark(Mark.ProbeNewerView, `view ${c.view} saw ${c.observedNewerView}`);
    startProbing(c);
    return;
  }
  enterViewChange(c, asView(c.view + 1));
}

export function onStartViewChangeTimeout(c: Core): void {
  if (c.status !== 'view_change' || !c.vc.sentSvc) {
    c.timers.startViewChangeMessage.stop();
    return;
  }
  broadcastGated(c, startViewChangeFrame(c));
  c.timers.startViewChangeMessage.reset();
}

export function onDoViewChangeTimeout(c: Core): void {
  const decidedHere = c.primaryIndex() === c.self && c.vc.decided;
  if (c.status !== 'view_change' || !c.vc.sentDvc || decidedHere || (c.journalIncomplete && !c.votesBlind)) {
    c.timers.doViewChangeMessage.stop();
    return;
  }
  broadcastGated(c, buildOwnDvc(c).frame);
  c.timers.doViewChangeMessage.reset();
}

/** ViewChangeStatus fire: escalate to view + 1 (§5.1: only the status timer is restarted). */
export function onViewChangeStatusTimeout(c: Core): void {
  if (c.status !== 'view_change') {
    c.timers.viewChangeStatus.stop();
    return;
  }
  c.view = asView(c.view + 1);
  c.vc = newViewChangeState();
  c.vc.sentSvc = true;
  c.vc.svcFrom = maskWith(0, c.self);
  dropRequests(c, false);
  c.timers.viewChangeStatus.start();
  c.event('view_change', `escalate to view ${c.view}`);
  broadcastGated(c, startViewChangeFrame(c));
  maybeSendDoViewChange(c);
}
