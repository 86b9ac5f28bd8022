import {
  type BatchRejectReason, ErrorCode, type Identifier, type Partitioning, packPartitionGroup, sendMessagesCommand,
  utf8Encoder, validateBatch,
} from '@shoal/protocol';
import type { MetadataState } from './metadata-state.js';
import { NotFound } from './outcome.js';
import { canSendMessages } from './permissions.js';

/**
 * Partition selection for SendMessages, on the node that receives the request (before routing to
 * the partition's primary), as the reference server does:
 *   Balanced     a per-node round-robin counter per topic (the HOST owns the counter): index =
 *                counter mod count, next counter = (counter + 1) mod count;
 *   PartitionId  must name an existing partition (PartitionNotFound otherwise);
 *   MessagesKey  XXH32 (seed 0) of the raw key bytes, modulo the partition count, indexing the
 *                topic's partitions in ascending id order.
 * The hash is injected: the host passes xxhash-wasm's raw 32-bit hash
 * (`(bytes) => h32Raw(bytes, 0)`); xxhash-wasm must be initialised asynchronously, which a state
 * machine may not do.
 */
export type Hash32 = (bytes: Uint8Array) => number;

export type PartitionChoice =
  | { readonly ok: true; readonly partitionId: number; readonly nextBalancedCounter: number }
  | { readonly ok: false; readonly code: number };

/** `partitionIds` in ascending order. */
export function choosePartition(partitioning: Partitioning, partitionIds: readonly number[], balancedCounter: number, h32: Hash32): PartitionChoice {
  const count = partitionIds.length;
  if (count === 0) return { ok: false, code: ErrorCode.NoPartitions };
  switch (partitioning.kind) {
    case 'balanced': {
      const index = balancedCounter % count;
      return { ok: true, partitionId: partitionIds[index] as number, nextBalancedCounter: (index + 1) % count };
    }
    case 'partition_id':
      return partitionIds.includes(partitioning.partitionId)
        ? { ok: true, partitionId: partitioning.partitionId, nextBalancedCounter: balancedCounter }
        : { ok: false, code: NotFound.partition };
    case 'messages_key': {
      const index = (h32(partitioning.key) >>> 0) % count;
      return { ok: true, partitionId: partitionIds[index] as number, nextBalancedCounter: balancedCounter };
    }
  }
}

/**
 * The u32 key a consumer's offsets are stored under: a numeric id as is; a string id hashed
 * (XXH32 seed 0 of its UTF-8 bytes), as the reference's polling consumer resolves it.
 */
export function consumerKey(id: Identifier, h32: Hash32): number {
  return id.kind === 'numeric' ? id.value : h32(utf8Encoder.encode(id.value)) >>> 0;
}

/** A batch refusal as the IggyError a client sees. */
export function batchRejectCode(reason: BatchRejectReason): number {
  switch (reason) {
    case 'batch_empty': return ErrorCode.InvalidMessagesCount;
    case 'batch_too_many_messages': return ErrorCode.TooManyMessages;
    case 'frame_checksum_mismatch': return ErrorCode.InvalidMessageChecksum;
    case 'batch_checksum_mismatch': return ErrorCode.InvalidBatchChecksum;
    case 'batch_header_reserved_nonzero':
    case 'frame_reserved_nonzero': return ErrorCode.InvalidReservedField;
    case 'frame_payload_too_large': return ErrorCode.TooBigMessagePayload;
    case 'frame_user_headers_too_large': return ErrorCode.TooBigUserHeaders;
    case 'frame_offset_delta_mismatch': return ErrorCode.InvalidOffset;
    default: return ErrorCode.InvalidMessagesSize;
  }
}

export interface SendAdmission {
  readonly streamId: number;
  readonly topicId: number;
  readonly partitionId: number;
  /** The partition's consensus group (route the prepare there). */
  readonly group: bigint;
  /** The validated batch (a view into the request body): the partition prepare body to stamp. */
  readonly batch: Uint8Array;
  readonly nextBalancedCounter: number;
}

export type SendAdmissionResult =
  | { readonly kind: 'route'; readonly value: SendAdmission }
  | { readonly kind: 'reject'; readonly status: number }
  | { readonly kind: 'evict'; readonly reason: 'invalid_request_body'; readonly detail: string };

/**
 * SendMessages admission: decode, resolve stream and topic, authorize (send_messages), choose the
 * partition, validate the batch (every checksum, structure, limits; the producer leaves
 * partition_id, base_offset and base_timestamp zero; messages_count matches the batch).
 */
export function admitSendMessages(metadata: MetadataState, body: Uint8Array, userId: number, balancedCounter: number, h32: Hash32): SendAdmissionResult {
  const req = sendMessagesCommand.decodeRequest(body);
  if (!req.ok) return { kind: 'evict', reason: 'invalid_request_body', detail: req.reason };
  const found = metadata.topic(req.value.streamId, req.value.topicId);
  if (found === undefined) {
    return { kind: 'reject', status: metadata.stream(req.value.streamId) === undefined ? NotFound.stream : NotFound.topic };
  }
  const { stream, topic } = found;
  if (!canSendMessages(metadata.user(userId), stream.id, topic.id)) return { kind: 'reject', status: ErrorCode.Unauthorized };
  const choice = choosePartition(req.value.partitioning, topic.partitions.map((p) => p.id), balancedCounter, h32);
  if (!choice.ok) return { kind: 'reject', status: choice.code };
  const verdict = validateBatch(req.value.batch);
  if (!verdict.ok) return { kind: 'reject', status: batchRejectCode(verdict.reason) };
  const v = verdict.value;
  if (v.messageCount !== req.value.messagesCount) return { kind: 'reject', status: ErrorCode.InvalidMessagesCount };
  if (v.baseOffset !== 0n || v.partitionId !== 0n) return { kind: 'reject', status: ErrorCode.NonZeroOffset };
  if (v.baseTimestamp !== 0n) return { kind: 'reject', status: ErrorCode.NonZeroTimestamp };
  const group = packPartitionGroup(stream.id, topic.id, choice.partitionId);
  if (!group.ok) return { kind: 'reject', status: ErrorCode.PartitionIdSpaceExhausted };
  return {
    kind: 'route',
    value: { streamId: stream.id, topicId: topic.id, partitionId: choice.partitionId, group: group.value, batch: req.value.batch, nextBalancedCounter: choice.nextBalancedCounter },
  };
}

