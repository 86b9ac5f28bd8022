/**
 * Requests of a logged-in connection that touch a partition, resolved by the RECEIVING gateway
 * from its metadata view and then routed to the partition's owner (in the runtime: maybe its own
 * shard):
 *
 * | request                   | resolved here                                    | the owner does             |
 * |---------------------------|--------------------------------------------------|----------------------------|
 * | SendMessages (160)        | `admitSendMessages`: stream, topic, permission,  | submit to the partition's  |
 * |                           | partition (balanced counter / id / XXH32 key),   | core (stamp, commit, write |
 * |                           | every checksum of the batch                      | the segment, reply)        |
 * | Store/DeleteConsumerOffset| `admitOffsetWrite`: target, membership, the      | Quorum: submit; NoAck:     |
 * | (161, 162)                | resolved body, the ack level                     | apply locally, reply       |
 * | PollMessages (100)        | `resolveTarget`: permission, consumer key, the   | poll storage, auto-commit, |
 * |                           | group member's partition                         | reply                      |
 * | GetConsumerOffset (120)   | `resolveTarget` (no membership needed)           | read the offset, reply     |
 * | DeleteSegments (138)      | stream / topic / partition → group               | resolve the offset the     |
 * |                           |                                                  | segments reach, then the   |
 * |                           |                                                  | metadata owner admits 68   |
 *
 * Validating the batch on the receiving gateway spreads the hashing cost over every shard that
 * accepts connections, instead of concentrating it on the partition's owner.
 */
import {
  ErrorCode, EvictionReason, FRAME_HEADER_SIZE, METADATA_GROUP, RequestHeaderView, deleteSegmentsCommand,
  getConsumerOffsetCommand, packPartitionGroup, pollMessagesCommand,
} from '@shoal/protocol';
import { admitOffsetWrite, admitSendMessages, emptyPollReply, resolveTarget } from '@shoal/state';
import type { GatewayConnection } from './connection.js';
import { packConsumerRef } from './consumer-ref.js';
import type { GatewayContext } from './context.js';
import { RequestRoute } from './messages.js';
import { eviction, payloadReply, statusReply } from './replies.js';

export class PartitionRequests {
  readonly #ctx: GatewayContext;
  /** The gateway's balanced-partitioning counter (one per gateway, every topic). */
  #balanced = 0;

  constructor(ctx: GatewayContext) {
    this.#ctx = ctx;
  }

