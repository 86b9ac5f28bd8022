/**
 * Merged layer → typed `ShoalConfig` candidate. Values that failed to parse were already
 * reported; here a missing value falls back to a placeholder so that every later rule can still
 * run and report (boot is refused once, with all errors).
 */
import { parseHostPort } from './address.js';
import type { Diagnostics } from './errors.js';
import { arrayIndexes, type Layer } from './layers.js';
import { SEGMENT_BYTES_MAX, SHARDS_MAX } from './schema.js';
import { msToTicks } from './ticks.js';
import type {
  AdvertisedAddress, ClusterConfig, ClusterNode, Endpoint, LogDirective, LogLevel, LoggingConfig,
  NodeConfig, ShardingConfig, ShoalConfig,
} from './types.js';

export interface ConfigFlags {
  /** `--replica-id N`. */
  readonly replicaId?: number;
  /** `--fresh`. */
  readonly fresh?: boolean;
  /** `--config PATH` (or the env path the caller used), recorded for the startup log. */
  readonly configPath?: string;
  /**
   * `--with-default-root-credentials`: whichever of the root username and password nobody gave
   * becomes `iggy` (development only; the environment and the file still win), as the reference.
   */
  readonly withDefaultRootCredentials?: boolean;
}

/** The reference's DEFAULT_ROOT_USERNAME / DEFAULT_ROOT_PASSWORD. */
export const DEFAULT_ROOT_USERNAME = 'iggy';
export const DEFAULT_ROOT_PASSWORD = 'iggy';

const LOG_LEVELS: readonly LogLevel[] = ['trace', 'debug', 'info', 'warn', 'error', 'off'];

/** Reads typed values out of the merged layer. */
class Reader {
  constructor(private readonly layer: Layer) {}

  bool(path: string): boolean {
    const value = this.layer.entries.get(path)?.value;
    return typeof value === 'boolean' ? value : false;
  }

  string(path: string): string {
    const value = this.layer.entries.get(path)?.value;
    return typeof value === 'string' ? value : '';
  }

  number(path: string): number {
    const value = this.layer.entries.get(path)?.value;
    return typeof value === 'number' ? value : 0;
  }

  optionalString(path: string): string | null {
    const value = this.layer.entries.get(path)?.value;
    return value === undefined ? null : String(value);
  }

  optionalNumber(path: string): number | null {
    const value = this.layer.entries.get(path)?.value;
    return typeof value === 'number' ? value : null;
  }

  count(arrayPath: string): number {
    return arrayIndexes(this.layer, arrayPath).count;
  }
}

