/**
 * A sequential shadow model of the metadata state for the operations the workload issues: a few
 * maps, written from the rules of commands.mdx / docs/state-metadata.md, not from the state
 * machine's code. The checker feeds it the committed log IN OP ORDER; for every op it predicts the
 * result code and (for creates) the assigned id, which every acknowledged reply must match
 * (linearizability: the replies are explained by one sequential execution, the committed order).
 *
 * Ids: streams, topics and users take the lowest free id (users: root is 0, created by the first
 * CreateUser ever); consumer groups are numbered per topic, monotonically, never reused.
 */
import {
  ErrorCode, Operation, type Identifier, createConsumerGroupCommand, createStreamCommand, createUserCommand,
  deleteConsumerGroupCommand, deleteStreamCommand, deleteTopicCommand, deleteUserCommand, updateStreamCommand,
} from '@shoal/protocol';
import { decodeCreateTopicWithAssignments } from '@shoal/state';

interface ModelTopic {
  readonly id: number;
  readonly name: string;
  readonly partitions: number;
  readonly groups: Map<string, number>;
  nextGroup: number;
}

interface ModelStream {
  readonly id: number;
  name: string;
  readonly topics: Map<number, ModelTopic>;
}

export interface Prediction {
  readonly code: number;
  readonly createdId: number | null;
}

/** Operations the model understands; anything else is skipped (no prediction). */
const MODELLED = new Set<number>([
  Operation.CreateStream, Operation.UpdateStream, Operation.DeleteStream, Operation.CreateTopicWithAssignments,
  Operation.DeleteTopic, Operation.CreateUser, Operation.DeleteUser, Operation.CreateConsumerGroup, Operation.DeleteConsumerGroup,
]);

function lowestFree(used: Iterable<number>): number {
  const set = new Set(used);
  let id = 0;
  while (set.has(id)) id++;
  return id;
}

export class ShadowModel {
  readonly streams = new Map<number, ModelStream>();
  readonly users = new Map<number, string>();
  /** Ops applied so far (the model is at this op). */
  op = 0;

  static models(operation: number): boolean {
    return MODELLED.has(operation);
  }

  /** Applies committed op `op` (must be this.op + 1). Null when the operation is not modelled. */
  apply(op: number, operation: number, body: Uint8Array): Prediction | null {
    if (op !== this.op + 1) throw new Error(`shadow model: op ${op} after ${this.op}`);
    this.op = op;
    switch (operation) {
      case Operation.CreateStream: return this.#createStream(body);
      case Operation.UpdateStream: return this.#updateStream(body);
      case Operation.DeleteStream: return this.#deleteStream(body);
      case Operation.CreateTopicWithAssignments: return this.#createTopic(body);
      case Operation.DeleteTopic: return this.#deleteTopic(body);
      case Operation.CreateUser: return this.#createUser(body);
      case Operation.DeleteUser: return this.#deleteUser(body);
      case Operation.CreateConsumerGroup: return this.#createGroup(body);
      case Operation.DeleteConsumerGroup: return this.#deleteGroup(body);
      default: return null;
    }
  }

  /** A canonical, comparable summary of the modelled state. */
  summary(): string {
    const streams = [...this.streams.values()].sort((a, b) => a.id - b.id).map((s) => {
      const topics = [...s.topics.values()].sort((a, b) => a.id - b.id)
        .map((t) => `${t.id}:${t.name}:${t.partitions}[${[...t.groups.entries()].sort((a, b) => a[1] - b[1]).map(([n, id]) => `${id}=${n}`).join(',')}]`);
      return `${s.id}:${s.name}{${topics.join(';')}}`;
    });
    const users = [...this.users.entries()].sort((a, b) => a[0] - b[0]).map(([id, name]) => `${id}:${name}`);
    return `streams=${streams.join('|')} users=${users.join(',')}`;
  }

