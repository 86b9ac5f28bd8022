/** State-transfer bookkeeping (requester session, decode budgets, served offers). */
import type { ManifestEntry } from '@shoal/protocol';
import type { Op, ReplicaIndex, TransferStage } from './types.js';

export interface TransferSession {
  readonly nonce: bigint;
  readonly peer: ReplicaIndex;
  manifest: readonly ManifestEntry[] | null;
  commitOp: Op;
  commitMax: Op;
  /** The accepted snapshot op (metadata: METADATA_SNAPSHOT frontier; partition: commit_op). */
  snapshotOp: Op;
  /** Bytes received per artifact. */
  received: number[];
  idleTicks: number;
  stalledRounds: number;
}

export interface TransferState {
  stage: TransferStage;
  session: TransferSession | null;
  /**
   * Decode/verify failures per source and snapshot op (`decodeKey`; keyed on the real snapshot
   * op, §13.20). Per source too: the bytes are the source's own files, and one source with a
   * damaged segment must not get the same snapshot op refused from the others (seed 1023442 of 3).
   */
  readonly decodeFailures: Map<string, number>;
  /** Ops at or below this do not mutate the client table again (ICT2 install frontier, §6.8). */
  tableFrontier: Op;
  /** Ticks before a RangeEvicted may arm another transfer (after a refusal or abandon). */
  cooldown: number;
  /** Turn of the journal-repair source after a damaged source's transfer (`fallbackSource`). */
  fallbackTurn: number;
}

/** The decode budget's key: one source's artifacts for one snapshot op. */
export function decodeKey(peer: ReplicaIndex, snapshotOp: Op): string {
  return `${peer}:${snapshotOp}`;
}

export function newTransferState(): TransferState {
  return { stage: 'idle', session: null, decodeFailures: new Map(), tableFrontier: 0, cooldown: 0, fallbackTurn: 0 };
}

export interface ServedOffer {
  readonly requester: ReplicaIndex;
  readonly nonce: bigint;
  state: 'building' | 'ready';
  entries: readonly ManifestEntry[];
  readonly commitOp: Op;
  manifest: Uint8Array;
  idleTicks: number;
  lastByteServed: boolean;
}
