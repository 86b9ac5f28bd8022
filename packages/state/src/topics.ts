import {
  ErrorCode, type OptionEntry, PARTITION_ID_LIMIT, TOPIC_ID_LIMIT, type TopicDetails, type TopicInfo, createTopicCommand,
  deleteTopicCommand, purgeTopicCommand, updateTopicCommand,
} from '@shoal/protocol';
import { decodeCreateTopicWithAssignments } from './internal-bodies.js';
import { type ApplyContext, findStream, findTopic } from './lookup.js';
import { type MetadataModel, type StoredOption, type Stream, type Topic, sortedOptions } from './model.js';
import { NotFound, type Outcome, accepted, rejected } from './outcome.js';
import {
  PARTITIONS_PER_REQUEST_MAX, type PartitionCountersSource, ZERO_COUNTERS, addPartitions, deriveAssignments, partitionInfos,
} from './partitions.js';
import { canCreateTopic, canManageTopic } from './permissions.js';
import { purgeTopicPartitions } from './streams.js';
import { readCommittedOptions, resolveTopicUpdateOptions, topicSettingsOf } from './topic-options.js';

/** Topic operations: 64 (the committed form of CreateTopic), 133, 134, 135. */

export function compressionCode(topic: Topic): number {
  return topic.compression === 'gzip' ? 2 : 1;
}

export function toOptionEntries(options: readonly StoredOption[]): OptionEntry[] {
  return options.map((o) => ({ key: o.key, valueKind: o.kind, value: o.value }));
}

export function topicInfo(stream: Stream, topic: Topic, counters: PartitionCountersSource): TopicInfo {
  const sorted = sortedOptions(topic.options);
  let sizeBytes = 0n;
  let messagesCount = 0n;
  for (const p of topic.partitions) {
    const c = counters(stream.id, topic.id, p.id) ?? ZERO_COUNTERS;
    sizeBytes += c.sizeBytes;
    messagesCount += c.messagesCount;
  }
  return {
    id: topic.id, createdAt: topic.createdAt, partitionsCount: topic.partitions.length, messageExpiry: topic.messageExpiry,
    compressionAlgorithm: compressionCode(topic), maxTopicSize: topic.maxTopicSize, sizeBytes, messagesCount, name: topic.name,
    options: toOptionEntries(sorted.filter((o) => o.explicit)),
    derivedOptions: toOptionEntries(sorted.filter((o) => !o.explicit)),
  };
}

export function topicDetails(stream: Stream, topic: Topic, counters: PartitionCountersSource): TopicDetails {
  return { ...topicInfo(stream, topic, counters), partitions: partitionInfos(stream.id, topic, counters) };
}

/**
 * 64 CreateTopicWithAssignments. Re-validates everything admission checked (the state may have
 * moved since: two creates of one name in the pipeline), takes the topic id from committed state
 * (lowest free id) and re-derives the partition assignment for it; the body's predicted ids are
 * never trusted. The reply is the created topic in the GetTopic layout.
 */
