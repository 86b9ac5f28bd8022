/** The superblock bookkeeping of the durable-before-send gate (written by superblock.ts). */
import type { DurableVsrState } from './effects.js';
import type { Op } from './types.js';

export interface SuperblockState {
  /** What the superblock durably holds (null: nothing written yet this life and nothing restored). */
  durable: DurableVsrState | null;
  inflight: DurableVsrState | null;
  failures: number;
  /** Ticks until a failed write may be retried. */
  retryCountdown: number;
  /** The checkpoint pairing to record with the next write. */
  checkpointOp: Op;
  checkpointChecksum: bigint;
  /** The head of the current log view's log as installed (persisted with it: DurableVsrState.logHead). */
  logHead: Op;
}

export function newSuperblockState(): SuperblockState {
  return { durable: null, inflight: null, failures: 0, retryCountdown: 0, checkpointOp: 0, checkpointChecksum: 0n, logHead: 0 };
}
