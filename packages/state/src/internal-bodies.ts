import {
  type ByteWriter, type ByteReader, type Decoded, type Identifier, type OptionEntry, readIdentifier, readName,
  readPrefixedOptions, writeIdentifier, writeName, writePrefixedOptions,
} from '@shoal/protocol';
import { checkCount, decodeExact, encodeWith } from '@shoal/protocol';

/**
 * Prepare bodies that admission builds (docs/state-metadata.md "Internal bodies"). All integers
 * little-endian; Name = [len u8][UTF-8 1..255]; options blocks are u32-length-prefixed TLV blocks
 * (the response form of encodings.mdx). Every decoder requires exact consumption.
 *
 * 64 CreateTopicWithAssignments
 *   [stream_id u32][topic_id u32 (predicted)][name Name][partitions_count u32]
 *   [explicit_len u32][explicit options][derived_len u32][derived options]
 *   [assignments_count u32] × {partition_id u32, consensus_group_id u64}
 * 65 CreatePartitionsWithAssignments
 *   [stream_id u32][topic_id u32][partitions_count u32]
 *   [assignments_count u32] × {partition_id u32 (absolute, predicted), consensus_group_id u64}
 * 66 RemoveConsumerGroupMember        [client_id u128]
 * 67 CompleteConsumerGroupRevocation  [stream_id u32][topic_id u32][group_id u32][source_client u128][partition_id u32]
 * 68 TruncatePartition                [stream_id Identifier][topic_id Identifier][partition_id u32][up_to_offset u64]
 *                                     (admission writes numeric identifiers; the reference's layout)
 * 146 CreatePersonalAccessToken (admitted)  [name Name][expiry u64][token Name]
 * 148 JoinConsumerGroup (admitted)          [stream_id Identifier][topic_id Identifier][group_id Identifier]
 *                                           [in_flight_count u32][partition_id u32 × count]
 * 141 CreateUser and 144 ChangePassword keep the client layout; the password slots carry the
 * host's hash string (CreateUser: password = hash; ChangePassword: current = "", new = hash).
 * The consumer group ids, partition ids and consensus group ids in 64/65 are the admitting
 * primary's PREDICTION; apply re-derives them from committed state (see topics.ts).
 */
export interface PartitionAssignment {
  readonly partitionId: number;
  readonly consensusGroupId: bigint;
}

export interface CreateTopicWithAssignmentsBody {
  readonly streamId: number;
  readonly topicId: number;
  readonly name: string;
  readonly partitionsCount: number;
  readonly explicit: readonly OptionEntry[];
  readonly derived: readonly OptionEntry[];
  readonly assignments: readonly PartitionAssignment[];
}

export interface CreatePartitionsWithAssignmentsBody {
  readonly streamId: number;
  readonly topicId: number;
  readonly partitionsCount: number;
  readonly assignments: readonly PartitionAssignment[];
}

export interface CompleteRevocationBody {
  readonly streamId: number;
  readonly topicId: number;
  readonly groupId: number;
  readonly sourceClient: bigint;
  readonly partitionId: number;
}

export interface TruncatePartitionBody {
  readonly streamId: Identifier;
  readonly topicId: Identifier;
  readonly partitionId: number;
  readonly upToOffset: bigint;
}

export interface CreatePatBody {
  readonly name: string;
  readonly expiry: bigint;
  readonly token: string;
}

export interface JoinGroupBody {
  readonly streamId: Identifier;
  readonly topicId: Identifier;
  readonly groupId: Identifier;
  readonly inFlight: readonly number[];
}

const ASSIGNMENT_SIZE = 12;

function writeAssignments(w: ByteWriter, list: readonly PartitionAssignment[]): void {
  w.u32(list.length);
  for (const a of list) w.u32(a.partitionId).u64(a.consensusGroupId);
}

function readAssignments(r: ByteReader): PartitionAssignment[] {
  const count = r.u32('assignments_count');
  const out: PartitionAssignment[] = [];
  if (!checkCount(r, count, ASSIGNMENT_SIZE, 'assignments')) return out;
  for (let i = 0; i < count && !r.failed; i++) {
    out.push({ partitionId: r.u32('partition_id'), consensusGroupId: r.u64('consensus_group_id') });
  }
  return out;
}

export function encodeCreateTopicWithAssignments(b: CreateTopicWithAssignmentsBody): Uint8Array {
  return encodeWith((w) => {
    w.u32(b.streamId).u32(b.topicId);
    writeName(w, b.name);
    w.u32(b.partitionsCount);
    writePrefixedOptions(w, b.explicit);
    writePrefixedOptions(w, b.derived);
    writeAssignments(w, b.assignments);
  });
}

