/**
 * Commit latency of one plane on its owner thread (`shoal_commit_duration_seconds`): from the
 * request being recorded in the RequestLedger and handed to the consensus core, to the core's
 * reply for it. Only replies of committed ops count (a reply header's `op` is the committed op;
 * a pre-commit answer such as 57 while the replica catches up carries op 0, an eviction is no
 * reply): prepare, replication to a quorum, durability and apply, plus any wait in the core's
 * request queue.
 */
import { performance } from 'node:perf_hooks';
import { ClientCommand, COMMAND_OFFSET, FRAME_HEADER_SIZE, REPLY_HEADER } from '@shoal/protocol';
import type { LatencyHistogram } from './histogram.js';
import type { Plane, ThreadMetrics } from './thread-metrics.js';

const OP_AT = REPLY_HEADER.op.offset;

/** A Reply frame whose header names a committed op (op ≠ 0). */
export function isCommittedReply(frame: Uint8Array): boolean {
  if (frame.length < FRAME_HEADER_SIZE || frame[COMMAND_OFFSET] !== ClientCommand.Reply) return false;
  for (let i = OP_AT; i < OP_AT + 8; i++) if (frame[i] !== 0) return true;
  return false;
}

export class CommitTimer {
  readonly #histogram: LatencyHistogram;

  constructor(metrics: ThreadMetrics, plane: Plane) {
    this.#histogram = metrics.commitDuration.child(plane);
  }

  /** A reply the ledger matched to a request recorded at `recordedMs`. */
  replied(frame: Uint8Array, recordedMs: number): void {
    if (recordedMs > 0 && isCommittedReply(frame)) this.#histogram.observeMs(performance.now() - recordedMs);
  }
}
