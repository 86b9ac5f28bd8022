/**
 * Replication round trips of one consensus group, seen from the frames its host sends and
 * receives (no hook in the core): the first Prepare of an op this replica sends starts the
 * clock; each peer's first PrepareOk for that op stops it for that peer. Prepares travel along
 * the chain (primary → successor → …) and every backup acks the primary directly, so the time
 * for the farther backup includes the hop through the nearer one. A backup forwarding a Prepare
 * records its send too but never receives a PrepareOk for it: nothing is observed there.
 *
 * Slots are a ring by op number (`op & (SLOTS - 1)`) as deep as the deepest prepare pipeline the
 * core allows (127 ops); an op whose slot a later one reused is simply not measured.
 */
import { performance } from 'node:perf_hooks';
import { Command, OFFSET_COMMAND, OFFSET_REPLICA, PREPARE_LAYOUT, PREPARE_OK_LAYOUT } from '@shoal/protocol';
import type { LatencyHistogram } from './histogram.js';
import type { Plane, ThreadMetrics } from './thread-metrics.js';

const SLOTS = 128;
const PREPARE_OP_AT = PREPARE_LAYOUT.op.offset;
const PREPARE_OK_OP_AT = PREPARE_OK_LAYOUT.op.offset;
/** Both layouts end their op before this: a shorter frame is not looked at. */
const HEADER_BYTES = 256;
/** Bits of the per-op acked mask (replica ids above it are not measured). */
const PEERS_MAX = 32;

/** The u64 at `at` (little-endian) as a number: ops stay far below 2^53. */
function opAt(frame: Uint8Array, at: number): number {
  const lo = ((frame[at] as number) | ((frame[at + 1] as number) << 8) | ((frame[at + 2] as number) << 16) | ((frame[at + 3] as number) << 24)) >>> 0;
  const hi = ((frame[at + 4] as number) | ((frame[at + 5] as number) << 8) | ((frame[at + 6] as number) << 16) | ((frame[at + 7] as number) << 24)) >>> 0;
  return hi * 0x1_0000_0000 + lo;
}

export class ReplicationTimer {
  readonly #ops = new Float64Array(SLOTS).fill(-1);
  readonly #sentAt = new Float64Array(SLOTS);
  readonly #acked = new Uint32Array(SLOTS);
  readonly #peers: (LatencyHistogram | undefined)[] = [];
  readonly #metrics: ThreadMetrics;
  readonly #plane: Plane;

  constructor(metrics: ThreadMetrics, plane: Plane) {
    this.#metrics = metrics;
    this.#plane = plane;
  }

  /** A frame this replica sends to a peer. */
  sent(frame: Uint8Array): void {
    if (frame.length < HEADER_BYTES || frame[OFFSET_COMMAND] !== Command.Prepare) return;
    const op = opAt(frame, PREPARE_OP_AT);
    const slot = op & (SLOTS - 1);
    if (this.#ops[slot] === op) return; // a retransmit: the clock runs from the first send
    this.#ops[slot] = op;
    this.#sentAt[slot] = performance.now();
    this.#acked[slot] = 0;
  }

  /** A frame from a peer for this group. */
  received(frame: Uint8Array): void {
    if (frame.length < HEADER_BYTES || frame[OFFSET_COMMAND] !== Command.PrepareOk) return;
    const peer = frame[OFFSET_REPLICA] as number;
    if (peer >= PEERS_MAX) return;
    const op = opAt(frame, PREPARE_OK_OP_AT);
    const slot = op & (SLOTS - 1);
    if (this.#ops[slot] !== op) return;
    const bit = 1 << peer;
    const acked = this.#acked[slot] as number;
    if ((acked & bit) !== 0) return;
    this.#acked[slot] = acked | bit;
    this.#histogram(peer).observeMs(performance.now() - (this.#sentAt[slot] as number));
  }

  #histogram(peer: number): LatencyHistogram {
    let histogram = this.#peers[peer];
    if (histogram === undefined) {
      histogram = this.#metrics.replicationRoundTrip.child(this.#plane, String(peer));
      this.#peers[peer] = histogram;
    }
    return histogram;
  }
}
