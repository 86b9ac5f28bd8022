/**
 * The consensus core's limits and timers for each plane, from the node configuration (one
 * config, checked at boot: docs/configuration.md). Durations are already resolved to 10 ms
 * ticks by the config loader.
 */
import type { ConfigInput } from '@shoal/consensus';
import { clusterIdFromName } from '@shoal/protocol';
import { partitionCoreConfig } from '@shoal/replica';
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

export function partitionConsensusConfig(config: ShoalConfig): ConfigInput {
  return {
    ...common(config),
    // Shared with the simulator: request queue, answered drops, group commit (replica package).
    ...partitionCoreConfig({
      prepareQueueDepth: config.partition.prepareQueueDepth,
      groupRequestsMax: config.partition.groupCommitRequestsMax,
      groupBytesMax: config.partition.groupCommitBytesMax,
      groupWaitDepth: config.partition.groupCommitWaitDepth,
    }),
    evictedRingCapacity: config.partition.evictedRingCapacity,
    evictedRingBytesMax: config.partition.evictedRingBytesMax,
    superblockWedgedAttemptsMax: 0,
  };
}
