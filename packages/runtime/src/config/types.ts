/**
 * The resolved configuration: every default applied, every string parsed, every rule checked.
 *
 * Plain data only (objects, arrays, strings, numbers, booleans, null), deeply frozen, so it can
 * be posted to worker threads with `postMessage` (structured clone) and compared with
 * `deepEqual`. Field names are the reference TOML keys in camelCase, with the unit last:
 * durations end in `Ms` (milliseconds; fractional only for sub-millisecond input), sizes in
 * `Bytes` (unless the key already says `bytes`), consensus timeouts are also given in `Ticks`
 * (10 ms, integer division, minimum 1). Fields marked "derived" have no key of their own.
 */

export type LogLevel = 'trace' | 'debug' | 'info' | 'warn' | 'error' | 'off';

export interface Endpoint {
  readonly host: string;
  readonly port: number;
}

export interface ShoalConfig {
  readonly system: SystemConfig;
  readonly tcp: TcpConfig;
  readonly http: HttpConfig;
  readonly heartbeat: HeartbeatConfig;
  readonly personalAccessToken: PersonalAccessTokenConfig;
  readonly consumerGroup: ConsumerGroupConfig;
  readonly messageBus: MessageBusConfig;
  readonly metadata: MetadataConfig;
  readonly partition: PartitionConfig;
  readonly cluster: ClusterConfig;
  readonly root: RootUserConfig;
  /** What the command line said. */
  readonly boot: BootConfig;
  /** Derived: who this process is and where it listens. */
  readonly node: NodeConfig;
}

export interface SystemConfig {
  readonly path: string;
  readonly runtime: { readonly path: string };
  readonly logging: LoggingConfig;
  readonly stream: { readonly path: string };
  readonly topic: { readonly path: string };
  readonly partition: { readonly path: string; readonly validateChecksum: boolean };
  readonly segment: { readonly archiveExpired: boolean };
  readonly recovery: { readonly recreateMissingState: boolean };
  readonly sharding: ShardingConfig;
}

export interface LogDirective {
  readonly target: string;
  readonly level: LogLevel;
}

export interface LoggingConfig {
  readonly path: string;
  /** As written (`"info"` or `"warn,consensus=debug"`). */
  readonly level: string;
  /** Derived: the level for targets no directive names. */
  readonly defaultLevel: LogLevel;
  /** Derived: `target=level` directives, in order. */
  readonly directives: readonly LogDirective[];
  readonly fileEnabled: boolean;
  readonly maxFileSizeBytes: number;
  readonly maxTotalSizeBytes: number;
  readonly rotationCheckIntervalMs: number;
  readonly retentionMs: number;
}

export interface ShardingConfig {
  /** As written (`"all"`, `"4"`, `"5..8"`, `"numa:auto"`), or null when unset. */
  readonly cpuAllocation: string | null;
  readonly shards: number | null;
  /** Derived: the number of shard workers to start. */
  readonly shardCount: number;
  readonly pinCores: boolean;
  readonly inboxCapacity: number;
  readonly replyInboxCapacity: number;
  readonly ringSizeBytes: number;
  readonly startTimeoutMs: number;
  readonly shutdownDrainTimeoutMs: number;
  readonly shutdownPollIntervalMs: number;
  readonly shutdownJoinTimeoutMs: number;
  readonly reconcilePeriodicIntervalMs: number;
}

export interface TcpConfig {
  readonly enabled: boolean;
  readonly address: string;
  readonly connectionsMax: number;
  readonly frameSizeMaxBytes: number;
  readonly requestsInFlightMax: number;
  /** 0: never close idle connections. */
  readonly idleTimeoutMs: number;
  readonly frameReadTimeoutMs: number;
  readonly writeBufferBytesMax: number;
  readonly writeStallTimeoutMs: number;
  readonly tls: TcpTlsConfig;
}

export interface TcpTlsConfig {
  readonly enabled: boolean;
  readonly selfSigned: boolean;
  readonly certFile: string;
  readonly keyFile: string;
}

export interface HttpConfig {
  readonly enabled: boolean;
  readonly address: string;
  readonly maxRequestSizeBytes: number;
  /** `token`: the static bearer besides personal access tokens; empty: none. */
  readonly metrics: { readonly enabled: boolean; readonly endpoint: string; readonly token: string };
}

export interface HeartbeatConfig {
  readonly enabled: boolean;
  readonly intervalMs: number;
  /** Derived: 1.2 × interval, the silence after which a consumer-group member is released. */
  readonly staleAfterMs: number;
}

export interface PersonalAccessTokenConfig {
  readonly maxTokensPerUser: number;
  readonly cleaner: { readonly enabled: boolean; readonly intervalMs: number };
}

export interface ConsumerGroupConfig {
  readonly rebalancingTimeoutMs: number;
}

export interface MessageBusConfig {
  readonly maxBatch: number;
  readonly maxMessageSizeBytes: number;
  readonly peerQueueCapacity: number;
  readonly reconnectPeriodMs: number;
  readonly closePeerTimeoutMs: number;
  readonly closeGraceMs: number;
  readonly handshakeGraceMs: number;
}

