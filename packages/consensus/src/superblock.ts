/**
 * The durable-before-send gate's write side (§4.14, §9.2): the core records which (view, log_view)
 * the superblock durably holds, asks for a write whenever the current pair (or the checkpoint
 * pairing) is not durable, retries failed writes with backoff 10 ms × 2^min(failures, 8) capped at
 * 1 s, and (metadata only) asks to exit after too many consecutive failures.
 *
 * At most one write is in flight; its completion names the state it wrote.
 */
import { assert } from '@shoal/stdx';
import type { Core } from './core.js';
import type { DurableVsrState } from './effects.js';
import { Mark } from './marks.js';
import { flushOutbox } from './send.js';

function wanted(c: Core): DurableVsrState {
  return {
    view: c.view,
    logView: c.logView,
    // Never below what was recorded: a restart resets commit_max to what replay confirms, and the
    // recorded one bounds what a DoViewChange shows (dvc-suffix.ts `reportedCommit`).
    commitMax: Math.max(c.commitMax, c.sb.durable?.commitMax ?? 0),
    checkpointOp: c.sb.checkpointOp,
    checkpointChecksum: c.sb.checkpointChecksum,
    logHead: c.sb.logHead,
  };
}

function durableCovers(c: Core): boolean {
  const d = c.sb.durable;
  if (d === null) return false;
  return d.view === c.view && d.logView === c.logView && d.logHead === c.sb.logHead && d.checkpointOp === c.sb.checkpointOp && d.checkpointChecksum === c.sb.checkpointChecksum;
}

/** Emits a superblock write when one is needed and allowed. Called at the end of every entry point. */
export function ensureSuperblock(c: Core): void {
  if (c.sb.inflight !== null || c.sb.retryCountdown > 0) return;
  if (durableCovers(c)) return;
  const state = wanted(c);
  c.sb.inflight = state;
  c.effects.push({ kind: 'superblock_write', state });
}

/** Forces a write of the current state even when covered (checkpoint, install). */
export function requestSuperblockWrite(c: Core): void {
  if (c.sb.inflight !== null || c.sb.retryCountdown > 0) return;
  const state = wanted(c);
  c.sb.inflight = state;
  c.effects.push({ kind: 'superblock_write', state });
}

export function onSuperblockWritten(c: Core, state: DurableVsrState, ok: boolean): void {
  const inflight = c.sb.inflight;
  assert(inflight !== null, 'superblock completion without a write in flight');
  assert(
    inflight.view === state.view && inflight.logView === state.logView && inflight.checkpointOp === state.checkpointOp,
    'superblock completion does not match the write in flight',
  );
  c.sb.inflight = null;
  if (!ok) {
    c.sb.failures += 1;
    c.sb.retryCountdown = Math.min(2 ** Math.min(c.sb.failures, 8), 100);
    c.mark(Mark.SuperblockWriteFailed, `failures=${c.sb.failures}`);
    const max = c.config.superblockWedgedAttemptsMax;
    if (c.plane.kind === 'metadata' && max > 0 && c.sb.failures >= max) c.fatal('superblock_wedged');
    return;
  }
  c.sb.failures = 0;
  // Views never go back: a stale completion (an older view) still records what is durable.
  const prev = c.sb.durable;
  assert(prev === null || state.view >= prev.view, 'superblock: durable view regressed');
  c.sb.durable = inflight;
  onCheckpointRecorded(c, inflight);
  flushOutbox(c);
}

/** After a superblock holding a new checkpoint pairing is durable, drain the journal below it. */
function onCheckpointRecorded(c: Core, state: DurableVsrState): void {
  const pending = c.checkpointPending;
  if (pending === null || state.checkpointOp !== pending.op) return;
  c.checkpointPending = null;
  // §9.1 step 3: drain ops < snapshot_op (the entry at the commit point stays servable, pitfall 8).
  if (c.plane.checkpoints) c.effects.push({ kind: 'journal_drain', beforeOp: pending.op });
  c.journal.compactThrough(pending.op - 1);
}

export function tickSuperblock(c: Core): void {
  if (c.sb.retryCountdown > 0) c.sb.retryCountdown -= 1;
}
