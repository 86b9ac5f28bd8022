import {
  ErrorCode, STREAM_ID_LIMIT, createStreamCommand, deleteStreamCommand, purgeStreamCommand, updateStreamCommand,
} from '@shoal/protocol';
import { IdTable } from './id-table.js';
import { type ApplyContext, findStream } from './lookup.js';
import type { MetadataModel, Stream, Topic } from './model.js';
import { NotFound, type Outcome, accepted, rejected } from './outcome.js';
import { canCreateStream, canManageStream } from './permissions.js';
import { checkEmptyScope } from './topic-options.js';

/**
 * Stream operations (128..131). Order of checks (reference, core/metadata/src/stm/authz.rs and
 * stream.rs): resolve the target (not found wins), authorize, then validate and mutate.
 */
export function applyCreateStream(model: MetadataModel, body: Uint8Array, ctx: ApplyContext): Outcome {
  const req = createStreamCommand.decodeRequest(body);
  if (!req.ok) return rejected(ErrorCode.InvalidCommand);
  if (!canCreateStream(model.users.get(ctx.userId))) return rejected(ErrorCode.Unauthorized);
  if (model.streamIndex.has(req.value.name)) return rejected(ErrorCode.StreamNameAlreadyExists);
  const optionsProblem = checkEmptyScope(req.value.options);
  if (optionsProblem !== null) return rejected(optionsProblem);
  const id = model.streams.nextId();
  if (id >= STREAM_ID_LIMIT) return rejected(ErrorCode.TooManyStreams);
  const stream: Stream = {
    id, name: req.value.name, createdAt: ctx.timestamp, options: new Map(), topics: new IdTable<Topic>(), topicIndex: new Map(),
  };
  model.streams.insert(id, stream);
  model.streamIndex.set(stream.name, id);
  return accepted(createStreamCommand.encodeResponse({
    id, createdAt: ctx.timestamp, topicsCount: 0, sizeBytes: 0n, messagesCount: 0n, name: stream.name, options: [], topics: [],
  }));
}

export function applyUpdateStream(model: MetadataModel, body: Uint8Array, ctx: ApplyContext): Outcome {
  const req = updateStreamCommand.decodeRequest(body);
  if (!req.ok) return rejected(ErrorCode.InvalidCommand);
  const stream = findStream(model, req.value.streamId);
  if (stream === undefined) return rejected(NotFound.stream);
  if (!canManageStream(model.users.get(ctx.userId), stream.id)) return rejected(ErrorCode.Unauthorized);
  const holder = model.streamIndex.get(req.value.name);
  if (holder !== undefined && holder !== stream.id) return rejected(ErrorCode.StreamNameAlreadyExists);
  const optionsProblem = checkEmptyScope(req.value.options);
  if (optionsProblem !== null) return rejected(optionsProblem);
  model.streamIndex.delete(stream.name);
  stream.name = req.value.name;
  model.streamIndex.set(stream.name, stream.id);
  return accepted();
}

export function applyDeleteStream(model: MetadataModel, body: Uint8Array, ctx: ApplyContext): Outcome {
  const req = deleteStreamCommand.decodeRequest(body);
  if (!req.ok) return rejected(ErrorCode.InvalidCommand);
  const stream = findStream(model, req.value.streamId);
  if (stream === undefined) return rejected(NotFound.stream);
  if (!canManageStream(model.users.get(ctx.userId), stream.id)) return rejected(ErrorCode.Unauthorized);
  model.streams.delete(stream.id);
  model.streamIndex.delete(stream.name);
  model.revision += 1n;
  return accepted();
}

/**
 * Purge keeps the stream, its topics, partitions and consumer groups; every partition's purge
 * generation advances and its delete watermark resets (the partition plane wipes messages and
 * consumer offsets when it observes the new generation).
 */
export function applyPurgeStream(model: MetadataModel, body: Uint8Array, ctx: ApplyContext): Outcome {
  const req = purgeStreamCommand.decodeRequest(body);
  if (!req.ok) return rejected(ErrorCode.InvalidCommand);
  const stream = findStream(model, req.value.streamId);
  if (stream === undefined) return rejected(NotFound.stream);
  if (!canManageStream(model.users.get(ctx.userId), stream.id)) return rejected(ErrorCode.Unauthorized);
  let advanced = false;
  for (const topic of stream.topics.values()) advanced = purgeTopicPartitions(topic) || advanced;
  if (advanced) model.revision += 1n;
  return accepted();
}

export function purgeTopicPartitions(topic: Topic): boolean {
  for (const partition of topic.partitions) {
    partition.purgeGeneration += 1n;
    partition.deletedUpToOffset = 0n;
  }
  return topic.partitions.length > 0;
}