export function resolveConfig(
  layer: Layer,
  flags: ConfigFlags,
  availableParallelism: number,
  diagnostics: Diagnostics,
): ShoalConfig {
  const read = new Reader(layer);
  const cluster = resolveCluster(read);
  const messageBusMaxMessageSize = read.number('message_bus.max_message_size');
  const metadataDepth = read.number('metadata.prepare_queue_depth');
  const partitionDepth = read.number('partition.prepare_queue_depth');
  const servedCache = read.number('partition.transfer_served_cache_bytes_max');
  const artifactMax = read.number('partition.transfer_artifact_bytes_max');
  const heartbeatInterval = read.number('heartbeat.interval');

  const config: ShoalConfig = {
    system: {
      path: read.string('system.path'),
      runtime: { path: read.string('system.runtime.path') },
      logging: resolveLogging(read, diagnostics),
      stream: { path: read.string('system.stream.path') },
      topic: { path: read.string('system.topic.path') },
      partition: {
        path: read.string('system.partition.path'),
        validateChecksum: read.bool('system.partition.validate_checksum'),
      },
      segment: { archiveExpired: read.bool('system.segment.archive_expired') },
      recovery: { recreateMissingState: read.bool('system.recovery.recreate_missing_state') },
      sharding: resolveSharding(read, availableParallelism, diagnostics),
    },
    tcp: {
      enabled: read.bool('tcp.enabled'),
      address: read.string('tcp.address'),
      connectionsMax: read.number('tcp.connections_max'),
      frameSizeMaxBytes: read.number('tcp.frame_size_max'),
      requestsInFlightMax: read.number('tcp.requests_in_flight_max'),
      idleTimeoutMs: read.number('tcp.idle_timeout'),
      frameReadTimeoutMs: read.number('tcp.frame_read_timeout'),
      writeBufferBytesMax: read.number('tcp.write_buffer_bytes_max'),
      writeStallTimeoutMs: read.number('tcp.write_stall_timeout'),
      tls: {
        enabled: read.bool('tcp.tls.enabled'),
        selfSigned: read.bool('tcp.tls.self_signed'),
        certFile: read.string('tcp.tls.cert_file'),
        keyFile: read.string('tcp.tls.key_file'),
      },
    },
    http: {
      enabled: read.bool('http.enabled'),
      address: read.string('http.address'),
      maxRequestSizeBytes: read.number('http.max_request_size'),
      metrics: { enabled: read.bool('http.metrics.enabled'), endpoint: read.string('http.metrics.endpoint'), token: read.string('http.metrics.token') },
    },
    heartbeat: {
      enabled: read.bool('heartbeat.enabled'),
      intervalMs: heartbeatInterval,
      staleAfterMs: (heartbeatInterval * 6) / 5,
    },
    personalAccessToken: {
      maxTokensPerUser: read.number('personal_access_token.max_tokens_per_user'),
      cleaner: {
        enabled: read.bool('personal_access_token.cleaner.enabled'),
        intervalMs: read.number('personal_access_token.cleaner.interval'),
      },
    },
    consumerGroup: { rebalancingTimeoutMs: read.number('consumer_group.rebalancing_timeout') },
    messageBus: {
      maxBatch: read.number('message_bus.max_batch'),
      maxMessageSizeBytes: messageBusMaxMessageSize,
      peerQueueCapacity: read.number('message_bus.peer_queue_capacity'),
      reconnectPeriodMs: read.number('message_bus.reconnect_period'),
      closePeerTimeoutMs: read.number('message_bus.close_peer_timeout'),
      closeGraceMs: read.number('message_bus.close_grace'),
      handshakeGraceMs: read.number('message_bus.handshake_grace'),
    },
    metadata: {
      prepareQueueDepth: metadataDepth,
      requestQueueDepth: 2 * metadataDepth,
      journalSlots: read.number('metadata.journal_slots'),
      clientsTableMax: read.number('metadata.clients_table_max'),
    },
    partition: {
      prepareQueueDepth: partitionDepth,
      requestQueueDepth: 2 * partitionDepth,
      groupCommitRequestsMax: read.number('partition.group_commit_requests_max'),
      groupCommitBytesMax: read.number('partition.group_commit_bytes_max'),
      groupCommitWaitDepth: read.number('partition.group_commit_wait_depth'),
      asyncFrontier: read.bool('partition.async_frontier'),
      evictedRingCapacity: read.number('partition.evicted_ring_capacity'),
      evictedRingBytesMax: read.number('partition.evicted_ring_bytes_max'),
      transferServedCacheBytesMax: servedCache,
      transferArtifactBytesMax: artifactMax,
      // The reference sizes serving slots for a full sealed segment plus a 64 MiB overshoot.
      transferServingConcurrency: Math.max(1, Math.floor(servedCache / Math.max(artifactMax, SEGMENT_BYTES_MAX + 64 * 2 ** 20))),
    },
    cluster,
    root: resolveRoot(read.optionalString('root.username'), read.optionalString('root.password'), flags),
    boot: {
      replicaId: flags.replicaId ?? null,
      fresh: flags.fresh ?? false,
      configPath: flags.configPath ?? null,
    },
    node: resolveNode(read, cluster, flags),
  };
  return config;
}

