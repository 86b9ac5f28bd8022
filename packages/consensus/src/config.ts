/**
 * Core limits and timer intervals, in one object, checked at construction (style habit 9).
 * Durations are ticks of 10 ms (§4.2). Defaults follow §11.
 */
import { assert } from '@shoal/stdx';
import { HEADER_SIZE } from '@shoal/protocol';
import { PREPARE_QUEUE_DEPTH_MAX, REPLICAS_MAX } from './types.js';

export interface TimerTicks {
  /** Prepare retransmit base (250 ms). */
  readonly prepare: number;
  /** Commit heartbeat broadcast (500 ms). */
  readonly commitMessage: number;
  /** Backup's primary-liveness window (5 s). */
  readonly normalHeartbeat: number;
  /** StartViewChange / DoViewChange retransmit (500 ms). */
  readonly viewChangeRetransmit: number;
  /** Escalation backstop while in view change (5 s). */
  readonly viewChangeStatus: number;
  /** RequestStartView probe period (1 s). */
  readonly requestStartView: number;
  /** Repair / transfer stall retry (1 s). */
  readonly repairRetry: number;
  /** Origin-side session-forwarding deadline (5 s). */
  readonly forwardTimeout: number;
}

export interface ConsensusConfig {
  /** Cluster id (header bytes 32..48). */
  readonly cluster: bigint;
  /** This replica's index. */
  readonly replica: number;
  readonly replicaCount: number;
  /** In-flight prepares (1..127). */
  readonly prepareQueueDepth: number;
  /**
   * Requests parked for a prepare slot (request-queue.ts), by count (default 2 × depth, the
   * reference) and by body bytes (default: no bound beyond the count).
   */
  readonly requestQueueMax: number;
  readonly requestQueueBytesMax: number;
  /**
   * Group commit (group-commit.ts): at most this many queued requests joined into one prepare
   * (1 = off, the metadata plane), with at most `groupBytesMax` request body bytes in all.
   */
  readonly groupRequestsMax: number;
  readonly groupBytesMax: number;
  /**
   * Group commit's wait depth: while fewer ops than this are in the pipeline, a request is
   * proposed at once (no added latency); from this depth on, a joinable request waits in the
   * request queue for a commit to free a slot below it, unless the group it heads is already
   * closed (`groupRequestsMax` requests, `groupBytesMax` bytes, or a request behind it that it
   * cannot join). Without it requests that reach the core a few at a time, between commits, each
   * find a free slot in a deep pipeline that never fills, and nearly every request is its own
   * prepare. `prepareQueueDepth` (the default): requests wait only for a full pipeline.
   */
  readonly groupWaitDepth: number;
  /**
   * A primary that drops client requests it had not committed (§5.1: a view change, probing)
   * answers each one 57 itself (`answers.ts answerDropped`) instead of leaving it to the host.
   * On for the runtime's partition plane; off by default (the metadata worker and the
   * simulator's hosts answer from their own books).
   */
  readonly answerDroppedRequests: boolean;
  /** Metadata journal slots (WAL index capacity). */
  readonly journalSlots: number;
  /** Checkpoint when fewer than this many slots remain (default max(64, depth)). */
  readonly checkpointMargin: number;
  /** Client-table capacity (metadata). */
  readonly clientsTableMax: number;
  /** Partition: committed entries kept for repair serving, by count and bytes. */
  readonly evictedRingCapacity: number;
  readonly evictedRingBytesMax: number;
  /** Prepares per repair round (must stay below the peer queue capacity). */
  readonly repairChunkMax: number;
  /** Largest frame, header included. */
  readonly messageSizeMax: number;
  /** State-transfer chunk cap: clamp(messageSizeMax - 256, 1, 256 KiB). */
  readonly stateChunkMax: number;
  readonly ticks: TimerTicks;
  /** Probe-timer fires before electing (the Nth fire elects, N-1 probes are sent). */
  readonly viewProbeAttemptsMax: number;
  /** Consecutive failed superblock writes before the metadata core asks to exit (0 = never). */
  readonly superblockWedgedAttemptsMax: number;
  /** Bound on effects produced by one entry point (overflow is a host bug: assertion). */
  readonly effectsCapacity: number;
  /** Run the O(journal) invariant checks after every entry point (tests). */
  readonly deepInvariants: boolean;
}

export const DEFAULT_TICKS: TimerTicks = Object.freeze({
  prepare: 25,
  commitMessage: 50,
  normalHeartbeat: 500,
  viewChangeRetransmit: 50,
  viewChangeStatus: 500,
  requestStartView: 100,
  repairRetry: 100,
  forwardTimeout: 500,
});

export type ConfigInput = Partial<Omit<ConsensusConfig, 'ticks'>> & {
  readonly cluster: bigint;
  readonly replica: number;
  readonly replicaCount: number;
  readonly ticks?: Partial<TimerTicks>;
};

