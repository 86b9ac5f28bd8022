/** The requester's journal-repair session (driven by repair.ts) and session nonces. */
import type { Prng } from '@shoal/stdx';
import type { Op, ReplicaIndex } from './types.js';

export interface RepairSession {
  readonly nonce: bigint;
  readonly peer: ReplicaIndex;
  toOp: Op;
  idleTicks: number;
  /** True for the primary-elect's pull toward its merged log (§5.6 step 3). */
  readonly forElect: boolean;
}

/** A non-zero u128 nonce for a repair or state-transfer session. */
export function newNonce(prng: Prng): bigint {
  let nonce = prng.u128();
  if (nonce === 0n) nonce = 1n;
  return nonce;
}
