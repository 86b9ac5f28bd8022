import { ErrorCode, type Identifier, Operation } from '@shoal/protocol';
import { assert } from '@shoal/stdx';
import {
  applyCompleteRevocation, applyCreateConsumerGroup, applyDeleteConsumerGroup, applyJoinConsumerGroup, applyLeaveConsumerGroup,
  applyRemoveConsumerGroupMember, memberOf, pollablePartitions, removeClientEverywhere,
} from './consumer-groups.js';
import { type ApplyContext, findGroup, findStream, findTopic, groupsInOrder } from './lookup.js';
import { type MetadataModel, type Stream, type Topic, type User, UserStatusCode, emptyModel } from './model.js';
import { type Outcome, rejected } from './outcome.js';
import { applyCreatePartitions, applyDeletePartitions, applyTruncatePartition } from './partitions.js';
import {
  PERSONAL_ACCESS_TOKENS_PER_USER_MAX, applyCreatePersonalAccessToken, applyDeletePersonalAccessToken, hashToken, isExpired,
} from './personal-access-tokens.js';
import { applyCreateStream, applyDeleteStream, applyPurgeStream, applyUpdateStream } from './streams.js';
import { applyCreateTopic, applyDeleteTopic, applyPurgeTopic, applyUpdateTopic } from './topics.js';
import { applyChangePassword, applyCreateUser, applyDeleteUser, applyUpdatePermissions, applyUpdateUser } from './users.js';

/** One committed metadata op as the consensus core hands it over. */
export interface MetadataApplyInput {
  readonly op: bigint;
  readonly operation: number;
  readonly body: Uint8Array;
  /** Prepare timestamp, µs. */
  readonly timestamp: bigint;
  /** Acting user stamped into the prepare (0 = root / server-originated). */
  readonly userId: number;
  /** The prepare's client (u128; 0 for server-originated ops). */
  readonly client: bigint;
}

export interface MetadataStateOptions {
  /** Must be identical on every replica (it changes apply outcomes). */
  readonly personalAccessTokensPerUserMax?: number;
}

/** Where a partition lives and which group replicates it (routing for shards). */
export interface PartitionRoute {
  readonly streamId: number;
  readonly topicId: number;
  readonly partitionId: number;
  readonly consensusGroupId: bigint;
  readonly createdRevision: bigint;
  readonly deletedUpToOffset: bigint;
  readonly purgeGeneration: bigint;
}

export type LoginTarget =
  | { readonly ok: true; readonly userId: number; readonly active: boolean; readonly passwordHash: string }
  | { readonly ok: false; readonly code: number };

export type PatLogin = { readonly ok: true; readonly userId: number } | { readonly ok: false; readonly code: number };

/**
 * The metadata state machine (group 1 << 63). Pure and deterministic: no I/O, no clock (time is
 * the prepare timestamp), no randomness, synchronous. `apply` takes committed ops in op order,
 * exactly once each; reads (reads.ts) and admission (admission.ts) only look.
 *
 * Shard workers can keep an identical read-only copy by feeding it the same committed ops.
 */
export class MetadataState {
  readonly model: MetadataModel;
  readonly #patMax: number;
  #lastOp = 0n;

  constructor(options: MetadataStateOptions = {}, model: MetadataModel = emptyModel()) {
    this.model = model;
    this.#patMax = options.personalAccessTokensPerUserMax ?? PERSONAL_ACCESS_TOKENS_PER_USER_MAX;
  }

  /** Highest op applied (0 = none). */
  get lastAppliedOp(): bigint {
    return this.#lastOp;
  }

