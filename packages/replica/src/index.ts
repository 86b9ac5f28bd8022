/**
 * @shoal/replica: the driver that runs one consensus group's core effects in durability order
 * against storage, the state machines and a transport. The same code runs in the server's worker
 * threads and in the deterministic simulator. See docs/internals-driver.md.
 */
export {
  type Transport, type DriverHooks, type DriverOptions, type FatalReason, type AppliedOp, type InstalledSnapshot,
  type SessionResult, type OpenResult, FATAL_REASONS,
} from './ports.js';
export { GroupDriver } from './group-driver.js';
export { MetadataDriver, type MetadataDriverOptions, type RequestCheckKind, logoutApplied, syncFile } from './metadata-driver.js';
export { PartitionDriver, type PartitionDriverOptions, type PartitionObservation, wipePartition } from './partition-driver.js';
export {
  MetadataHost, type MetadataHostOptions, type AdmissionPorts, type LoginRequest, type LoginCredentials, type LoginOutcome,
  INTERNAL_TOKEN, INTERNAL_CLIENT_TAG, internalClientId, isInternalClient,
} from './metadata-host.js';
export { echoReply, buildStatusReply, buildReply, buildEvictionFrame, type ReplyContext } from './client-replies.js';
export { encodeClientTableSnapshot, decodeClientTableSnapshot, type ClientTableDecode } from './client-table-snapshot.js';
export { MetadataAdapter } from './metadata-adapter.js';
export { PartitionAdapter, type StorageWork } from './partition-adapter.js';
export { preferredPrimary } from './leadership.js';
export {
  partitionCoreConfig, type PartitionCoreInput, PARTITION_REQUEST_QUEUE_MAX, PARTITION_REQUEST_QUEUE_BYTES_MAX,
  GROUP_COMMIT_REQUESTS_MAX, GROUP_COMMIT_BYTES_MAX, GROUP_COMMIT_WAIT_DEPTH,
} from './partition-core-config.js';
