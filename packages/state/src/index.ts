/**
 * @shoal/state: the pure, deterministic metadata and partition state machines. See
 * docs/state-metadata.md and docs/state-partition.md.
 */
export * from './outcome.js';
export * from './model.js';
export * from './names.js';
export * from './permissions.js';
export * from './topic-options.js';
export * from './internal-bodies.js';
export * from './metadata-state.js';
export * from './admission.js';
export * from './reads.js';
export * from './snapshot.js';
export * from './partition-state.js';
export * from './partitioning.js';
export * from './consumer-offsets.js';
export * from './poll.js';
export { PARTITIONS_PER_REQUEST_MAX, type PartitionCounters, type PartitionCountersSource } from './partitions.js';
export { hashToken, PERSONAL_ACCESS_TOKENS_PER_USER_MAX } from './personal-access-tokens.js';
export { groupDetails, pollablePartitions } from './consumer-groups.js';
export type { ApplyContext } from './lookup.js';
export { IdTable } from './id-table.js';
