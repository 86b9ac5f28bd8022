/**
 * Rules across keys, checked on the resolved candidate. Each message names the key, the rule and
 * the value it got; every rule runs, so one boot attempt reports every problem.
 */
import { isLoopbackHost } from './address.js';
import { formatDuration, formatSize } from '@shoal/stdx';
import type { Diagnostics } from './errors.js';
import type { ConfigFlags } from './resolve.js';
import { validateRoster } from './roster.js';
import { HEADER_BYTES, METRICS_TOKEN_MAX, METRICS_TOKEN_MIN, SEGMENT_BYTES_MAX } from './schema.js';
import type { ShoalConfig } from './types.js';

const SECOND = 1000;
const utf8 = new TextEncoder();

export function validateConfig(config: ShoalConfig, flags: ConfigFlags, diagnostics: Diagnostics): void {
  validateConsensusTiming(config, diagnostics);
  validateCapacities(config, diagnostics);
  validateSystem(config, diagnostics);
  validateRoot(config, diagnostics);
  validateClientTls(config, diagnostics);
  validateReplicaIdFlag(config, flags, diagnostics);
  if (config.cluster.enabled) {
    validateRoster(config, flags, diagnostics);
    validateClusterSecurity(config, diagnostics);
    warnAboutBinds(config, diagnostics);
  }
}

function validateConsensusTiming(config: ShoalConfig, diagnostics: Diagnostics): void {
  const cluster = config.cluster;
  const broadcast4 = 4 * cluster.commitBroadcastIntervalMs;
  if (cluster.heartbeatTimeoutMs < 2 * SECOND || cluster.heartbeatTimeoutMs < broadcast4) {
    diagnostics.error('rule', 'cluster.heartbeat_timeout',
      `must be >= 2s and >= 4 × cluster.commit_broadcast_interval (got ${formatDuration(cluster.heartbeatTimeoutMs)}; ` +
      `4 × ${formatDuration(cluster.commitBroadcastIntervalMs)} = ${formatDuration(broadcast4)})`);
  }
  if (cluster.forwardTimeoutMs < SECOND) {
    diagnostics.error('rule', 'cluster.forward_timeout', `must be >= 1s (got ${formatDuration(cluster.forwardTimeoutMs)})`);
  }
  const retransmit4 = 4 * cluster.viewChangeRetransmitIntervalMs;
  if (cluster.viewChangeStatusTimeoutMs < retransmit4) {
    diagnostics.error('rule', 'cluster.view_change_status_timeout',
      `must be >= 4 × cluster.view_change_retransmit_interval (got ${formatDuration(cluster.viewChangeStatusTimeoutMs)}; ` +
      `4 × ${formatDuration(cluster.viewChangeRetransmitIntervalMs)} = ${formatDuration(retransmit4)})`);
  }
  const wedged = cluster.superblockWedgedFatalTimeoutMs;
  if (wedged !== 0 && wedged < 30 * SECOND) {
    diagnostics.error('rule', 'cluster.superblock_wedged_fatal_timeout',
      `must be 0 (disabled) or >= 30s (got ${formatDuration(wedged)})`);
  }
}

