import {
  ErrorCode, PARTITION_ID_LIMIT, type PartitionInfo, deletePartitionsCommand, packPartitionGroup,
} from '@shoal/protocol';
import { assert } from '@shoal/stdx';
import { rebalanceTopicGroups } from './consumer-groups.js';
import { decodeCreatePartitionsWithAssignments, decodeTruncatePartition, type PartitionAssignment } from './internal-bodies.js';
import { type ApplyContext, findStream, findTopic } from './lookup.js';
import type { MetadataModel, PartitionRecord, Topic } from './model.js';
import { NotFound, type Outcome, accepted, rejected } from './outcome.js';
import { canManageTopic } from './permissions.js';

/** Partitions created by one CreateTopic / CreatePartitions request, at most (reference). */
export const PARTITIONS_PER_REQUEST_MAX = 1000;

/** Live partition counters the partition plane owns; reads ask the host for them. */
export interface PartitionCounters {
  readonly currentOffset: bigint;
  readonly segmentsCount: number;
  readonly sizeBytes: bigint;
  readonly messagesCount: bigint;
}

export type PartitionCountersSource = (streamId: number, topicId: number, partitionId: number) => PartitionCounters | null;

export const ZERO_COUNTERS: PartitionCounters = Object.freeze({ currentOffset: 0n, segmentsCount: 0, sizeBytes: 0n, messagesCount: 0n });

/** The id the next created partition of `topic` gets: one past the highest (0 when none). */
export function nextPartitionId(topic: Topic): number {
  const last = topic.partitions[topic.partitions.length - 1];
  return last === undefined ? 0 : last.id + 1;
}

/**
 * The committed assignment for `count` new partitions of (stream, topic) starting at `base`:
 * partition ids base.., consensus group = the packed namespace. Null when an id leaves the packed
 * partition space (PartitionIdSpaceExhausted).
 */
export function deriveAssignments(streamId: number, topicId: number, base: number, count: number): PartitionAssignment[] | null {
  const out: PartitionAssignment[] = [];
  for (let i = 0; i < count; i++) {
    const group = packPartitionGroup(streamId, topicId, base + i);
    if (!group.ok) return null;
    out.push({ partitionId: base + i, consensusGroupId: group.value });
  }
  return out;
}

/** Appends partitions (ids contiguous and above every existing one: asserted). */
export function addPartitions(topic: Topic, assignments: readonly PartitionAssignment[], createdAt: bigint, revision: bigint): void {
  for (const a of assignments) {
    assert(a.partitionId === nextPartitionId(topic), `partition ids must stay contiguous (${a.partitionId})`);
    const record: PartitionRecord = {
      id: a.partitionId, consensusGroupId: a.consensusGroupId, createdAt, createdRevision: revision,
      deletedUpToOffset: 0n, purgeGeneration: 0n,
    };
    topic.partitions.push(record);
  }
}

export function partitionInfos(streamId: number, topic: Topic, counters: PartitionCountersSource): PartitionInfo[] {
  return topic.partitions.map((p) => {
    const c = counters(streamId, topic.id, p.id) ?? ZERO_COUNTERS;
    return {
      id: p.id, createdAt: p.createdAt, segmentsCount: c.segmentsCount, currentOffset: c.currentOffset,
      sizeBytes: c.sizeBytes, messagesCount: c.messagesCount,
    };
  });
}

/**
 * 65 CreatePartitionsWithAssignments. The body's ids are the admitting primary's prediction; the
 * committed ids are re-derived here (base = highest existing + 1), so a partition-shaping op that
 * committed in between cannot make two partitions share an id or a consensus group.
 */
export function applyCreatePartitions(model: MetadataModel, body: Uint8Array, ctx: ApplyContext): Outcome {
  const req = decodeCreatePartitionsWithAssignments(body);
  if (!req.ok) return rejected(ErrorCode.InvalidCommand);
  const stream = model.streams.get(req.value.streamId);
  if (stream === undefined) return rejected(NotFound.stream);
  const topic = stream.topics.get(req.value.topicId);
  if (topic === undefined) return rejected(NotFound.topic);
  if (!canManageTopic(model.users.get(ctx.userId), stream.id, topic.id)) return rejected(ErrorCode.Unauthorized);
  const count = req.value.partitionsCount;
  if (count < 1 || count > PARTITIONS_PER_REQUEST_MAX) return rejected(ErrorCode.TooManyPartitions);
  if (req.value.assignments.length !== count) return rejected(ErrorCode.InvalidPartitionsCount);
  if (nextPartitionId(topic) + count > PARTITION_ID_LIMIT) return rejected(ErrorCode.PartitionIdSpaceExhausted);
  const assignments = deriveAssignments(stream.id, topic.id, nextPartitionId(topic), count);
  if (assignments === null) return rejected(ErrorCode.PartitionIdSpaceExhausted);
  model.revision += 1n;
  addPartitions(topic, assignments, ctx.timestamp, model.revision);
  rebalanceTopicGroups(topic);
  return accepted();
}

/** 137 DeletePartitions: removes the `count` highest partitions; groups rebalance. */
export function applyDeletePartitions(model: MetadataModel, body: Uint8Array, ctx: ApplyContext): Outcome {
  const req = deletePartitionsCommand.decodeRequest(body);
  if (!req.ok) return rejected(ErrorCode.InvalidCommand);
  const stream = findStream(model, req.value.streamId);
  if (stream === undefined) return rejected(NotFound.stream);
  const topic = findTopic(stream, req.value.topicId);
  if (topic === undefined) return rejected(NotFound.topic);
  if (!canManageTopic(model.users.get(ctx.userId), stream.id, topic.id)) return rejected(ErrorCode.Unauthorized);
  const count = req.value.partitionsCount;
  if (count > topic.partitions.length) return rejected(ErrorCode.InvalidPartitionsCount);
  if (count === 0) return accepted();
  topic.partitions.splice(topic.partitions.length - count, count);
  rebalanceTopicGroups(topic);
  model.revision += 1n;
  return accepted();
}

/**
 * 68 TruncatePartition, the resolved form of DeleteSegments: advances the partition's delete
 * watermark monotonically (a stale or duplicate one never rewinds it). The revision moves on
 * every applied truncation so the partition owners re-evaluate retention.
 */
export function applyTruncatePartition(model: MetadataModel, body: Uint8Array, ctx: ApplyContext): Outcome {
  const req = decodeTruncatePartition(body);
  if (!req.ok) return rejected(ErrorCode.InvalidCommand);
  const stream = findStream(model, req.value.streamId);
  if (stream === undefined) return rejected(NotFound.stream);
  const topic = findTopic(stream, req.value.topicId);
  if (topic === undefined) return rejected(NotFound.topic);
  const partition = topic.partitions.find((p) => p.id === req.value.partitionId);
  if (partition === undefined) return rejected(NotFound.partition);
  if (!canManageTopic(model.users.get(ctx.userId), stream.id, topic.id)) return rejected(ErrorCode.Unauthorized);
  if (req.value.upToOffset > partition.deletedUpToOffset) partition.deletedUpToOffset = req.value.upToOffset;
  model.revision += 1n;
  return accepted();
}
