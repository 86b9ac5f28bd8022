/**
 * What simulated clients ask for: metadata operations over small name pools (so creates collide,
 * deletes miss, and the shadow model has work), and message batches / consumer-offset writes on
 * the data topic (`data`/`events`, created by client 0 first and never deleted, so every
 * acknowledged batch must stay readable).
 *
 * Consumer offsets: each client writes its own two consumers (ids `4c` and `4c + 1`: one writer
 * per key) with values that grow with the client's operation counter, so the committed order of
 * one key's writes is checkable: it must follow the client's order except for replays of an
 * earlier write or writes whose outcome the client never learned (offsets.ts). Quorum ack.
 */
import {
  AckLevel, Operation, buildBatch, createConsumerGroupCommand, createStreamCommand, createTopicCommand, createUserCommand,
  deleteConsumerGroupCommand, deleteConsumerOffsetCommand, deleteStreamCommand, deleteTopicCommand, deleteUserCommand, sendMessagesCommand,
  storeConsumerOffsetCommand, stringIdentifier, numericIdentifier, updateStreamCommand,
} from '@shoal/protocol';
import type { Prng } from '@shoal/stdx';

export const DATA_STREAM = 'data';
export const DATA_TOPIC = 'events';

export interface WorkloadOptions {
  /** Partitions of the data topic. */
  readonly dataPartitions: number;
  /** Probability (0..1) that an op is a metadata op rather than a partition op. */
  readonly metadataShare: number;
  /** Messages per batch, 1..max. */
  readonly messagesMax: number;
  /** Of the partition-plane ops, the share that are consumer-offset writes. */
  readonly offsetShare: number;
  /** Clients fire their next operation at once (no think time): bursts across many partitions. */
  readonly burst: boolean;
}

export type WorkKind =
  | 'create_stream' | 'update_stream' | 'delete_stream' | 'create_topic' | 'delete_topic' | 'create_user' | 'delete_user'
  | 'create_group' | 'delete_group' | 'send' | 'store_offset' | 'delete_offset' | 'setup_stream' | 'setup_topic';

/** One request a client will make (encoded once; retries resend the same bytes). */
export interface WorkOp {
  readonly kind: WorkKind;
  readonly operation: number;
  readonly body: Uint8Array;
  /** send: the data partition, the message count and the frames region (what must be readable). */
  readonly partitionId?: number;
  readonly messages?: number;
  readonly frames?: Uint8Array;
  /** store_offset / delete_offset: the consumer id (numeric: it is also the key) and the value (null: delete). */
  readonly consumer?: number;
  readonly offset?: bigint | null;
}

const STREAMS = ['s0', 's1', 's2', 's3'];
const TOPICS = ['t0', 't1', 't2'];
const USERS = ['user0', 'user1', 'user2', 'user3'];
const GROUPS = ['g0', 'g1'];

export function setupOps(options: WorkloadOptions): WorkOp[] {
  return [
    { kind: 'setup_stream', operation: Operation.CreateStream, body: createStreamCommand.encodeRequest({ name: DATA_STREAM, options: [] }) },
    {
      kind: 'setup_topic', operation: Operation.CreateTopic,
      body: createTopicCommand.encodeRequest({ streamId: stringIdentifier(DATA_STREAM), partitionsCount: options.dataPartitions, name: DATA_TOPIC, options: [] }),
    },
  ];
}

export function nextOp(prng: Prng, options: WorkloadOptions, client: number, seq: number): WorkOp {
  if (prng.float() < options.metadataShare) return metadataOp(prng);
  return prng.float() < options.offsetShare ? offsetOp(prng, options, client, seq) : sendOp(prng, options, client, seq);
}

/** A producer's fan-out: batches to 4..16 distinct partitions, sent at once. */
export function burstOps(prng: Prng, options: WorkloadOptions, client: number, nextSeq: () => number): WorkOp[] {
  const count = Math.min(options.dataPartitions, prng.range(4, 16));
  const partitions = prng.shuffle(Array.from({ length: options.dataPartitions }, (_, i) => i)).slice(0, count);
  return partitions.map((partitionId) => sendOp(prng, options, client, nextSeq(), partitionId));
}

