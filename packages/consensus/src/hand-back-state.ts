/**
 * The state of a leadership hand-back (hand-back.ts): what the primary learned of each backup's
 * progress in this view, and a hand-back in progress. Reads and updates only, no transitions, so
 * that the pipeline (commit.ts) and the ack path (prepare.ts) can consult it without importing
 * the view change.
 */
import type { Op, View } from './types.js';

/** The last PrepareOk the primary counted from one replica: its view, highest op, and when. */
export interface AckProgress {
  view: number;
  op: Op;
  /** The primary's tick count (`Core.steps`) when it counted the latest one. */
  step: number;
}

/** A hand-back in progress: in view `from`, the pipeline drains, then the primary enters `to`. */
export interface HandBack {
  readonly from: View;
  readonly to: View;
  /** Ticks spent draining (bounded: hand-back.ts HAND_BACK_DRAIN_TICKS_MAX). */
  ticks: number;
}

export function newAckProgress(replicaCount: number): AckProgress[] {
  return Array.from({ length: replicaCount }, () => ({ view: -1, op: 0, step: -1 }));
}

/** A PrepareOk from `replica` for `op` in `view` was counted at tick `step`. */
export function noteAck(acks: readonly AckProgress[], replica: number, view: number, op: Op, step: number): void {
  const progress = acks[replica];
  if (progress === undefined) return;
  progress.step = step;
  if (progress.view !== view) {
    progress.view = view;
    progress.op = op;
  } else if (op > progress.op) {
    progress.op = op;
  }
}

/** True while a hand-back of view `view` drains: new requests wait in the request queue. */
export function handBackDraining(handBack: HandBack | null, view: View): boolean {
  return handBack !== null && handBack.from === view;
}