export interface MetadataConfig {
  readonly prepareQueueDepth: number;
  /** Derived: 2 × prepareQueueDepth. */
  readonly requestQueueDepth: number;
  readonly journalSlots: number;
  readonly clientsTableMax: number;
}

export interface PartitionConfig {
  readonly prepareQueueDepth: number;
  /** Derived: 2 × prepareQueueDepth. */
  readonly requestQueueDepth: number;
  /** Group commit bounds (consensus group-commit.ts). */
  readonly groupCommitRequestsMax: number;
  readonly groupCommitBytesMax: number;
  readonly groupCommitWaitDepth: number;
  /** Frontier durability work on a per-shard disk thread (docs/storage-async-frontier.md). */
  readonly asyncFrontier: boolean;
  readonly evictedRingCapacity: number;
  readonly evictedRingBytesMax: number;
  readonly transferServedCacheBytesMax: number;
  readonly transferArtifactBytesMax: number;
  /** Derived: floor(served cache / max(artifact cap, 1 GiB + 64 MiB)), at least 1. */
  readonly transferServingConcurrency: number;
}

export interface ClusterConfig {
  readonly enabled: boolean;
  readonly name: string;
  readonly heartbeatTimeoutMs: number;
  /** `cluster.forward_timeout`: a forwarded partition request's answer deadline. */
  readonly forwardTimeoutMs: number;
  readonly commitBroadcastIntervalMs: number;
  readonly prepareRetransmitIntervalMs: number;
  readonly viewChangeRetransmitIntervalMs: number;
  readonly viewChangeStatusTimeoutMs: number;
  readonly requestStartViewRetransmitIntervalMs: number;
  readonly viewProbeAttemptsMax: number;
  readonly repairRetryIntervalMs: number;
  readonly repairChunkMax: number;
  /** 0: disabled. */
  readonly superblockWedgedFatalTimeoutMs: number;
  readonly heartbeatTimeoutTicks: number;
  readonly commitBroadcastIntervalTicks: number;
  readonly prepareRetransmitIntervalTicks: number;
  readonly viewChangeRetransmitIntervalTicks: number;
  readonly viewChangeStatusTimeoutTicks: number;
  readonly requestStartViewRetransmitIntervalTicks: number;
  readonly repairRetryIntervalTicks: number;
  /** Derived: consecutive failed superblock writes (one per second) before exit; 0 disables. */
  readonly superblockWedgedFatalWrites: number;
  readonly auth: ClusterAuthConfig;
  readonly tls: ClusterTlsConfig;
  readonly coordinator: ClusterCoordinatorConfig;
  readonly nodes: readonly ClusterNode[];
}

export interface ClusterAuthConfig {
  readonly enabled: boolean;
  /** Secret: never log it (renderConfig masks it). */
  readonly sharedSecret: string;
  /** Secret. Empty outside a key rotation. */
  readonly previousSharedSecret: string;
}

export interface ClusterTlsConfig {
  readonly enabled: boolean;
  readonly selfSigned: boolean;
  readonly certFile: string;
  readonly keyFile: string;
  readonly caFile: string;
}

export interface ClusterCoordinatorConfig {
  readonly skipShardZeroForReplicas: boolean;
  readonly skipShardZeroForClients: boolean;
}

export interface ClusterNodePorts {
  readonly tcp: number | null;
  readonly quic: number | null;
  readonly http: number | null;
  readonly websocket: number | null;
  readonly tcpReplica: number;
}

export interface AdvertisedAddress {
  readonly clientCidr: string;
  readonly address: string;
}

export interface ClusterNode {
  readonly name: string;
  readonly ip: string;
  readonly advertisedAddress: string | null;
  readonly replicaId: number;
  readonly ports: ClusterNodePorts;
  readonly advertisedAddresses: readonly AdvertisedAddress[];
}

export interface RootUserConfig {
  readonly username: string;
  /**
   * Secret. Null when nobody gave one: a node that creates the root user then generates a random
   * password and logs it once (the reference's behaviour); a cluster refuses its first boot.
   */
  readonly password: string | null;
  /** `--with-default-root-credentials` supplied (part of) the pair: iggy / iggy, insecure. */
  readonly fromDefaultFlag: boolean;
}

export interface BootConfig {
  /** `--replica-id`, or null when not given. */
  readonly replicaId: number | null;
  /** `--fresh`: wipe `system.path` before boot. */
  readonly fresh: boolean;
  /** Where the caller read the file from, for the startup log; null when no file. */
  readonly configPath: string | null;
}

export interface NodeConfig {
  /** 0 for a single node. */
  readonly replicaId: number;
  /** 1 for a single node. */
  readonly replicaCount: number;
  /** Roster name, or "shoal" for a single node. */
  readonly name: string;
  /** Where to listen; null when the transport is disabled. */
  readonly listeners: {
    readonly tcp: Endpoint | null;
    readonly http: Endpoint | null;
    /** Cluster mode only: the roster `ip` and `ports.tcp_replica`. */
    readonly tcpReplica: Endpoint | null;
  };
}
