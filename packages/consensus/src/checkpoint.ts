/**
 * Journal capacity: metadata checkpoints (§9.1) and the partition retention window (§6.2).
 *
 * Metadata: before an append, when at most `checkpointMargin` slots remain, checkpoint at
 * commit_min: the host snapshots the state machine and client table (effect `checkpoint`), the
 * core records the pairing in the superblock, and once that is durable the journal drains every
 * op below the snapshot op (the entry AT the snapshot op stays: pitfall 8).
 *
 * Partition: committed entries are kept for repair serving up to `evictedRingCapacity` entries
 * and `evictedRingBytesMax` bytes; the oldest committed ones go first, never the commit point.
 */
import type { Core } from './core.js';
import { requestSuperblockWrite } from './superblock.js';
import type { Op } from './types.js';

export function journalHasRoom(c: Core, op: Op): boolean {
  if (!c.plane.checkpoints) return true;
  return op - c.journal.watermark <= c.config.journalSlots;
}

export function maybeCheckpoint(c: Core): void {
  if (!c.plane.checkpoints) return;
  if (c.checkpointInFlight !== null || c.checkpointPending !== null) return;
  const used = Math.max(c.op, c.journal.head) - c.journal.watermark;
  const remaining = c.config.journalSlots - used;
  if (remaining > c.config.checkpointMargin) return;
  if (c.commitMin <= c.sb.checkpointOp || c.transferring()) return;
  c.checkpointWanted = true;
}

/**
 * Emits the checkpoint request at the very end of an entry point, so the state machine the host
 * snapshots is exactly at commit_min (no apply can follow within the same call).
 */
export function emitCheckpoint(c: Core): void {
  if (!c.checkpointWanted) return;
  c.checkpointWanted = false;
  if (c.checkpointInFlight !== null || c.checkpointPending !== null) return;
  if (c.commitMin <= c.sb.checkpointOp || c.transferring()) return;
  c.checkpointInFlight = c.commitMin;
  c.effects.push({ kind: 'checkpoint', op: c.commitMin });
}

export function onCheckpointDone(c: Core, op: Op, checksum: bigint, ok: boolean): void {
  if (c.checkpointInFlight !== op) {
    c.event('checkpoint_stale_completion', `op=${op}`);
    return;
  }
  c.checkpointInFlight = null;
  if (!ok) {
    c.event('checkpoint_failed', `op=${op}`);
    return;
  }
  if (op <= c.sb.checkpointOp) return;
  c.sb.checkpointOp = op;
  c.sb.checkpointChecksum = checksum;
  c.checkpointPending = { op, checksum };
  requestSuperblockWrite(c);
}

export function retainPartitionJournal(c: Core): void {
  if (c.plane.checkpoints) return;
  const j = c.journal;
  let floor = j.watermark;
  // Committed entries beyond the caps are evicted oldest first; the commit point stays.
  while (floor + 1 < c.commitMin) {
    const committedKept = c.commitMin - floor;
    if (committedKept <= c.config.evictedRingCapacity && j.bytes <= c.config.evictedRingBytesMax) break;
    floor += 1;
    j.compactThrough(floor);
  }
}