  /**
   * Applies one committed op (64..68, 128..149 except 138). Returns the code and the typed reply
   * payload (the consensus core wraps it into the result section).
   */
  apply(input: MetadataApplyInput): Outcome {
    assert(input.op > this.#lastOp, `metadata apply out of order: op ${input.op} after ${this.#lastOp}`);
    this.#lastOp = input.op;
    const ctx: ApplyContext = { timestamp: input.timestamp, userId: input.userId, client: input.client, op: input.op };
    const m = this.model;
    const body = input.body;
    switch (input.operation) {
      case Operation.CreateTopicWithAssignments: return applyCreateTopic(m, body, ctx);
      case Operation.CreatePartitionsWithAssignments: return applyCreatePartitions(m, body, ctx);
      case Operation.RemoveConsumerGroupMember: return applyRemoveConsumerGroupMember(m, body);
      case Operation.CompleteConsumerGroupRevocation: return applyCompleteRevocation(m, body);
      case Operation.TruncatePartition: return applyTruncatePartition(m, body, ctx);
      case Operation.CreateStream: return applyCreateStream(m, body, ctx);
      case Operation.UpdateStream: return applyUpdateStream(m, body, ctx);
      case Operation.DeleteStream: return applyDeleteStream(m, body, ctx);
      case Operation.PurgeStream: return applyPurgeStream(m, body, ctx);
      case Operation.UpdateTopic: return applyUpdateTopic(m, body, ctx);
      case Operation.DeleteTopic: return applyDeleteTopic(m, body, ctx);
      case Operation.PurgeTopic: return applyPurgeTopic(m, body, ctx);
      case Operation.DeletePartitions: return applyDeletePartitions(m, body, ctx);
      case Operation.CreateConsumerGroup: return applyCreateConsumerGroup(m, body, ctx);
      case Operation.DeleteConsumerGroup: return applyDeleteConsumerGroup(m, body, ctx);
      case Operation.CreateUser: return applyCreateUser(m, body, ctx);
      case Operation.UpdateUser: return applyUpdateUser(m, body, ctx);
      case Operation.DeleteUser: return applyDeleteUser(m, body, ctx);
      case Operation.ChangePassword: return applyChangePassword(m, body, ctx);
      case Operation.UpdatePermissions: return applyUpdatePermissions(m, body, ctx);
      case Operation.CreatePersonalAccessToken: return applyCreatePersonalAccessToken(m, body, ctx, this.#patMax);
      case Operation.DeletePersonalAccessToken: return applyDeletePersonalAccessToken(m, body, ctx);
      case Operation.JoinConsumerGroup: return applyJoinConsumerGroup(m, body, ctx);
      case Operation.LeaveConsumerGroup: return applyLeaveConsumerGroup(m, body, ctx);
      // CreateTopic / CreatePartitions / DeleteSegments never reach the log: admission rewrites them.
      default: return rejected(ErrorCode.InvalidCommand);
    }
  }

  /** A committed Logout (or disconnect): the client leaves every consumer group it joined. */
  logout(client: bigint): void {
    removeClientEverywhere(this.model, client);
  }

  /** Restores the applied-op cursor after a snapshot restore (the snapshot's sequence number). */
  setLastAppliedOp(op: bigint): void {
    this.#lastOp = op;
  }

  // ---- login support (the host verifies the password hash off-thread) ----------------------

  verifyLoginTarget(username: string): LoginTarget {
    const id = this.model.userIndex.get(username);
    const user = id === undefined ? undefined : this.model.users.get(id);
    if (user === undefined) return { ok: false, code: ErrorCode.InvalidCredentials };
    return { ok: true, userId: user.id, active: user.status === UserStatusCode.Active, passwordHash: user.passwordHash };
  }

  /** Login by personal access token: hash lookup, expiry against `now` (µs), user status. */
  verifyPersonalAccessToken(token: string, now: bigint): PatLogin {
    const entry = this.model.tokenIndex.get(hashToken(token));
    const user = entry === undefined ? undefined : this.model.users.get(entry.userId);
    const record = entry === undefined ? undefined : user?.tokens.get(entry.name);
    if (user === undefined || record === undefined) return { ok: false, code: ErrorCode.InvalidPersonalAccessToken };
    if (isExpired(record, now)) return { ok: false, code: ErrorCode.PersonalAccessTokenExpired };
    if (user.status !== UserStatusCode.Active) return { ok: false, code: ErrorCode.UserInactive };
    return { ok: true, userId: user.id };
  }

  /** Expired tokens as (user id, name), for the host's cleaner to propose deletions. */
  expiredTokens(now: bigint): { userId: number; name: string }[] {
    const out: { userId: number; name: string }[] = [];
    for (const user of this.model.users.values()) {
      for (const t of user.tokens.values()) if (isExpired(t, now)) out.push({ userId: user.id, name: t.name });
    }
    return out.sort((a, b) => a.userId - b.userId || (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  }

  // ---- lookups for routing, admission and the partition plane --------------------------------

  user(id: number): User | undefined {
    return this.model.users.get(id);
  }

  stream(id: Identifier): Stream | undefined {
    return findStream(this.model, id);
  }

  topic(streamId: Identifier, topicId: Identifier): { stream: Stream; topic: Topic } | undefined {
    const stream = findStream(this.model, streamId);
    const topic = stream === undefined ? undefined : findTopic(stream, topicId);
    return stream === undefined || topic === undefined ? undefined : { stream, topic };
  }

  /** Every partition in (stream, topic, partition) order, with its group and replicated markers. */
  partitions(): PartitionRoute[] {
    const out: PartitionRoute[] = [];
    for (const stream of this.model.streams.values()) {
      for (const topic of stream.topics.values()) {
        for (const p of topic.partitions) {
          out.push({
            streamId: stream.id, topicId: topic.id, partitionId: p.id, consensusGroupId: p.consensusGroupId,
            createdRevision: p.createdRevision, deletedUpToOffset: p.deletedUpToOffset, purgeGeneration: p.purgeGeneration,
          });
        }
      }
    }
    return out;
  }

  /** Monotonic partition-shaping revision: a cheap "did anything change" check for reconcilers. */
  get revision(): bigint {
    return this.model.revision;
  }

  /** The group's id and the member's pollable partitions (SyncConsumerGroup, poll resolution). */
  groupAssignment(streamId: Identifier, topicId: Identifier, groupId: Identifier, client: bigint):
    { groupId: number; generation: bigint; partitions: number[]; member: boolean } | undefined {
    const found = this.topic(streamId, topicId);
    const group = found === undefined ? undefined : findGroup(found.topic, groupId);
    if (group === undefined) return undefined;
    const member = memberOf(group, client);
    return { groupId: group.id, generation: group.generation, partitions: member === undefined ? [] : pollablePartitions(member), member: member !== undefined };
  }

  /** (stream, topic, group) ids of every group the client is a member of (GetMe, GetClient). */
  membershipsOf(client: bigint): { streamId: number; topicId: number; groupId: number }[] {
    const out: { streamId: number; topicId: number; groupId: number }[] = [];
    for (const stream of this.model.streams.values()) {
      for (const topic of stream.topics.values()) {
        for (const group of groupsInOrder(topic)) {
          if (memberOf(group, client) !== undefined) out.push({ streamId: stream.id, topicId: topic.id, groupId: group.id });
        }
      }
    }
    return out;
  }

  /** Every pending cooperative revocation, for the host's reconciler (proposes 67). */
  pendingRevocations(): { streamId: number; topicId: number; groupId: number; sourceClient: bigint; partitionId: number; createdAt: bigint }[] {
    const out: { streamId: number; topicId: number; groupId: number; sourceClient: bigint; partitionId: number; createdAt: bigint }[] = [];
    for (const stream of this.model.streams.values()) {
      for (const topic of stream.topics.values()) {
        for (const group of groupsInOrder(topic)) {
          for (const m of group.members.values()) {
            for (const r of m.pendingRevocations) {
              out.push({ streamId: stream.id, topicId: topic.id, groupId: group.id, sourceClient: m.clientId, partitionId: r.partitionId, createdAt: r.createdAt });
            }
          }
        }
      }
    }
    return out;
  }
}