  sendMessages(connection: GatewayConnection, frame: Uint8Array, userId: number): void {
    const ctx = this.#ctx;
    const body = frame.subarray(FRAME_HEADER_SIZE);
    const admitted = admitSendMessages(ctx.metadata.state, body, userId, this.#balanced, ctx.h32);
    if (admitted.kind === 'evict') return this.#evictBody(connection, frame);
    if (admitted.kind === 'reject') return connection.send(statusReply(ctx.reply, new RequestHeaderView(frame), admitted.status));
    this.#balanced = admitted.value.nextBalancedCounter;
    this.#forward(connection, frame, RequestRoute.submit, admitted.value.group, admitted.value.batch, userId, 0n);
  }

  offsetWrite(connection: GatewayConnection, frame: Uint8Array, operation: 161 | 162, userId: number, client: bigint): void {
    const ctx = this.#ctx;
    const admitted = admitOffsetWrite(ctx.metadata.state, operation, frame.subarray(FRAME_HEADER_SIZE), {
      userId, client, h32: ctx.h32, groupCounter: this.#nextGroupCounter(connection),
    });
    if (admitted.kind === 'evict') return this.#evictBody(connection, frame);
    if (admitted.kind === 'reject') return connection.send(statusReply(ctx.reply, new RequestHeaderView(frame), admitted.status));
    const route = admitted.ack === 0 ? RequestRoute.offset_local : RequestRoute.submit;
    this.#forward(connection, frame, route, admitted.target.group, admitted.body, userId, packConsumerRef(admitted.target.consumer));
  }

  poll(connection: GatewayConnection, frame: Uint8Array, userId: number, client: bigint): void {
    const ctx = this.#ctx;
    const header = new RequestHeaderView(frame);
    const body = frame.subarray(FRAME_HEADER_SIZE);
    const request = pollMessagesCommand.decodeRequest(body);
    if (!request.ok) return connection.send(statusReply(ctx.reply, header, ErrorCode.InvalidCommand));
    const r = request.value;
    const target = resolveTarget(ctx.metadata.state, r.consumer, r.streamId, r.topicId, r.partitionId, {
      userId, client, h32: ctx.h32, groupCounter: this.#nextGroupCounter(connection), requireMembership: true,
    });
    if (!target.ok) {
      if (target.empty === true) return connection.send(payloadReply(ctx.reply, header, emptyPayload()));
      return connection.send(statusReply(ctx.reply, header, target.code));
    }
    this.#forward(connection, frame, RequestRoute.poll, target.value.group, body, userId, packConsumerRef(target.value.consumer));
  }

  getOffset(connection: GatewayConnection, frame: Uint8Array, userId: number, client: bigint): void {
    const ctx = this.#ctx;
    const header = new RequestHeaderView(frame);
    const body = frame.subarray(FRAME_HEADER_SIZE);
    const request = getConsumerOffsetCommand.decodeRequest(body);
    if (!request.ok) return connection.send(statusReply(ctx.reply, header, ErrorCode.InvalidCommand));
    const r = request.value;
    const target = resolveTarget(ctx.metadata.state, r.consumer, r.streamId, r.topicId, r.partitionId, {
      userId, client, h32: ctx.h32, groupCounter: this.#nextGroupCounter(connection), requireMembership: false,
    });
    if (!target.ok) {
      if (target.empty === true) return connection.send(payloadReply(ctx.reply, header, new Uint8Array(0)));
      return connection.send(statusReply(ctx.reply, header, target.code));
    }
    this.#forward(connection, frame, RequestRoute.get_offset, target.value.group, body, userId, packConsumerRef(target.value.consumer));
  }

  /**
   * DeleteSegments (metadata op 138): the offset the oldest sealed segments reach is a storage
   * fact of the partition's owner, so the request visits the owner first; an unknown partition
   * goes straight to the metadata worker, whose admission answers the not-found code.
   */
  deleteSegments(connection: GatewayConnection, frame: Uint8Array, userId: number): void {
    const ctx = this.#ctx;
    const body = frame.subarray(FRAME_HEADER_SIZE);
    const request = deleteSegmentsCommand.decodeRequest(body);
    const found = request.ok ? ctx.metadata.state.topic(request.value.streamId, request.value.topicId) : undefined;
    const partition = request.ok && found !== undefined && found.topic.partitions.some((p) => p.id === request.value.partitionId)
      ? packPartitionGroup(found.stream.id, found.topic.id, request.value.partitionId)
      : null;
    if (partition === null || !partition.ok) {
      this.#forward(connection, frame, RequestRoute.submit, METADATA_GROUP, body, userId, 0n);
      return;
    }
    this.#forward(connection, frame, RequestRoute.resolve_delete_segments, partition.value, body, userId, 0n);
  }

  /** A metadata-plane write (128..149 but 138): the metadata owner admits and proposes it. */
  metadataWrite(connection: GatewayConnection, frame: Uint8Array, userId: number): void {
    this.#forward(connection, frame, RequestRoute.submit, METADATA_GROUP, frame.subarray(FRAME_HEADER_SIZE), userId, 0n);
  }

  /** To the owner of `group` (METADATA_GROUP: the metadata owner). */
  #forward(connection: GatewayConnection, frame: Uint8Array, route: RequestRoute, group: bigint, body: Uint8Array,
    userId: number, hostValue: bigint): void {
    connection.inFlight += 1;
    this.#ctx.output.route({
      kind: 'client_request', route, token: connection.token, group, userId, metadataOp: this.#ctx.metadata.appliedOp,
      hostValue, fenceOp: connection.ackedOp(group), forwarded: false, header: frame.subarray(0, FRAME_HEADER_SIZE), body,
    });
  }

  #evictBody(connection: GatewayConnection, frame: Uint8Array): void {
    connection.send(eviction(this.#ctx.reply, new RequestHeaderView(frame).client, EvictionReason.InvalidRequestBody));
  }

  /** The host-owned round-robin counter for a group member polling without a partition id. */
  #nextGroupCounter(connection: GatewayConnection): number {
    connection.groupCounter = (connection.groupCounter + 1) % 0x7fff_ffff;
    return connection.groupCounter;
  }
}

function emptyPayload(): Uint8Array {
  const outcome = emptyPollReply();
  return outcome.ok ? outcome.payload : new Uint8Array(0);
}

