import {
  type AckLevel, type Consumer, type Decoded, ErrorCode, type Identifier, Operation, deleteConsumerOffsetCommand,
  packPartitionGroup, storeConsumerOffsetCommand, xxh3_64,
} from '@shoal/protocol';
import { assert } from '@shoal/stdx';
import type { MetadataState } from './metadata-state.js';
import { NotFound, StateErrorCode } from './outcome.js';
import { type Hash32, consumerKey } from './partitioning.js';
import { canPollMessages } from './permissions.js';
import { decodeExact, encodeWith } from '@shoal/protocol';

/**
 * Consumer offsets of one partition: per consumer (u32 key: numeric id, or XXH32 of a string id)
 * and per consumer group (the group's monotonic id). Deterministic iteration (ascending keys) for
 * the CONSUMER_OFFSETS artifact (ICO1).
 *
 * Partition prepare bodies of the two offset writes are resolved at admission (below), so apply
 * never needs metadata, and sealed (see `OFFSET_BODY_SEAL_SIZE`):
 *   161 StoreConsumerOffset   [kind u8: 1 consumer, 2 group][key u32][offset u64][seal u64]
 *   162 DeleteConsumerOffset  [kind u8][key u32][seal u64]
 */
export type ConsumerKind = 'consumer' | 'consumer_group';

export interface ConsumerRef {
  readonly kind: ConsumerKind;
  readonly key: number;
}

export class ConsumerOffsetTable {
  readonly #consumers = new Map<number, bigint>();
  readonly #groups = new Map<number, bigint>();

  #map(kind: ConsumerKind): Map<number, bigint> {
    return kind === 'consumer' ? this.#consumers : this.#groups;
  }

  get(ref: ConsumerRef): bigint | undefined {
    return this.#map(ref.kind).get(ref.key);
  }

  set(ref: ConsumerRef, offset: bigint): void {
    this.#map(ref.kind).set(ref.key, offset);
  }

  /** Auto-commit keeps the maximum (a late, older poll never rewinds the offset). */
  raise(ref: ConsumerRef, offset: bigint): void {
    const current = this.get(ref);
    if (current === undefined || offset > current) this.set(ref, offset);
  }

  delete(ref: ConsumerRef): boolean {
    return this.#map(ref.kind).delete(ref.key);
  }

  clear(): void {
    this.#consumers.clear();
    this.#groups.clear();
  }

  entries(kind: ConsumerKind): [number, bigint][] {
    return [...this.#map(kind).entries()].sort((a, b) => a[0] - b[0]);
  }
}

const KIND_CODE: Readonly<Record<ConsumerKind, number>> = { consumer: 1, consumer_group: 2 };

export interface StoreOffsetBody {
  readonly consumer: ConsumerRef;
  readonly offset: bigint;
}

type Reader = Parameters<Parameters<typeof decodeExact>[1]>[0];

function readRef(r: Reader): ConsumerRef {
  const kind = r.u8('consumer_kind');
  if (!r.failed && kind !== 1 && kind !== 2) r.fail('unknown_consumer_kind');
  return { kind: kind === 2 ? 'consumer_group' : 'consumer', key: r.u32('consumer_key') };
}

/**
 * Every resolved offset-write body ends with a seal: XXH3-64 (seed 0) of the bytes before it.
 * Partition prepares leave `checksum_body` zero (cluster.mdx "Frame integrity": the partition
 * plane's integrity is the batch's own `batch_checksum`) and their identity checksum covers the
 * header only, so an offset write's body was covered by nothing: a bit flipped in transit was
 * journaled, acknowledged and committed as the canonical write (found by the simulator). The
 * seal lives inside the body, whose resolved form is ours, so no byte Iggy defines changes.
 */
export const OFFSET_BODY_SEAL_SIZE = 8;

function sealBody(inner: Uint8Array): Uint8Array {
  const out = new Uint8Array(inner.length + OFFSET_BODY_SEAL_SIZE);
  out.set(inner);
  new DataView(out.buffer).setBigUint64(inner.length, xxh3_64(inner), true);
  return out;
}

/** The bytes before the seal, or the reason the body is not sealed. */
function unsealBody(bytes: Uint8Array): { ok: true; inner: Uint8Array } | { ok: false; reason: string } {
  if (bytes.length < OFFSET_BODY_SEAL_SIZE) return { ok: false, reason: 'truncated_offset_body_seal' };
  const at = bytes.length - OFFSET_BODY_SEAL_SIZE;
  const inner = bytes.subarray(0, at);
  const seal = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength).getBigUint64(at, true);
  return seal === xxh3_64(inner) ? { ok: true, inner } : { ok: false, reason: 'offset_body_seal_mismatch' };
}

function decodeSealed<T>(bytes: Uint8Array, read: (r: Reader) => T): Decoded<T> {
  const unsealed = unsealBody(bytes);
  return unsealed.ok ? decodeExact(unsealed.inner, read) : { ok: false, reason: unsealed.reason };
}

export function encodeStoreOffsetBody(b: StoreOffsetBody): Uint8Array {
  return sealBody(encodeWith((w) => void w.u8(KIND_CODE[b.consumer.kind]).u32(b.consumer.key).u64(b.offset)));
}

export function decodeStoreOffsetBody(bytes: Uint8Array): Decoded<StoreOffsetBody> {
  return decodeSealed(bytes, (r) => ({ consumer: readRef(r), offset: r.u64('offset') }));
}

export function encodeDeleteOffsetBody(consumer: ConsumerRef): Uint8Array {
  return sealBody(encodeWith((w) => void w.u8(KIND_CODE[consumer.kind]).u32(consumer.key)));
}