function validateCapacities(config: ShoalConfig, diagnostics: Diagnostics): void {
  const { cluster, messageBus, metadata, partition, tcp } = config;
  if (cluster.repairChunkMax >= messageBus.peerQueueCapacity) {
    diagnostics.error('rule', 'cluster.repair_chunk_max',
      `must be < message_bus.peer_queue_capacity, or a repair round overruns the per-peer queue ` +
      `(got ${cluster.repairChunkMax}; peer_queue_capacity = ${messageBus.peerQueueCapacity})`);
  }
  const slotsMin = 4 * Math.max(64, metadata.prepareQueueDepth);
  if (metadata.journalSlots < slotsMin) {
    diagnostics.error('rule', 'metadata.journal_slots',
      `must be >= 4 × max(64, metadata.prepare_queue_depth) = ${slotsMin} (got ${metadata.journalSlots})`);
  }
  const artifactMin = SEGMENT_BYTES_MAX + messageBus.maxMessageSizeBytes;
  if (partition.transferArtifactBytesMax < artifactMin) {
    diagnostics.error('rule', 'partition.transfer_artifact_bytes_max',
      `must be >= 1 GiB + message_bus.max_message_size = ${formatSize(artifactMin)} ` +
      `(got ${formatSize(partition.transferArtifactBytesMax)}); raise both keys together`);
  }
  if (partition.transferServingConcurrency < 2) {
    diagnostics.warn(`partition.transfer_served_cache_bytes_max serves only ${partition.transferServingConcurrency} state transfer at a time`);
  }
  if (partition.groupCommitBytesMax > messageBus.maxMessageSizeBytes - HEADER_BYTES) {
    diagnostics.error('rule', 'partition.group_commit_bytes_max',
      `must be <= message_bus.max_message_size - 256 = ${formatSize(messageBus.maxMessageSizeBytes - HEADER_BYTES)} ` +
      `(got ${formatSize(partition.groupCommitBytesMax)}): a joined prepare must fit in one message`);
  }
  if (tcp.frameSizeMaxBytes > messageBus.maxMessageSizeBytes) {
    diagnostics.error('rule', 'tcp.frame_size_max',
      `must be <= message_bus.max_message_size = ${formatSize(messageBus.maxMessageSizeBytes)} ` +
      `(got ${formatSize(tcp.frameSizeMaxBytes)}): a request must fit in a prepare`);
  }
}

function validateSystem(config: ShoalConfig, diagnostics: Diagnostics): void {
  const { sharding } = config.system;
  if (sharding.shutdownPollIntervalMs > sharding.shutdownDrainTimeoutMs) {
    diagnostics.error('rule', 'system.sharding.shutdown_poll_interval',
      `must be <= system.sharding.shutdown_drain_timeout (got ${formatDuration(sharding.shutdownPollIntervalMs)}; ` +
      `drain timeout ${formatDuration(sharding.shutdownDrainTimeoutMs)})`);
  }
  if (sharding.shutdownJoinTimeoutMs < sharding.shutdownDrainTimeoutMs) {
    diagnostics.error('rule', 'system.sharding.shutdown_join_timeout',
      `must be >= system.sharding.shutdown_drain_timeout (got ${formatDuration(sharding.shutdownJoinTimeoutMs)}; ` +
      `drain timeout ${formatDuration(sharding.shutdownDrainTimeoutMs)})`);
  }
  if (config.system.segment.archiveExpired) {
    diagnostics.error('rule', 'system.segment.archive_expired', 'is an unsupported placeholder: true refuses boot');
  }
  if (config.system.recovery.recreateMissingState) {
    diagnostics.error('rule', 'system.recovery.recreate_missing_state', 'is an unsupported placeholder: true refuses boot');
  }
  if (!config.http.metrics.endpoint.startsWith('/')) {
    diagnostics.error('rule', 'http.metrics.endpoint', `must start with "/" (got ${JSON.stringify(config.http.metrics.endpoint)})`);
  }
  const tokenBytes = utf8.encode(config.http.metrics.token).length;
  if (tokenBytes > 0 && (tokenBytes < METRICS_TOKEN_MIN || tokenBytes > METRICS_TOKEN_MAX)) {
    diagnostics.error('range', 'http.metrics.token', `must be empty or ${METRICS_TOKEN_MIN} to ${METRICS_TOKEN_MAX} bytes (got ${tokenBytes} bytes)`);
  }
  const nameBytes = utf8.encode(config.cluster.name).length;
  if (nameBytes > 255) diagnostics.error('range', 'cluster.name', `must be at most 255 bytes (got ${nameBytes})`);
}

/** `[tcp.tls]`: a CA-issued pair needs both files named (whether they load is checked at boot). */
function validateClientTls(config: ShoalConfig, diagnostics: Diagnostics): void {
  const tls = config.tcp.tls;
  if (!tls.enabled || tls.selfSigned) return;
  for (const [key, value] of [['cert_file', tls.certFile], ['key_file', tls.keyFile]] as const) {
    if (value === '') diagnostics.error('required', `tcp.tls.${key}`, 'required when tcp.tls.enabled = true and tcp.tls.self_signed = false');
  }
}

