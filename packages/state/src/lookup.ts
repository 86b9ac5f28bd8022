import type { Identifier } from '@shoal/protocol';
import type { ConsumerGroup, MetadataModel, Stream, Topic, User } from './model.js';

/** Identifier resolution: numeric → by id, string → by exact name. */
export function findStream(model: MetadataModel, id: Identifier): Stream | undefined {
  if (id.kind === 'numeric') return model.streams.get(id.value);
  const sid = model.streamIndex.get(id.value);
  return sid === undefined ? undefined : model.streams.get(sid);
}

export function findTopic(stream: Stream, id: Identifier): Topic | undefined {
  if (id.kind === 'numeric') return stream.topics.get(id.value);
  const tid = stream.topicIndex.get(id.value);
  return tid === undefined ? undefined : stream.topics.get(tid);
}

export function findGroup(topic: Topic, id: Identifier): ConsumerGroup | undefined {
  if (id.kind === 'numeric') return topic.consumerGroups.get(id.value);
  const gid = topic.groupIndex.get(id.value);
  return gid === undefined ? undefined : topic.consumerGroups.get(gid);
}

export function findUser(model: MetadataModel, id: Identifier): User | undefined {
  if (id.kind === 'numeric') return model.users.get(id.value);
  const uid = model.userIndex.get(id.value);
  return uid === undefined ? undefined : model.users.get(uid);
}

/** Consumer groups of a topic in ascending id order. */
export function groupsInOrder(topic: Topic): ConsumerGroup[] {
  return [...topic.consumerGroups.values()].sort((a, b) => a.id - b.id);
}

/** Apply context: what the prepare header says about the committed op. */
export interface ApplyContext {
  /** Prepare timestamp, µs. The only clock a state machine sees. */
  readonly timestamp: bigint;
  /** Acting user stamped by the metadata primary (0 = root, and server-originated ops). */
  readonly userId: number;
  /** The requesting VSR client id (u128; 0 for server-originated ops). */
  readonly client: bigint;
  readonly op: bigint;
}