export function decodeCreateTopicWithAssignments(bytes: Uint8Array): Decoded<CreateTopicWithAssignmentsBody> {
  return decodeExact(bytes, (r) => ({
    streamId: r.u32('stream_id'),
    topicId: r.u32('topic_id'),
    name: readName(r, 'topic_name'),
    partitionsCount: r.u32('partitions_count'),
    explicit: readPrefixedOptions(r, 'explicit_options'),
    derived: readPrefixedOptions(r, 'derived_options'),
    assignments: readAssignments(r),
  }));
}

export function encodeCreatePartitionsWithAssignments(b: CreatePartitionsWithAssignmentsBody): Uint8Array {
  return encodeWith((w) => {
    w.u32(b.streamId).u32(b.topicId).u32(b.partitionsCount);
    writeAssignments(w, b.assignments);
  });
}

export function decodeCreatePartitionsWithAssignments(bytes: Uint8Array): Decoded<CreatePartitionsWithAssignmentsBody> {
  return decodeExact(bytes, (r) => ({
    streamId: r.u32('stream_id'),
    topicId: r.u32('topic_id'),
    partitionsCount: r.u32('partitions_count'),
    assignments: readAssignments(r),
  }));
}

export function encodeRemoveConsumerGroupMember(clientId: bigint): Uint8Array {
  return encodeWith((w) => void w.u128(clientId));
}

export function decodeRemoveConsumerGroupMember(bytes: Uint8Array): Decoded<bigint> {
  return decodeExact(bytes, (r) => r.u128('client_id'));
}

export function encodeCompleteRevocation(b: CompleteRevocationBody): Uint8Array {
  return encodeWith((w) => void w.u32(b.streamId).u32(b.topicId).u32(b.groupId).u128(b.sourceClient).u32(b.partitionId));
}

export function decodeCompleteRevocation(bytes: Uint8Array): Decoded<CompleteRevocationBody> {
  return decodeExact(bytes, (r) => ({
    streamId: r.u32('stream_id'),
    topicId: r.u32('topic_id'),
    groupId: r.u32('group_id'),
    sourceClient: r.u128('source_client'),
    partitionId: r.u32('partition_id'),
  }));
}

export function encodeTruncatePartition(b: TruncatePartitionBody): Uint8Array {
  return encodeWith((w) => {
    writeIdentifier(w, b.streamId);
    writeIdentifier(w, b.topicId);
    w.u32(b.partitionId).u64(b.upToOffset);
  });
}

export function decodeTruncatePartition(bytes: Uint8Array): Decoded<TruncatePartitionBody> {
  return decodeExact(bytes, (r) => ({
    streamId: readIdentifier(r, 'stream_id'),
    topicId: readIdentifier(r, 'topic_id'),
    partitionId: r.u32('partition_id'),
    upToOffset: r.u64('up_to_offset'),
  }));
}

export function encodeCreatePat(b: CreatePatBody): Uint8Array {
  return encodeWith((w) => {
    writeName(w, b.name);
    w.u64(b.expiry);
    writeName(w, b.token);
  });
}

export function decodeCreatePat(bytes: Uint8Array): Decoded<CreatePatBody> {
  return decodeExact(bytes, (r) => ({ name: readName(r, 'token_name'), expiry: r.u64('expiry'), token: readName(r, 'token') }));
}

export function encodeJoinGroup(b: JoinGroupBody): Uint8Array {
  return encodeWith((w) => {
    writeIdentifier(w, b.streamId);
    writeIdentifier(w, b.topicId);
    writeIdentifier(w, b.groupId);
    w.u32(b.inFlight.length);
    for (const p of b.inFlight) w.u32(p);
  });
}

export function decodeJoinGroup(bytes: Uint8Array): Decoded<JoinGroupBody> {
  return decodeExact(bytes, (r) => {
    const streamId = readIdentifier(r, 'stream_id');
    const topicId = readIdentifier(r, 'topic_id');
    const groupId = readIdentifier(r, 'group_id');
    const count = r.u32('in_flight_count');
    const inFlight: number[] = [];
    if (checkCount(r, count, 4, 'in_flight')) {
      for (let i = 0; i < count && !r.failed; i++) inFlight.push(r.u32('in_flight_partition'));
    }
    return { streamId, topicId, groupId, inFlight };
  });
}