export function decodeDeleteOffsetBody(bytes: Uint8Array): Decoded<ConsumerRef> {
  return decodeSealed(bytes, readRef);
}

/**
 * Why a partition prepare body of `operation` cannot be an offset write a primary built (null:
 * it can, or the operation is not an offset write). Replicas drop such a prepare on ingress.
 */
export function offsetWriteBodyProblem(operation: number, body: Uint8Array): string | null {
  if (operation === Operation.StoreConsumerOffset) {
    const decoded = decodeStoreOffsetBody(body);
    return decoded.ok ? null : decoded.reason;
  }
  if (operation === Operation.DeleteConsumerOffset) {
    const decoded = decodeDeleteOffsetBody(body);
    return decoded.ok ? null : decoded.reason;
  }
  return null;
}

/** Where a consumer-plane request lands once resolved against metadata. */
export interface ResolvedTarget {
  readonly streamId: number;
  readonly topicId: number;
  readonly partitionId: number;
  readonly group: bigint;
  readonly consumer: ConsumerRef;
}

export type TargetResult = { readonly ok: true; readonly value: ResolvedTarget } | { readonly ok: false; readonly code: number; readonly empty?: boolean };

export interface TargetContext {
  readonly userId: number;
  /** The requesting VSR client (consumer-group membership). */
  readonly client: bigint;
  readonly h32: Hash32;
  /**
   * Host-owned per-(client, group) round-robin counter used when a group member polls without a
   * partition id; the member's pollable partitions are indexed by it.
   */
  readonly groupCounter?: number;
  /** Group reads (GetConsumerOffset) do not require membership; writes and polls do. */
  readonly requireMembership: boolean;
}

/**
 * Resolves (consumer, stream, topic, optional partition) for PollMessages and the offset
 * commands: not-found codes, the poll permission, the consumer key, and for consumer groups the
 * group id plus (when the partition flag is unset) a partition from the member's assignment.
 * A consumer without a partition id reads partition 0 (reference). A member with no partition
 * assigned yields `{ ok: false, empty: true }`: the caller answers an empty result.
 */
export function resolveTarget(metadata: MetadataState, consumer: Consumer, streamId: Identifier, topicId: Identifier,
  partitionId: number | null, ctx: TargetContext): TargetResult {
  const found = metadata.topic(streamId, topicId);
  if (found === undefined) return { ok: false, code: metadata.stream(streamId) === undefined ? NotFound.stream : NotFound.topic };
  const { stream, topic } = found;
  if (!canPollMessages(metadata.user(ctx.userId), stream.id, topic.id)) return { ok: false, code: ErrorCode.Unauthorized };
  let ref: ConsumerRef;
  let partition = partitionId;
  if (consumer.kind === 'consumer') {
    ref = { kind: 'consumer', key: consumerKey(consumer.id, ctx.h32) };
    partition ??= 0;
  } else {
    const assignment = metadata.groupAssignment(streamId, topicId, consumer.id, ctx.client);
    if (assignment === undefined) return { ok: false, code: NotFound.group };
    if (ctx.requireMembership && !assignment.member) return { ok: false, code: StateErrorCode.ConsumerGroupMemberNotFound };
    ref = { kind: 'consumer_group', key: assignment.groupId };
    if (partition === null) {
      if (assignment.partitions.length === 0) return { ok: false, code: 0, empty: true };
      partition = assignment.partitions[(ctx.groupCounter ?? 0) % assignment.partitions.length] as number;
    }
  }
  if (!topic.partitions.some((p) => p.id === partition)) return { ok: false, code: NotFound.partition };
  const group = packPartitionGroup(stream.id, topic.id, partition);
  assert(group.ok, 'existing partitions always pack');
  return { ok: true, value: { streamId: stream.id, topicId: topic.id, partitionId: partition, group: group.value, consumer: ref } };
}

export type OffsetWriteAdmission =
  | { readonly kind: 'propose'; readonly target: ResolvedTarget; readonly operation: number; readonly body: Uint8Array; readonly ack: AckLevel }
  | { readonly kind: 'reject'; readonly status: number }
  | { readonly kind: 'evict'; readonly reason: 'invalid_request_body'; readonly detail: string };

/**
 * Store/DeleteConsumerOffset admission (161 / 162). With ack Quorum the host proposes `body` in
 * the partition's group; with NoAck it applies it locally on the partition primary
 * (`PartitionState.applyOffsetWriteLocally`) and answers at once.
 */
export function admitOffsetWrite(metadata: MetadataState, operation: 161 | 162, body: Uint8Array, ctx: Omit<TargetContext, 'requireMembership'>): OffsetWriteAdmission {
  const req = operation === 161 ? storeConsumerOffsetCommand.decodeRequest(body) : deleteConsumerOffsetCommand.decodeRequest(body);
  if (!req.ok) return { kind: 'evict', reason: 'invalid_request_body', detail: req.reason };
  const r: { consumer: Consumer; streamId: Identifier; topicId: Identifier; partitionId: number | null; ack: AckLevel; offset?: bigint } = req.value;
  const target = resolveTarget(metadata, r.consumer, r.streamId, r.topicId, r.partitionId, { ...ctx, requireMembership: true });
  if (!target.ok) return { kind: 'reject', status: target.empty === true ? ErrorCode.NoPartitions : target.code };
  const resolved = r.offset !== undefined
    ? encodeStoreOffsetBody({ consumer: target.value.consumer, offset: r.offset })
    : encodeDeleteOffsetBody(target.value.consumer);
  return { kind: 'propose', target: target.value, operation, body: resolved, ack: r.ack };
}