/** Iggy's user rules: username 3..=50 characters, password 3..=100; both fit the u8 wire length. */
function validateRoot(config: ShoalConfig, diagnostics: Diagnostics): void {
  const check = (path: string, value: string, max: number, secret: boolean): void => {
    const chars = [...value].length;
    const bytes = utf8.encode(value).length;
    const got = secret ? `${chars} characters` : JSON.stringify(value);
    if (chars < 3 || chars > max) diagnostics.error('range', path, `must be 3 to ${max} characters (got ${got})`);
    else if (bytes > 255) diagnostics.error('range', path, `must be at most 255 UTF-8 bytes (got ${bytes})`);
  };
  check('root.username', config.root.username, 50, false);
  if (config.root.password !== null) check('root.password', config.root.password, 100, true);
}

function validateReplicaIdFlag(config: ShoalConfig, flags: ConfigFlags, diagnostics: Diagnostics): void {
  const replicaId = flags.replicaId;
  if (replicaId === undefined) {
    if (config.cluster.enabled) {
      diagnostics.error('required', '--replica-id', 'required when cluster.enabled = true (it selects this node in cluster.nodes)', 'flag');
    }
    return;
  }
  if (!Number.isSafeInteger(replicaId) || replicaId < 0 || replicaId > 255) {
    diagnostics.error('type', '--replica-id', `must be an integer between 0 and 255 (got ${replicaId})`, 'flag');
    return;
  }
  if (!config.cluster.enabled && replicaId !== 0) {
    diagnostics.error('rule', '--replica-id',
      `must be 0 (or absent) when cluster.enabled = false; any other id would have to match a cluster.nodes entry (got ${replicaId})`, 'flag');
  }
}

function validateClusterSecurity(config: ShoalConfig, diagnostics: Diagnostics): void {
  const { auth, tls } = config.cluster;
  const shared = utf8.encode(auth.sharedSecret).length;
  const previous = utf8.encode(auth.previousSharedSecret).length;
  if (auth.enabled && shared === 0) {
    diagnostics.error('required', 'cluster.auth.shared_secret',
      'required when cluster.auth.enabled = true (prefer IGGY_CLUSTER_AUTH_SHARED_SECRET)');
  }
  if (shared > 0 && shared < 32) {
    diagnostics.error('range', 'cluster.auth.shared_secret', `must be at least 32 bytes of CSPRNG output (got ${shared} bytes)`);
  }
  if (previous > 0 && previous < 32) {
    diagnostics.error('range', 'cluster.auth.previous_shared_secret', `must be at least 32 bytes (got ${previous} bytes)`);
  }
  if (previous > 0 && auth.previousSharedSecret === auth.sharedSecret) {
    diagnostics.error('rule', 'cluster.auth.previous_shared_secret',
      'must differ from cluster.auth.shared_secret (an identical key makes the rotation a no-op)');
  }
  if (tls.enabled && !auth.enabled) {
    diagnostics.error('rule', 'cluster.tls.enabled',
      'TLS requires cluster.auth.enabled = true: replica TLS authenticates only the acceptor, the PSK handshake authenticates the peer');
  }
  if (tls.enabled && !tls.selfSigned) {
    const files = [['cert_file', tls.certFile], ['key_file', tls.keyFile], ['ca_file', tls.caFile]] as const;
    for (const [key, value] of files) {
      if (value.trim() === '') {
        diagnostics.error('required', `cluster.tls.${key}`, 'required when cluster.tls.enabled = true and cluster.tls.self_signed = false');
      }
    }
  }
}

/** The reference warns when a loopback bind cannot serve a non-loopback roster ip. */
function warnAboutBinds(config: ShoalConfig, diagnostics: Diagnostics): void {
  const self = config.cluster.nodes.find((node) => node.replicaId === config.node.replicaId);
  if (self === undefined || isLoopbackHost(self.ip)) return;
  for (const [transport, endpoint] of [['tcp', config.node.listeners.tcp], ['http', config.node.listeners.http]] as const) {
    if (endpoint !== null && isLoopbackHost(endpoint.host)) {
      diagnostics.warn(`${transport}.address binds ${endpoint.host}, which cannot serve roster ip ${self.ip}; set it to 0.0.0.0 or that interface`);
    }
  }
}
