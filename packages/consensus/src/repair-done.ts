/**
 * What a repair round's answer leads to (§6.1, §6.2): a RepairDone re-runs the primary-elect's
 * coverage or walks the backup's commits and asks for what is still missing; a RangeEvicted
 * rotates the primary-elect's body source or turns a backup's repair into a state transfer.
 */
import { Command, RepairResponseHeaderView } from '@shoal/protocol';
import { commitWalk } from './commit.js';
import type { Core } from './core.js';
import { Drop } from './drops.js';
import { Mark } from './marks.js';
import { firstMissing, request } from './repair.js';
import { startTransfer, transferTarget } from './state-transfer.js';
import { tryFinishView } from './start-view.js';
import { verify } from './trust.js';
import type { ReplicaIndex } from './types.js';

/**
 * A backup holds every op up to commit_max but cannot verify the next one: no anchor reaches it
 * (a journal restored at boot whose primary no longer holds, nor knows the checksum of, its commit
 * point, e.g. after its own install). Repair has nothing to fetch, so the walk would wait forever:
 * after one repair interval it installs the primary's state instead.
 */
export function tickUnverifiable(c: Core): void {
  const stuck = c.status === 'normal' && !c.isPrimaryByIndex() && !c.transferring() && c.repair === null
    && c.commitMin < c.commitMax && firstMissing(c, c.commitMax) === null && verify(c, c.commitMin + 1).verdict === 'unverified';
  if (!stuck) {
    c.unverifiableTicks = 0;
    return;
  }
  c.unverifiableTicks += 1;
  if (c.unverifiableTicks < c.config.ticks.repairRetry || c.transfer.cooldown > 0) return;
  c.unverifiableTicks = 0;
  c.mark(Mark.RepairUnverifiable, `op ${c.commitMin + 1} of ${c.commitMax}`);
  startTransfer(c, transferTarget(c, c.primaryIndex() as ReplicaIndex));
}

const responseView = new RepairResponseHeaderView();

export function onRepairDone(c: Core, frame: Uint8Array): string | null {
  const h = responseView.bind(frame, 0);
  const s = c.repair;
  if (s === null || h.nonce !== s.nonce) return c.drop(Command.RepairDone, h.replica, Drop.RepairNonceMismatch);
  if (s.forElect) {
    // Re-run coverage: it starts the view, or asks for what is still missing.
    c.repair = null;
    tryFinishView(c);
    return null;
  }
  const before = c.commitMin;
  commitWalk(c);
  if (c.commitMin >= s.toOp) {
    c.repair = null;
    return null;
  }
  const from = firstMissing(c, s.toOp);
  if (from === null) {
    c.repair = null; // everything is held; what remains waits for an anchor
    return null;
  }
  if (c.commitMin > before || from > h.opNumber) request(c, s, from);
  return null;
}

export function onRangeEvicted(c: Core, frame: Uint8Array): string | null {
  const h = responseView.bind(frame, 0);
  const s = c.repair;
  if (s === null || h.nonce !== s.nonce) return c.drop(Command.RangeEvicted, h.replica, Drop.RepairNonceMismatch);
  const peer = s.peer;
  c.repair = null;
  if (s.forElect) {
    c.vc.repairAttempts += 1;
    c.mark(Mark.ElectSourceRotated, `evicted ${peer}`);
    c.event('repair', `elect source ${peer} evicted below op ${h.opNumber}; rotating`);
    return null;
  }
  if (c.transfer.stage !== 'idle') return null;
  if (c.transfer.cooldown > 0) return null; // a transfer was just refused: the stall retry re-asks later
  const target = transferTarget(c, peer);
  c.mark(Mark.RepairRangeEvicted, `below ${h.opNumber}`);
  c.event('repair', `range evicted below op ${h.opNumber} at ${peer}: state transfer from ${target}`);
  startTransfer(c, target);
  return null;
}
