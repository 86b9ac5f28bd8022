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