function metadataOp(prng: Prng): WorkOp {
  const stream = prng.pick(STREAMS);
  const topic = prng.pick(TOPICS);
  switch (prng.below(9)) {
    case 0:
    case 1:
      return { kind: 'create_stream', operation: Operation.CreateStream, body: createStreamCommand.encodeRequest({ name: stream, options: [] }) };
    case 2:
      return {
        kind: 'update_stream', operation: Operation.UpdateStream,
        body: updateStreamCommand.encodeRequest({ streamId: stringIdentifier(stream), name: prng.pick(STREAMS), options: [] }),
      };
    case 3:
      return { kind: 'delete_stream', operation: Operation.DeleteStream, body: deleteStreamCommand.encodeRequest({ streamId: stringIdentifier(stream) }) };
    case 4:
      return {
        kind: 'create_topic', operation: Operation.CreateTopic,
        body: createTopicCommand.encodeRequest({ streamId: stringIdentifier(stream), partitionsCount: prng.range(0, 2), name: topic, options: [] }),
      };
    case 5:
      return {
        kind: 'delete_topic', operation: Operation.DeleteTopic,
        body: deleteTopicCommand.encodeRequest({ streamId: stringIdentifier(stream), topicId: stringIdentifier(topic) }),
      };
    case 6: {
      if (prng.bool()) {
        return {
          kind: 'create_user', operation: Operation.CreateUser,
          body: createUserCommand.encodeRequest({ username: prng.pick(USERS), password: 'secret', status: 1, permissions: null, options: [] }),
        };
      }
      return { kind: 'delete_user', operation: Operation.DeleteUser, body: deleteUserCommand.encodeRequest({ userId: stringIdentifier(prng.pick(USERS)) }) };
    }
    case 7:
      return {
        kind: 'create_group', operation: Operation.CreateConsumerGroup,
        body: createConsumerGroupCommand.encodeRequest({ streamId: stringIdentifier(DATA_STREAM), topicId: stringIdentifier(DATA_TOPIC), name: prng.pick(GROUPS) }),
      };
    default:
      return {
        kind: 'delete_group', operation: Operation.DeleteConsumerGroup,
        body: deleteConsumerGroupCommand.encodeRequest({
          streamId: stringIdentifier(DATA_STREAM), topicId: stringIdentifier(DATA_TOPIC), groupId: stringIdentifier(prng.pick(GROUPS)),
        }),
      };
  }
}

export function sendOp(prng: Prng, options: WorkloadOptions, client: number, seq: number, partition?: number): WorkOp {
  const partitionId = partition ?? prng.below(options.dataPartitions);
  const count = prng.range(1, options.messagesMax);
  const messages = [];
  for (let i = 0; i < count; i++) {
    messages.push({ id: (BigInt(client + 1) << 64n) | BigInt(seq * 64 + i), payload: prng.bytes(prng.range(1, 48)), originTimestamp: 1n });
  }
  const built = buildBatch(messages);
  if (!built.ok) throw new Error(`workload batch: ${built.reason}`);
  const batch = built.value;
  return {
    kind: 'send', operation: Operation.SendMessages,
    body: sendMessagesCommand.encodeRequest({
      streamId: stringIdentifier(DATA_STREAM), topicId: stringIdentifier(DATA_TOPIC), partitioning: { kind: 'partition_id', partitionId },
      messagesCount: count, batch,
    }),
    partitionId, messages: count, frames: batch.slice(256),
  };
}

function offsetOp(prng: Prng, options: WorkloadOptions, client: number, seq: number): WorkOp {
  const partitionId = prng.below(options.dataPartitions);
  const consumerId = client * 4 + prng.below(2);
  const target = {
    consumer: { kind: 'consumer' as const, id: numericIdentifier(consumerId) }, streamId: stringIdentifier(DATA_STREAM),
    topicId: stringIdentifier(DATA_TOPIC), partitionId, ack: AckLevel.Quorum,
  };
  if (prng.below(6) === 0) {
    return {
      kind: 'delete_offset', operation: Operation.DeleteConsumerOffset, body: deleteConsumerOffsetCommand.encodeRequest(target),
      partitionId, consumer: consumerId, offset: null,
    };
  }
  // Grows with the client's counter: one key's values are distinct and in the client's order.
  const offset = BigInt(seq) * 8n + BigInt(prng.below(8));
  return {
    kind: 'store_offset', operation: Operation.StoreConsumerOffset, body: storeConsumerOffsetCommand.encodeRequest({ ...target, offset }),
    partitionId, consumer: consumerId, offset,
  };
}