function resolveLogging(read: Reader, diagnostics: Diagnostics): LoggingConfig {
  const level = read.string('system.logging.level');
  const { defaultLevel, directives } = parseLogLevel(level, diagnostics);
  return {
    path: read.string('system.logging.path'),
    level,
    defaultLevel,
    directives,
    fileEnabled: read.bool('system.logging.file_enabled'),
    maxFileSizeBytes: read.number('system.logging.max_file_size'),
    maxTotalSizeBytes: read.number('system.logging.max_total_size'),
    rotationCheckIntervalMs: read.number('system.logging.rotation_check_interval'),
    retentionMs: read.number('system.logging.retention'),
  };
}

/** `RUST_LOG`-style: `level` or `target=level`, comma-separated. The last bare level wins. */
export function parseLogLevel(text: string, diagnostics: Diagnostics): { defaultLevel: LogLevel; directives: LogDirective[] } {
  let defaultLevel: LogLevel = 'info';
  const directives: LogDirective[] = [];
  for (const part of text.split(',').map((item) => item.trim()).filter((item) => item !== '')) {
    const equals = part.indexOf('=');
    const target = equals < 0 ? '' : part.slice(0, equals).trim();
    const level = (equals < 0 ? part : part.slice(equals + 1)).trim().toLowerCase();
    if (!isLogLevel(level) || (equals >= 0 && target === '')) {
      diagnostics.error('type', 'system.logging.level',
        `"${part}" is not a level (${LOG_LEVELS.join(', ')}) or a target=level directive`);
      continue;
    }
    if (equals < 0) defaultLevel = level;
    else directives.push({ target, level });
  }
  return { defaultLevel, directives };
}

function isLogLevel(text: string): text is LogLevel {
  return (LOG_LEVELS as readonly string[]).includes(text);
}

function resolveSharding(read: Reader, availableParallelism: number, diagnostics: Diagnostics): ShardingConfig {
  const cpuAllocation = read.optionalString('system.sharding.cpu_allocation');
  const shards = read.optionalNumber('system.sharding.shards');
  const pinCores = read.bool('system.sharding.pin_cores');
  const cores = Math.max(1, Math.floor(availableParallelism));
  const shardCount = resolveShardCount(cpuAllocation, shards, cores, diagnostics);
  if (pinCores) diagnostics.warn('system.sharding.pin_cores = true is ignored: Node cannot pin worker threads to cores');
  return {
    cpuAllocation,
    shards,
    shardCount,
    pinCores,
    inboxCapacity: read.number('system.sharding.inbox_capacity'),
    replyInboxCapacity: read.number('system.sharding.reply_inbox_capacity'),
    ringSizeBytes: read.number('system.sharding.ring_size'),
    startTimeoutMs: read.number('system.sharding.start_timeout'),
    shutdownDrainTimeoutMs: read.number('system.sharding.shutdown_drain_timeout'),
    shutdownPollIntervalMs: read.number('system.sharding.shutdown_poll_interval'),
    shutdownJoinTimeoutMs: read.number('system.sharding.shutdown_join_timeout'),
    reconcilePeriodicIntervalMs: read.number('system.sharding.reconcile_periodic_interval'),
  };
}

/**
 * `shards = N`, or `cpu_allocation` = "all" | N | "a..b" | "numa:auto"; neither: one shard per
 * available core. "all" is capped at SHARDS_MAX; explicit counts above it are refused.
 */
