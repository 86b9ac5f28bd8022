/**
 * Leadership hand-back (docs/cluster.md "Balanced leadership"): a partition group's acting
 * primary gives the group back to the replica that should lead it (the host names it; on the
 * partition plane `leadership.ts`'s preferred replica) once that replica is back and caught up.
 *
 *   host: handBack(target) ─▶ canHandBack? ─▶ drain: new requests wait in the request queue
 *         ─▶ pipeline empty (or HAND_BACK_DRAIN_TICKS_MAX ticks) ─▶ enterViewChange(v')
 *
 * v' is the first view above the current one that `target` leads (`v' % n === target`). No new
 * message and no wire byte: the primary sends StartViewChange(v') as any replica that suspects
 * its primary does, the backups join (a higher-view SVC), and the view change runs as always, so
 * its safety is the view change's. Draining first keeps a hand-back from answering 57 to writes
 * in flight: the parked requests never entered a pipeline and are answered as any request queue
 * dropped by a view change.
 *
 * "Caught up": the target's last PrepareOk counted in this view is within one pipeline of
 * commit_max, so the new primary needs at most a pipeline's worth of repair, and it is at most
 * HAND_BACK_ACK_FRESH_TICKS old, so the target is alive now. Without the age bound a target
 * killed while the group was quiet still looked caught up (its last ack stays within a pipeline
 * of a commit point that no longer moves), and the group was handed to a dead replica: the
 * writes stalled for a whole view-change timeout (the nemesis's restart-then-kill episodes, up
 * to 8 s). A group with no write for that long has no such evidence and is not handed back until
 * it sees writes again; the check is repeated when the drain ends.
 */
import { promoteRequests } from './commit.js';
import type { Core } from './core.js';
import { Mark } from './marks.js';
import { asView, type ReplicaIndex, type View } from './types.js';
import { enterViewChange } from './view-change.js';

/** A drain longer than this (ticks: 1 s at 10 ms) gives up waiting; the in-flight writes get 57. */
export const HAND_BACK_DRAIN_TICKS_MAX = 100;

/** The oldest PrepareOk (ticks: 1 s at 10 ms) that still shows the target alive. */
export const HAND_BACK_ACK_FRESH_TICKS = 100;

/** True when this replica, the group's acting primary, could hand the group to `target` now. */
export function canHandBack(c: Core, target: number): boolean {
  if (!Number.isInteger(target) || target < 0 || target >= c.n || target === c.self) return false;
  if (!c.isActingPrimary() || c.transferring() || c.handBack !== null) return false;
  if (c.commitMin !== c.commitMax || c.commitMax < c.recoveryBarrier || c.commitMax === 0) return false;
  return targetCaughtUp(c, target);
}

/** The target acked in this view, within one pipeline of commit_max, and recently (see above). */
function targetCaughtUp(c: Core, target: number): boolean {
  const progress = c.acks[target];
  return progress !== undefined && progress.view === c.view && progress.op + c.config.prepareQueueDepth >= c.commitMax
    && c.steps - progress.step <= HAND_BACK_ACK_FRESH_TICKS;
}

/** The first view above the current one that `target` leads. */
export function handBackView(c: Core, target: ReplicaIndex): View {
  const next = c.view + 1;
  return asView(next + ((target - (next % c.n) + c.n) % c.n));
}

/** Starts a hand-back to `target` (true), or refuses (`canHandBack` false). */
export function startHandBack(c: Core, target: number): boolean {
  if (!canHandBack(c, target)) return false;
  const to = handBackView(c, target as ReplicaIndex);
  c.handBack = { from: c.view, to, ticks: 0 };
  c.mark(Mark.HandBackStarted, `view ${c.view} to view ${to} (replica ${target})`);
  finishHandBack(c);
  return true;
}

/** Every tick: a draining hand-back enters its view once the pipeline is empty (or the drain bound passed). */
export function tickHandBack(c: Core): void {
  const handBack = c.handBack;
  if (handBack === null) return;
  handBack.ticks += 1;
  finishHandBack(c);
}

function finishHandBack(c: Core): void {
  const handBack = c.handBack;
  if (handBack === null) return;
  if (handBack.from !== c.view || !c.isActingPrimary()) {
    c.handBack = null; // the view moved on by itself
    return;
  }
  if (!c.pipeline.empty && handBack.ticks < HAND_BACK_DRAIN_TICKS_MAX) return;
  c.handBack = null;
  const target = c.primaryIndex(handBack.to);
  if (!targetCaughtUp(c, target)) {
    // It went quiet while the pipeline drained: keep leading; the parked requests go on here.
    c.event('view_change', `hand back to replica ${target} called off: no ack for ${HAND_BACK_ACK_FRESH_TICKS} ticks`);
    promoteRequests(c);
    return;
  }
  if (!c.pipeline.empty) c.mark(Mark.HandBackDrainBounded, `view ${c.view}: ${c.pipeline.length} prepares in flight`);
  c.event('view_change', `hand back: view ${handBack.from} to view ${handBack.to} (replica ${c.primaryIndex(handBack.to)})`);
  enterViewChange(c, handBack.to);
}
