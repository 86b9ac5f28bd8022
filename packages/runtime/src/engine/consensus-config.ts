/**
 * The consensus core's limits and timers for each plane, from the node configuration (one
 * config, checked at boot: docs/configuration.md). Durations are already resolved to 10 ms
 * ticks by the config loader.
 */
import type { ConfigInput } from '@shoal/consensus';
import { clusterIdFromName } from '@shoal/protocol';
import type { ShoalConfig } from '../config/index.js';

function common(config: ShoalConfig): ConfigInput {
  const c = config.cluster;
  return {
    cluster: clusterIdFromName(c.name),
    replica: config.node.replicaId,
    replicaCount: config.node.replicaCount,
    messageSizeMax: config.messageBus.maxMessageSizeBytes,
    repairChunkMax: c.repairChunkMax,
    viewProbeAttemptsMax: c.viewProbeAttemptsMax,
    ticks: {
      prepare: c.prepareRetransmitIntervalTicks,
      commitMessage: c.commitBroadcastIntervalTicks,
      normalHeartbeat: c.heartbeatTimeoutTicks,
      viewChangeRetransmit: c.viewChangeRetransmitIntervalTicks,
      viewChangeStatus: c.viewChangeStatusTimeoutTicks,
      requestStartView: c.requestStartViewRetransmitIntervalTicks,
      repairRetry: c.repairRetryIntervalTicks,
    },
  };
}

export function metadataConsensusConfig(config: ShoalConfig): ConfigInput {
  return {
    ...common(config),
    prepareQueueDepth: config.metadata.prepareQueueDepth,
    journalSlots: config.metadata.journalSlots,
    clientsTableMax: config.metadata.clientsTableMax,
    superblockWedgedAttemptsMax: config.cluster.superblockWedgedFatalWrites,
  };
}

/**
 * A partition primary's request queue (consensus request-queue.ts): deep enough for every client
 * window the node admits (a connection reads at most `tcp.requests_in_flight_max` requests) to
 * wait in the core itself, which answers what it cannot take as `dropped` (the host: 57).
 */
export const PARTITION_REQUEST_QUEUE_MAX = 4096;
export const PARTITION_REQUEST_QUEUE_BYTES_MAX = 64 * 1024 * 1024;

export function partitionConsensusConfig(config: ShoalConfig): ConfigInput {
  return {
    ...common(config),
    prepareQueueDepth: config.partition.prepareQueueDepth,
    requestQueueMax: Math.max(PARTITION_REQUEST_QUEUE_MAX, 2 * config.partition.prepareQueueDepth),
    requestQueueBytesMax: PARTITION_REQUEST_QUEUE_BYTES_MAX,
    // The core answers 57 to what it drops on losing the primary role (PartitionHost does not).
    answerDroppedRequests: true,
    groupRequestsMax: config.partition.groupCommitRequestsMax,
    groupBytesMax: config.partition.groupCommitBytesMax,
    evictedRingCapacity: config.partition.evictedRingCapacity,
    evictedRingBytesMax: config.partition.evictedRingBytesMax,
    superblockWedgedAttemptsMax: 0,
  };
}