export function resolveShardCount(
  cpuAllocation: string | null,
  shards: number | null,
  cores: number,
  diagnostics: Diagnostics,
): number {
  const path = 'system.sharding.cpu_allocation';
  if (shards !== null && cpuAllocation !== null) {
    diagnostics.error('rule', 'system.sharding.shards', `set either system.sharding.shards or ${path}, not both`);
    return Math.max(1, Math.min(shards, SHARDS_MAX));
  }
  if (shards !== null) return Math.max(1, Math.min(shards, SHARDS_MAX));
  if (cpuAllocation === null) return Math.min(cores, SHARDS_MAX);
  const text = cpuAllocation.trim();
  if (text === 'all' || text === 'numa:auto') {
    if (text === 'numa:auto') diagnostics.warn(`${path} = "numa:auto" is read as "all": Shoal has no NUMA placement`);
    return Math.min(cores, SHARDS_MAX);
  }
  if (text.startsWith('numa:')) {
    diagnostics.error('type', path, `"${text}" is not supported: Shoal accepts "all", a number, a range "a..b" or "numa:auto"`);
    return 1;
  }
  let count: number | undefined;
  if (/^\d+$/.test(text)) count = Number(text);
  const range = /^(\d+)\.\.(\d+)$/.exec(text);
  if (range !== null) count = Number(range[2]) - Number(range[1]);
  if (count === undefined) {
    diagnostics.error('type', path, `expected "all", a number, or a range like "0..4" (got "${text}")`);
    return 1;
  }
  if (count < 1 || count > SHARDS_MAX) {
    diagnostics.error('range', path, `must give between 1 and ${SHARDS_MAX} shards (got "${text}" = ${count})`);
    return Math.max(1, Math.min(count, SHARDS_MAX));
  }
  if (count > cores) diagnostics.warn(`${path} = "${text}" starts ${count} shards on ${cores} available cores`);
  return count;
}

function resolveCluster(read: Reader): ClusterConfig {
  const ms = (key: string): number => read.number(`cluster.${key}`);
  const wedged = ms('superblock_wedged_fatal_timeout');
  return {
    enabled: read.bool('cluster.enabled'),
    name: read.string('cluster.name'),
    heartbeatTimeoutMs: ms('heartbeat_timeout'),
    forwardTimeoutMs: ms('forward_timeout'),
    commitBroadcastIntervalMs: ms('commit_broadcast_interval'),
    prepareRetransmitIntervalMs: ms('prepare_retransmit_interval'),
    viewChangeRetransmitIntervalMs: ms('view_change_retransmit_interval'),
    viewChangeStatusTimeoutMs: ms('view_change_status_timeout'),
    requestStartViewRetransmitIntervalMs: ms('request_start_view_retransmit_interval'),
    viewProbeAttemptsMax: read.number('cluster.view_probe_attempts_max'),
    repairRetryIntervalMs: ms('repair_retry_interval'),
    repairChunkMax: read.number('cluster.repair_chunk_max'),
    superblockWedgedFatalTimeoutMs: wedged,
    heartbeatTimeoutTicks: msToTicks(ms('heartbeat_timeout')),
    commitBroadcastIntervalTicks: msToTicks(ms('commit_broadcast_interval')),
    prepareRetransmitIntervalTicks: msToTicks(ms('prepare_retransmit_interval')),
    viewChangeRetransmitIntervalTicks: msToTicks(ms('view_change_retransmit_interval')),
    viewChangeStatusTimeoutTicks: msToTicks(ms('view_change_status_timeout')),
    requestStartViewRetransmitIntervalTicks: msToTicks(ms('request_start_view_retransmit_interval')),
    repairRetryIntervalTicks: msToTicks(ms('repair_retry_interval')),
    superblockWedgedFatalWrites: Math.floor(wedged / 1000),
    auth: {
      enabled: read.bool('cluster.auth.enabled'),
      sharedSecret: read.string('cluster.auth.shared_secret'),
      previousSharedSecret: read.string('cluster.auth.previous_shared_secret'),
    },
    tls: {
      enabled: read.bool('cluster.tls.enabled'),
      selfSigned: read.bool('cluster.tls.self_signed'),
      certFile: read.string('cluster.tls.cert_file'),
      keyFile: read.string('cluster.tls.key_file'),
      caFile: read.string('cluster.tls.ca_file'),
    },
    coordinator: {
      skipShardZeroForReplicas: read.bool('cluster.coordinator.skip_shard_zero_for_replicas'),
      skipShardZeroForClients: read.bool('cluster.coordinator.skip_shard_zero_for_clients'),
    },
    nodes: resolveNodes(read),
  };
}

