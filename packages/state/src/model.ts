import type { Permissions } from '@shoal/protocol';
import { IdTable } from './id-table.js';

/**
 * The replicated metadata model: plain data, mutated only by the apply handlers (streams.ts,
 * topics.ts, partitions.ts, consumer-groups.ts, users.ts, personal-access-tokens.ts) in commit
 * order. Every collection iterates in a deterministic order: IdTable (ascending id) or arrays
 * kept in id order; name indexes are lookups only and are never iterated for output.
 * Timestamps are microseconds taken from prepare headers; ids are 0-based.
 */

/** One stored option: the canonical value bytes under the catalog kind, and who chose it. */
export interface StoredOption {
  readonly key: string;
  readonly kind: number;
  readonly value: Uint8Array;
  /** true = the client sent the key; false = the admitting primary derived the default. */
  readonly explicit: boolean;
}

export type OptionMap = Map<string, StoredOption>;

export interface PartitionRecord {
  /** 0-based, contiguous within the topic (new ones get max + 1; deletes remove the highest). */
  readonly id: number;
  /** The partition's consensus group: the packed (stream, topic, partition) namespace. */
  readonly consensusGroupId: bigint;
  readonly createdAt: bigint;
  /** `MetadataModel.revision` when created: tells a re-created partition from a stale one. */
  readonly createdRevision: bigint;
  /** Replicated delete watermark (TruncatePartition): sealed segments below it are removed. */
  deletedUpToOffset: bigint;
  /** Replicated purge counter (PurgeTopic / PurgeStream). */
  purgeGeneration: bigint;
}

export interface PendingRevocation {
  readonly partitionId: number;
  /** Member id (within the group) that receives the partition on completion. */
  readonly targetMember: number;
  readonly createdAt: bigint;
}

export interface GroupMember {
  readonly id: number;
  /** The VSR client id (u128) of the session that joined. */
  readonly clientId: bigint;
  partitions: number[];
  pendingRevocations: PendingRevocation[];
}

export interface ConsumerGroup {
  /** Monotonic per topic, never reused (the consumer-group offset key on the partition plane). */
  readonly id: number;
  /** Bumped on every membership or assignment change; clients re-sync when it moves. */
  generation: bigint;
  readonly name: string;
  readonly members: IdTable<GroupMember>;
}

export type CompressionAlgorithm = 'none' | 'gzip';

export interface Topic {
  readonly id: number;
  name: string;
  readonly createdAt: bigint;
  /** µs; 0 = server default, u64::MAX = never expire. */
  messageExpiry: bigint;
  compression: CompressionAlgorithm;
  /** bytes; 0 = server default, u64::MAX = unlimited. */
  maxTopicSize: bigint;
  readonly options: OptionMap;
  /** In id order. */
  readonly partitions: PartitionRecord[];
  readonly consumerGroups: Map<number, ConsumerGroup>;
  readonly groupIndex: Map<string, number>;
  nextConsumerGroupId: number;
}

export interface Stream {
  readonly id: number;
  name: string;
  readonly createdAt: bigint;
  readonly options: OptionMap;
  readonly topics: IdTable<Topic>;
  readonly topicIndex: Map<string, number>;
}

export const UserStatusCode = { Active: 1, Inactive: 2 } as const;

export interface PersonalAccessToken {
  readonly userId: number;
  readonly name: string;
  /** BLAKE3-256 of the token's UTF-8 bytes, lowercase hex. The raw token is never stored. */
  readonly tokenHash: string;
  /** µs since the epoch; null = never expires. */
  readonly expiryAt: bigint | null;
}

export interface User {
  readonly id: number;
  username: string;
  /** The host-computed salted, memory-hard hash string (PHC-like). Never plaintext. */
  passwordHash: string;
  /** 1 active, 2 inactive. */
  status: number;
  readonly createdAt: bigint;
  permissions: Permissions | null;
  readonly options: OptionMap;
  /** By token name. */
  readonly tokens: Map<string, PersonalAccessToken>;
}

export interface MetadataModel {
  readonly streams: IdTable<Stream>;
  readonly streamIndex: Map<string, number>;
  readonly users: IdTable<User>;
  readonly userIndex: Map<string, number>;
  /** PAT hash → (user id, token name), for login by token. */
  readonly tokenIndex: Map<string, { readonly userId: number; readonly name: string }>;
  /** Bumped on every partition-shaping commit (reference `StreamsInner::revision`). */
  revision: bigint;
}

export function emptyModel(): MetadataModel {
  return {
    streams: new IdTable<Stream>(),
    streamIndex: new Map(),
    users: new IdTable<User>(),
    userIndex: new Map(),
    tokenIndex: new Map(),
    revision: 0n,
  };
}

/** Options in key order (the only order they are ever emitted in). */
export function sortedOptions(options: OptionMap): StoredOption[] {
  return [...options.values()].sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0));
}
