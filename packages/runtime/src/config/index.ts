export { loadConfig, configPathFrom, formatConfigErrors } from './load.js';
export type { LoadConfigInput, LoadConfigResult } from './load.js';
export type { ConfigFlags } from './resolve.js';
export type { ConfigError, ConfigErrorKind } from './errors.js';
export type {
  ShoalConfig, SystemConfig, LoggingConfig, LogLevel, LogDirective, ShardingConfig, TcpConfig, HttpConfig,
  HeartbeatConfig, PersonalAccessTokenConfig, ConsumerGroupConfig, MessageBusConfig, MetadataConfig,
  PartitionConfig, ClusterConfig, ClusterAuthConfig, ClusterTlsConfig, ClusterCoordinatorConfig, ClusterNode,
  ClusterNodePorts, AdvertisedAddress, RootUserConfig, BootConfig, NodeConfig, Endpoint,
} from './types.js';
// Durations and sizes: the one parser of @shoal/stdx (units.ts), shared with the SDK and the CLI.
export { formatDuration, formatSize, parseConfigDurationMs, parseSizeBytes } from '@shoal/stdx';
export { TICK_MS, msToTicks } from './ticks.js';
export { renderConfig, redactConfig, REDACTED } from './render.js';
export { renderConfigReference, REFERENCE_BEGIN, REFERENCE_END } from './reference.js';
export { KEYS, SECTIONS, TABLE_ARRAYS, REPLICAS_MAX, SHARDS_MAX, TIMER_MS_MAX, METRICS_TOKEN_MAX, envNameOf } from './schema.js';
export type { KeySpec, ValueKind, SectionSpec, TableArraySpec } from './schema.js';
export { RELOCATED_KEYS } from './relocated.js';
export type { RelocatedKey } from './relocated.js';