function resolveNodes(read: Reader): ClusterNode[] {
  const nodes: ClusterNode[] = [];
  const count = read.count('cluster.nodes');
  for (let index = 0; index < count; index += 1) {
    const at = `cluster.nodes[${index}]`;
    const advertisedAddresses: AdvertisedAddress[] = [];
    const selectors = read.count(`${at}.advertised_addresses`);
    for (let selector = 0; selector < selectors; selector += 1) {
      const sel = `${at}.advertised_addresses[${selector}]`;
      advertisedAddresses.push({ clientCidr: read.string(`${sel}.client_cidr`), address: read.string(`${sel}.address`) });
    }
    nodes.push({
      name: read.string(`${at}.name`),
      ip: read.string(`${at}.ip`),
      advertisedAddress: read.optionalString(`${at}.advertised_address`),
      replicaId: read.number(`${at}.replica_id`),
      ports: {
        tcp: read.optionalNumber(`${at}.ports.tcp`),
        quic: read.optionalNumber(`${at}.ports.quic`),
        http: read.optionalNumber(`${at}.ports.http`),
        websocket: read.optionalNumber(`${at}.ports.websocket`),
        tcpReplica: read.number(`${at}.ports.tcp_replica`),
      },
      advertisedAddresses,
    });
  }
  return nodes;
}

/**
 * Who this process is. A single node is replica 0 of 1 and listens where `tcp.address` and
 * `http.address` say. In cluster mode the roster entry chosen by `--replica-id` supplies every
 * port; the transport addresses supply only the bind host, and the replica listener binds the
 * roster `ip`.
 */
function resolveNode(read: Reader, cluster: ClusterConfig, flags: ConfigFlags): NodeConfig {
  const tcpBind = parseHostPort(read.string('tcp.address'));
  const httpBind = parseHostPort(read.string('http.address'));
  const tcpEnabled = read.bool('tcp.enabled');
  const httpEnabled = read.bool('http.enabled');
  const endpoint = (bind: ReturnType<typeof parseHostPort>, port: number | null): Endpoint =>
    ({ host: bind.ok ? bind.host : '', port: port ?? (bind.ok ? bind.port : 0) });

  if (!cluster.enabled) {
    return {
      replicaId: 0,
      replicaCount: 1,
      name: 'shoal',
      listeners: {
        tcp: tcpEnabled ? endpoint(tcpBind, null) : null,
        http: httpEnabled ? endpoint(httpBind, null) : null,
        tcpReplica: null,
      },
    };
  }
  const self = cluster.nodes.find((node) => node.replicaId === flags.replicaId);
  return {
    replicaId: self?.replicaId ?? flags.replicaId ?? 0,
    replicaCount: cluster.nodes.length,
    name: self?.name ?? '',
    listeners: {
      tcp: tcpEnabled ? endpoint(tcpBind, self?.ports.tcp ?? 0) : null,
      http: httpEnabled ? endpoint(httpBind, self?.ports.http ?? 0) : null,
      tcpReplica: { host: self?.ip ?? '', port: self?.ports.tcpReplica ?? 0 },
    },
  };
}

/**
 * `--with-default-root-credentials` fills whichever of username and password nobody gave with
 * `iggy`. Otherwise an unset password stays null (generated when the root user is created) and an
 * unset username is `iggy`. (The environment's pair rule is checked on the variables themselves,
 * env.ts `checkRootEnvPair`; a `[root]` section may name a user without a password.)
 */
function resolveRoot(username: string | null, password: string | null, flags: ConfigFlags): ShoalConfig['root'] {
  if (flags.withDefaultRootCredentials === true) {
    const filled = username === null || password === null;
    return { username: username ?? DEFAULT_ROOT_USERNAME, password: password ?? DEFAULT_ROOT_PASSWORD, fromDefaultFlag: filled };
  }
  return { username: username ?? DEFAULT_ROOT_USERNAME, password, fromDefaultFlag: false };
}
