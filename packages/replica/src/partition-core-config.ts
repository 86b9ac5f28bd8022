/**
 * The partition plane's core settings a node and the simulator share (one owner, so the VOPR runs
 * what production runs): the core queues every request a node's client windows can hold, answers
 * 57 to what it drops on losing the primary role (the host answers nothing itself), and joins the
 * SendMessages queued behind a full pipeline into one prepare (group commit, consensus
 * group-commit.ts).
 */
import type { ConfigInput } from '@shoal/consensus';

/**
 * A partition primary's request queue (consensus request-queue.ts): deep enough for every client
 * window the node admits (a connection reads at most `tcp.requests_in_flight_max` requests) to
 * wait in the core itself, which answers what it cannot take as `dropped` (the host: 57).
 */
export const PARTITION_REQUEST_QUEUE_MAX = 4096;
export const PARTITION_REQUEST_QUEUE_BYTES_MAX = 64 * 1024 * 1024;

/** The defaults of `partition.group_commit_requests_max` and `partition.group_commit_bytes_max`. */
export const GROUP_COMMIT_REQUESTS_MAX = 64;
export const GROUP_COMMIT_BYTES_MAX = 1024 * 1024;
/**
 * The default of `partition.group_commit_wait_depth` (consensus config.ts `groupWaitDepth`).
 * `npm run bench -- --replicas 3 --batch 1 --in-flight 256` on 2026-12-07 (2 vCPU): depth 32 (a
 * request waited only for a full pipeline) 12,202 msg/s at 110 server CPU-s per M messages;
 * 1: 17,800; 2: 19,271 and 18,080; 4: 20,366 and 16,678; 8: 19,565; 16: 14,641. With depth 32
 * the pipeline never filled (requests reached the core a few at a time, between commits, and
 * each found a free slot): 2.9 requests per prepare. 4 keeps a few prepares in flight for
 * mid-size batches at the same throughput as 2.
 */
export const GROUP_COMMIT_WAIT_DEPTH = 4;

export interface PartitionCoreInput {
  readonly prepareQueueDepth: number;
  readonly groupRequestsMax?: number;
  readonly groupBytesMax?: number;
  readonly groupWaitDepth?: number;
}

export function partitionCoreConfig(o: PartitionCoreInput): Partial<ConfigInput> {
  return {
    prepareQueueDepth: o.prepareQueueDepth,
    requestQueueMax: Math.max(PARTITION_REQUEST_QUEUE_MAX, 2 * o.prepareQueueDepth),
    requestQueueBytesMax: PARTITION_REQUEST_QUEUE_BYTES_MAX,
    answerDroppedRequests: true,
    groupRequestsMax: o.groupRequestsMax ?? GROUP_COMMIT_REQUESTS_MAX,
    groupBytesMax: o.groupBytesMax ?? GROUP_COMMIT_BYTES_MAX,
    groupWaitDepth: Math.min(o.groupWaitDepth ?? GROUP_COMMIT_WAIT_DEPTH, o.prepareQueueDepth),
  };
}