export function applyCreateTopic(model: MetadataModel, body: Uint8Array, ctx: ApplyContext): Outcome {
  const req = decodeCreateTopicWithAssignments(body);
  if (!req.ok) return rejected(ErrorCode.InvalidCommand);
  const b = req.value;
  const stream = model.streams.get(b.streamId);
  if (stream === undefined) return rejected(NotFound.stream);
  if (!canCreateTopic(model.users.get(ctx.userId), stream.id)) return rejected(ErrorCode.Unauthorized);
  if (stream.topicIndex.has(b.name)) return rejected(ErrorCode.TopicNameAlreadyExists);
  const topicId = stream.topics.nextId();
  if (topicId >= TOPIC_ID_LIMIT) return rejected(ErrorCode.TooManyTopics);
  if (b.partitionsCount > PARTITIONS_PER_REQUEST_MAX) return rejected(ErrorCode.TooManyPartitions);
  if (b.assignments.length !== b.partitionsCount) return rejected(ErrorCode.InvalidPartitionsCount);
  if (b.partitionsCount > PARTITION_ID_LIMIT) return rejected(ErrorCode.PartitionIdSpaceExhausted);
  const explicit = readCommittedOptions(b.explicit, true);
  const derived = readCommittedOptions(b.derived, false);
  if (explicit === null || derived === null) return rejected(ErrorCode.InvalidOptionValue);
  const assignments = deriveAssignments(stream.id, topicId, 0, b.partitionsCount);
  if (assignments === null) return rejected(ErrorCode.PartitionIdSpaceExhausted);

  const options = new Map<string, StoredOption>();
  for (const o of derived) options.set(o.key, o);
  for (const o of explicit) options.set(o.key, o);
  const settings = topicSettingsOf(options);
  model.revision += 1n;
  const topic: Topic = {
    id: topicId, name: b.name, createdAt: ctx.timestamp, messageExpiry: settings.messageExpiry, compression: settings.compression,
    maxTopicSize: settings.maxTopicSize, options, partitions: [], consumerGroups: new Map(), groupIndex: new Map(), nextConsumerGroupId: 0,
  };
  addPartitions(topic, assignments, ctx.timestamp, model.revision);
  stream.topics.insert(topicId, topic);
  stream.topicIndex.set(topic.name, topicId);
  return accepted(createTopicCommand.encodeResponse(topicDetails(stream, topic, () => null)));
}

/** 133 UpdateTopic: rename plus a patch of compression_algorithm, message_expiry, max_topic_size. */
export function applyUpdateTopic(model: MetadataModel, body: Uint8Array, ctx: ApplyContext): Outcome {
  const req = updateTopicCommand.decodeRequest(body);
  if (!req.ok) return rejected(ErrorCode.InvalidCommand);
  const stream = findStream(model, req.value.streamId);
  if (stream === undefined) return rejected(NotFound.stream);
  const topic = findTopic(stream, req.value.topicId);
  if (topic === undefined) return rejected(NotFound.topic);
  if (!canManageTopic(model.users.get(ctx.userId), stream.id, topic.id)) return rejected(ErrorCode.Unauthorized);
  const holder = stream.topicIndex.get(req.value.name);
  if (holder !== undefined && holder !== topic.id) return rejected(ErrorCode.TopicNameAlreadyExists);
  const patch = resolveTopicUpdateOptions(req.value.options, topicSettingsOf(topic.options));
  if (!patch.ok) return rejected(patch.code);
  stream.topicIndex.delete(topic.name);
  topic.name = req.value.name;
  stream.topicIndex.set(topic.name, topic.id);
  for (const o of patch.explicit) topic.options.set(o.key, o);
  const settings = topicSettingsOf(topic.options);
  topic.messageExpiry = settings.messageExpiry;
  topic.maxTopicSize = settings.maxTopicSize;
  topic.compression = settings.compression;
  return accepted();
}

export function applyDeleteTopic(model: MetadataModel, body: Uint8Array, ctx: ApplyContext): Outcome {
  const req = deleteTopicCommand.decodeRequest(body);
  if (!req.ok) return rejected(ErrorCode.InvalidCommand);
  const stream = findStream(model, req.value.streamId);
  if (stream === undefined) return rejected(NotFound.stream);
  const topic = findTopic(stream, req.value.topicId);
  if (topic === undefined) return rejected(NotFound.topic);
  if (!canManageTopic(model.users.get(ctx.userId), stream.id, topic.id)) return rejected(ErrorCode.Unauthorized);
  stream.topics.delete(topic.id);
  stream.topicIndex.delete(topic.name);
  model.revision += 1n;
  return accepted();
}

export function applyPurgeTopic(model: MetadataModel, body: Uint8Array, ctx: ApplyContext): Outcome {
  const req = purgeTopicCommand.decodeRequest(body);
  if (!req.ok) return rejected(ErrorCode.InvalidCommand);
  const stream = findStream(model, req.value.streamId);
  if (stream === undefined) return rejected(NotFound.stream);
  const topic = findTopic(stream, req.value.topicId);
  if (topic === undefined) return rejected(NotFound.topic);
  if (!canManageTopic(model.users.get(ctx.userId), stream.id, topic.id)) return rejected(ErrorCode.Unauthorized);
  if (purgeTopicPartitions(topic)) model.revision += 1n;
  return accepted();
}