/** Fills defaults (§11) and checks every limit; a bad value is a boot error (assert). */
export function makeConfig(input: ConfigInput): ConsensusConfig {
  const depth = input.prepareQueueDepth ?? 32;
  const messageSizeMax = input.messageSizeMax ?? 64 * 1024 * 1024;
  const config: ConsensusConfig = {
    prepareQueueDepth: depth,
    requestQueueMax: 2 * depth,
    requestQueueBytesMax: Number.MAX_SAFE_INTEGER,
    groupRequestsMax: 1,
    answerDroppedRequests: false,
    groupBytesMax: messageSizeMax - HEADER_SIZE,
    groupWaitDepth: depth,
    journalSlots: 1024,
    checkpointMargin: Math.max(64, depth),
    clientsTableMax: 8192,
    evictedRingCapacity: 4096,
    evictedRingBytesMax: 16 * 1024 * 1024,
    repairChunkMax: 128,
    messageSizeMax,
    stateChunkMax: Math.min(Math.max(messageSizeMax - HEADER_SIZE, 1), 256 * 1024),
    viewProbeAttemptsMax: 5,
    superblockWedgedAttemptsMax: 120,
    effectsCapacity: 16384,
    deepInvariants: false,
    ...input,
    ticks: Object.freeze({ ...DEFAULT_TICKS, ...input.ticks }),
  };
  checkConfig(config);
  return Object.freeze(config);
}

function positiveInt(value: number, name: string): void {
  assert(Number.isInteger(value) && value > 0, `config ${name} must be a positive integer, got ${value}`);
}

export function checkConfig(c: ConsensusConfig): void {
  assert(c.cluster >= 0n && c.cluster < 1n << 128n, 'config cluster must be a u128');
  positiveInt(c.replicaCount, 'replicaCount');
  // §4.9 / §13.22: the reference sizes view-change state for 32 replicas; refuse larger rosters.
  assert(c.replicaCount <= REPLICAS_MAX, `roster of ${c.replicaCount} exceeds ${REPLICAS_MAX} replicas`);
  assert(Number.isInteger(c.replica) && c.replica >= 0 && c.replica < c.replicaCount, 'config replica out of range');
  positiveInt(c.prepareQueueDepth, 'prepareQueueDepth');
  assert(c.prepareQueueDepth <= PREPARE_QUEUE_DEPTH_MAX, 'prepareQueueDepth must be <= 127');
  positiveInt(c.requestQueueMax, 'requestQueueMax');
  positiveInt(c.requestQueueBytesMax, 'requestQueueBytesMax');
  positiveInt(c.groupRequestsMax, 'groupRequestsMax');
  positiveInt(c.groupBytesMax, 'groupBytesMax');
  positiveInt(c.groupWaitDepth, 'groupWaitDepth');
  assert(c.groupWaitDepth <= c.prepareQueueDepth, 'groupWaitDepth must not exceed prepareQueueDepth');
  assert(c.groupBytesMax <= c.messageSizeMax - HEADER_SIZE, 'groupBytesMax must leave room for the prepare header within messageSizeMax');
  positiveInt(c.journalSlots, 'journalSlots');
  positiveInt(c.checkpointMargin, 'checkpointMargin');
  assert(c.checkpointMargin >= c.prepareQueueDepth, 'checkpointMargin must cover the pipeline');
  assert(c.journalSlots >= 4 * c.checkpointMargin, 'journalSlots must be >= 4 x checkpointMargin');
  assert(Number.isInteger(c.clientsTableMax) && c.clientsTableMax >= 2 && c.clientsTableMax <= 65536, 'clientsTableMax 2..65536');
  positiveInt(c.evictedRingCapacity, 'evictedRingCapacity');
  positiveInt(c.evictedRingBytesMax, 'evictedRingBytesMax');
  assert(Number.isInteger(c.repairChunkMax) && c.repairChunkMax >= 1 && c.repairChunkMax <= 1024, 'repairChunkMax 1..1024');
  assert(Number.isInteger(c.messageSizeMax) && c.messageSizeMax > HEADER_SIZE, 'messageSizeMax must exceed the header size');
  positiveInt(c.stateChunkMax, 'stateChunkMax');
  for (const [name, value] of Object.entries(c.ticks)) positiveInt(value, `ticks.${name}`);
  assert(Number.isInteger(c.viewProbeAttemptsMax) && c.viewProbeAttemptsMax >= 1 && c.viewProbeAttemptsMax <= 100, 'viewProbeAttemptsMax 1..100');
  assert(Number.isInteger(c.superblockWedgedAttemptsMax) && c.superblockWedgedAttemptsMax >= 0, 'superblockWedgedAttemptsMax');
  positiveInt(c.effectsCapacity, 'effectsCapacity');
}
