/**
 * View change (§5.1–§5.5): entering a view change, StartViewChange and DoViewChange handling, the
 * view-change timers, and running the merge on the new primary.
 *
 *   suspect ─▶ SVC(v) ─▶ f SVCs from others ─▶ DVC(v) broadcast ─▶ primary of v: quorum of DVCs
 *                                                                  ─▶ merge ─▶ park ─▶ start view
 */
import { DoViewChangeHeaderView, StartViewChangeHeaderView } from '@shoal/protocol';
import type { Core } from './core.js';
import { buildOwnDvc } from './dvc-suffix.js';
import { cancelAwaiter } from './forwarding.js';
import { startViewChangeFrame } from './frames.js';
import { merge } from './merge.js';
import { countBits, maskWith } from './quorums.js';
import { broadcastGated } from './send.js';
import { tryFinishView } from './start-view.js';
import { startProbing } from './probe.js';
import { resetTrust } from './trust.js';
import { asView, type View } from './types.js';
import { dvcRecordFromFrame, newViewChangeState } from './view-change-state.js';

/** Cancels every in-process awaiter and drops the request queue (§5.1). */
export function dropRequests(c: Core, alsoPrepares: boolean): void {
  for (const q of c.pipeline.clearRequests()) if (q.awaiter !== null) cancelAwaiter(c, q.awaiter, 'canceled', q.client);
  for (const p of c.pipeline.entries()) {
    if (p.awaiter === null) continue;
    cancelAwaiter(c, p.awaiter, 'canceled', p.client);
    p.awaiter = null;
  }
  if (alsoPrepares) c.pipeline.clear();
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

const svcView = new StartViewChangeHeaderView();

export function onStartViewChange(c: Core, frame: Uint8Array): string | null {
  const h = svcView.bind(frame, 0);
  if (c.status === 'recovering') return c.drop(10, h.replica, 'recovering');
  if (h.view < c.view) return c.drop(10, h.replica, 'svc_older_view');
  if (h.view > c.view) enterViewChange(c, asView(h.view));
  else if (c.status !== 'view_change') return c.drop(10, h.replica, 'svc_current_view_not_in_view_change'); // §13.7
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
  if (c.journalIncomplete && !c.votesBlind) return;
  const own = buildOwnDvc(c);
  c.vc.sentDvc = true;
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
  if (c.status === 'recovering') return c.drop(11, h.replica, 'recovering');
  const record = dvcRecordFromFrame(frame);
  if (typeof record === 'string') return c.drop(11, h.replica, record);
  if (h.view < c.view) return c.drop(11, h.replica, 'dvc_older_view');
  if (h.view > c.view) enterViewChange(c, asView(h.view));
  if (c.primaryIndex() !== c.self) return null;
  if (c.status !== 'view_change') return c.drop(11, h.replica, 'dvc_not_in_view_change');
  if (!c.vc.dvcs.has(c.self) && (!c.journalIncomplete || c.votesBlind)) c.vc.dvcs.set(c.self, buildOwnDvc(c).record);
  if (!c.vc.dvcs.has(h.replica)) c.vc.dvcs.set(h.replica, record);
  if (c.vc.dvcs.size >= c.quorums.viewChange && !c.vc.decided) tryMerge(c);
  return null;
}

/** §5.5 on the primary-elect: merge the recorded DVCs; on Ready, park the log (§5.5 last para). */
export function tryMerge(c: Core): void {
  if (c.vc.decided || c.vc.dvcs.size < c.quorums.viewChange) return;
  const sources = [...c.vc.dvcs.values()];
  const result = merge(sources, c.n, c.quorums);
  if (result.kind !== 'ready') {
    c.event('merge', result.kind === 'awaiting_quorum' ? result.kind : `${result.kind} at op ${result.op}`);
    return;
  }
  if (result.opHead - result.commitMax > c.config.prepareQueueDepth) {
    c.event('merge', `refused: ${result.opHead - result.commitMax} uncommitted ops exceed the pipeline`);
    return;
  }
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