  #stream(id: Identifier): ModelStream | undefined {
    if (id.kind === 'numeric') return this.streams.get(id.value);
    for (const s of this.streams.values()) if (s.name === id.value) return s;
    return undefined;
  }

  #topic(stream: ModelStream, id: Identifier): ModelTopic | undefined {
    if (id.kind === 'numeric') return stream.topics.get(id.value);
    for (const t of stream.topics.values()) if (t.name === id.value) return t;
    return undefined;
  }

  #createStream(body: Uint8Array): Prediction {
    const r = createStreamCommand.decodeRequest(body);
    if (!r.ok) return { code: ErrorCode.InvalidCommand, createdId: null };
    if (this.#stream({ kind: 'string', value: r.value.name }) !== undefined) return { code: ErrorCode.StreamNameAlreadyExists, createdId: null };
    const id = lowestFree(this.streams.keys());
    this.streams.set(id, { id, name: r.value.name, topics: new Map() });
    return { code: 0, createdId: id };
  }

  #updateStream(body: Uint8Array): Prediction {
    const r = updateStreamCommand.decodeRequest(body);
    if (!r.ok) return { code: ErrorCode.InvalidCommand, createdId: null };
    const stream = this.#stream(r.value.streamId);
    if (stream === undefined) return { code: ErrorCode.StreamIdNotFound, createdId: null };
    const holder = this.#stream({ kind: 'string', value: r.value.name });
    if (holder !== undefined && holder !== stream) return { code: ErrorCode.StreamNameAlreadyExists, createdId: null };
    stream.name = r.value.name;
    return { code: 0, createdId: null };
  }

  #deleteStream(body: Uint8Array): Prediction {
    const r = deleteStreamCommand.decodeRequest(body);
    if (!r.ok) return { code: ErrorCode.InvalidCommand, createdId: null };
    const stream = this.#stream(r.value.streamId);
    if (stream === undefined) return { code: ErrorCode.StreamIdNotFound, createdId: null };
    this.streams.delete(stream.id);
    return { code: 0, createdId: null };
  }

  #createTopic(body: Uint8Array): Prediction {
    const r = decodeCreateTopicWithAssignments(body);
    if (!r.ok) return { code: ErrorCode.InvalidCommand, createdId: null };
    const stream = this.streams.get(r.value.streamId);
    if (stream === undefined) return { code: ErrorCode.StreamIdNotFound, createdId: null };
    if (this.#topic(stream, { kind: 'string', value: r.value.name }) !== undefined) return { code: ErrorCode.TopicNameAlreadyExists, createdId: null };
    const id = lowestFree(stream.topics.keys());
    stream.topics.set(id, { id, name: r.value.name, partitions: r.value.partitionsCount, groups: new Map(), nextGroup: 0 });
    return { code: 0, createdId: id };
  }

  #deleteTopic(body: Uint8Array): Prediction {
    const r = deleteTopicCommand.decodeRequest(body);
    if (!r.ok) return { code: ErrorCode.InvalidCommand, createdId: null };
    const stream = this.#stream(r.value.streamId);
    if (stream === undefined) return { code: ErrorCode.StreamIdNotFound, createdId: null };
    const topic = this.#topic(stream, r.value.topicId);
    if (topic === undefined) return { code: ErrorCode.TopicIdNotFound, createdId: null };
    stream.topics.delete(topic.id);
    return { code: 0, createdId: null };
  }

  #createUser(body: Uint8Array): Prediction {
    const r = createUserCommand.decodeRequest(body);
    if (!r.ok) return { code: ErrorCode.InvalidCommand, createdId: null };
    for (const name of this.users.values()) if (name === r.value.username) return { code: ErrorCode.UserAlreadyExists, createdId: null };
    const id = this.users.size === 0 ? 0 : lowestFree(this.users.keys());
    this.users.set(id, r.value.username);
    return { code: 0, createdId: id };
  }

  #deleteUser(body: Uint8Array): Prediction {
    const r = deleteUserCommand.decodeRequest(body);
    if (!r.ok) return { code: ErrorCode.InvalidCommand, createdId: null };
    let id: number | undefined;
    if (r.value.userId.kind === 'numeric') id = this.users.has(r.value.userId.value) ? r.value.userId.value : undefined;
    else for (const [uid, name] of this.users) if (name === r.value.userId.value) id = uid;
    if (id === undefined) return { code: ErrorCode.ResourceNotFound, createdId: null };
    if (id === 0) return { code: ErrorCode.CannotDeleteUser, createdId: null };
    this.users.delete(id);
    return { code: 0, createdId: null };
  }

  #groupTarget(streamId: Identifier, topicId: Identifier): ModelTopic | { code: number } {
    const stream = this.#stream(streamId);
    if (stream === undefined) return { code: ErrorCode.StreamIdNotFound };
    const topic = this.#topic(stream, topicId);
    return topic ?? { code: ErrorCode.TopicIdNotFound };
  }

  #createGroup(body: Uint8Array): Prediction {
    const r = createConsumerGroupCommand.decodeRequest(body);
    if (!r.ok) return { code: ErrorCode.InvalidCommand, createdId: null };
    const topic = this.#groupTarget(r.value.streamId, r.value.topicId);
    if ('code' in topic) return { code: topic.code, createdId: null };
    if (topic.groups.has(r.value.name)) return { code: ErrorCode.ConsumerGroupNameAlreadyExists, createdId: null };
    const id = topic.nextGroup++;
    topic.groups.set(r.value.name, id);
    return { code: 0, createdId: id };
  }

  #deleteGroup(body: Uint8Array): Prediction {
    const r = deleteConsumerGroupCommand.decodeRequest(body);
    if (!r.ok) return { code: ErrorCode.InvalidCommand, createdId: null };
    const topic = this.#groupTarget(r.value.streamId, r.value.topicId);
    if ('code' in topic) return { code: topic.code, createdId: null };
    let name: string | undefined;
    for (const [n, id] of topic.groups) {
      if (r.value.groupId.kind === 'numeric' ? id === r.value.groupId.value : n === r.value.groupId.value) name = n;
    }
    if (name === undefined) return { code: ErrorCode.ConsumerGroupIdNotFound, createdId: null };
    topic.groups.delete(name);
    return { code: 0, createdId: null };
  }
}
