import {
  type ConsumerGroupDetails, ErrorCode, createConsumerGroupCommand, deleteConsumerGroupCommand, leaveConsumerGroupCommand,
} from '@shoal/protocol';
import { IdTable } from './id-table.js';
import { decodeCompleteRevocation, decodeJoinGroup, decodeRemoveConsumerGroupMember } from './internal-bodies.js';
import { type ApplyContext, findGroup, findStream, findTopic, groupsInOrder } from './lookup.js';
import type { ConsumerGroup, GroupMember, MetadataModel, Topic } from './model.js';
import { NotFound, type Outcome, StateErrorCode, accepted, rejected } from './outcome.js';
import { canReadTopic } from './permissions.js';

/**
 * Consumer groups live inside their topic. Ids are monotonic per topic and never reused (the
 * group id keys the group's offsets on the partition plane). Members get the lowest free member
 * id of the group; the assignment iterates members and partitions in ascending id order, so it is
 * a pure function of committed state.
 *
 * Assignment (the reference's, core/metadata/src/stm/consumer_group.rs):
 * - full rebalance (leave, member removal, disconnect/logout, partitions created or deleted):
 *   generation + 1, every member's partitions and pending revocations cleared, the topic's
 *   partitions dealt round-robin to members in id order;
 * - cooperative rebalance (join): generation + 1; unassigned partitions go to idle members; each
 *   over-assigned member's excess above its fair share (P / M, the first P mod M members may keep
 *   one more) is handed to idle members round-robin: immediately when the partition has nothing
 *   in flight, else as a PENDING REVOCATION the source keeps owning (it may still commit) but no
 *   longer polls, until 67 CompleteConsumerGroupRevocation moves it (proposed by the host once
 *   the source drained it or a timeout passed). The in-flight set is gathered by the host at
 *   admission and rides the admitted join body.
 */

export function memberOf(group: ConsumerGroup, clientId: bigint): GroupMember | undefined {
  for (const m of group.members.values()) if (m.clientId === clientId) return m;
  return undefined;
}

/** Owned partitions minus those pending handoff: what the member should poll. */
export function pollablePartitions(member: GroupMember): number[] {
  return member.partitions.filter((p) => !member.pendingRevocations.some((r) => r.partitionId === p));
}

export function rebalanceFull(group: ConsumerGroup, partitionIds: readonly number[]): void {
  group.generation += 1n;
  const members = [...group.members.values()];
  for (const m of members) {
    m.partitions = [];
    m.pendingRevocations = [];
  }
  if (members.length === 0) return;
  partitionIds.forEach((p, i) => (members[i % members.length] as GroupMember).partitions.push(p));
}

export function rebalanceTopicGroups(topic: Topic): void {
  const ids = topic.partitions.map((p) => p.id);
  for (const group of groupsInOrder(topic)) rebalanceFull(group, ids);
}

export function rebalanceCooperative(group: ConsumerGroup, partitionIds: readonly number[], inFlight: ReadonlySet<number>, now: bigint): void {
  group.generation += 1n;
  const members = [...group.members.values()];
  if (members.length === 0 || partitionIds.length === 0) return;
  const assigned = new Set<number>();
  for (const m of members) for (const p of m.partitions) assigned.add(p);
  const unassigned = partitionIds.filter((p) => !assigned.has(p));
  const idleNow = members.filter((m) => m.partitions.length === 0);
  if (unassigned.length > 0 && idleNow.length > 0) {
    unassigned.forEach((p, i) => (idleNow[i % idleNow.length] as GroupMember).partitions.push(p));
  }
  const targets = new Set<number>();
  for (const m of members) for (const r of m.pendingRevocations) targets.add(r.targetMember);
  const idle = members.filter((m) => m.partitions.length === 0 && !targets.has(m.id));
  if (idle.length === 0) return;

  const fairShare = Math.floor(partitionIds.length / members.length);
  let withRemainder = partitionIds.length % members.length;
  const excess: { partitionId: number; source: GroupMember }[] = [];
  for (const m of members) {
    const effective = pollablePartitions(m);
    const allowed = withRemainder > 0 ? fairShare + 1 : fairShare;
    if (effective.length > fairShare && withRemainder > 0) withRemainder--;
    if (effective.length <= allowed) continue;
    const extra = effective.slice(allowed).reverse();
    for (const p of extra) excess.push({ partitionId: p, source: m });
  }
  excess.forEach(({ partitionId, source }, i) => {
    const target = idle[i % idle.length] as GroupMember;
    if (inFlight.has(partitionId)) {
      source.pendingRevocations.push({ partitionId, targetMember: target.id, createdAt: now });
    } else {
      source.partitions = source.partitions.filter((p) => p !== partitionId);
      target.partitions.push(partitionId);
    }
  });
}

/** Moves a pending revocation's partition to its target; false when there is none (stale). */
export function completeRevocation(group: ConsumerGroup, topic: Topic, sourceClient: bigint, partitionId: number): boolean {
  const source = memberOf(group, sourceClient);
  if (source === undefined) return false;
  const at = source.pendingRevocations.findIndex((r) => r.partitionId === partitionId);
  if (at < 0) return false;
  const [revocation] = source.pendingRevocations.splice(at, 1);
  source.partitions = source.partitions.filter((p) => p !== partitionId);
  const target = revocation === undefined ? undefined : group.members.get(revocation.targetMember);
  if (target !== undefined) {
    target.partitions.push(partitionId);
    group.generation += 1n;
  } else {
    // The target left meanwhile: a full rebalance restores a consistent assignment.
    rebalanceFull(group, topic.partitions.map((p) => p.id));
  }
  return true;
}

/** Drops `clientId` from every group it belongs to (66, Logout). True when any group changed. */
export function removeClientEverywhere(model: MetadataModel, clientId: bigint): boolean {
  let changed = false;
  for (const stream of model.streams.values()) {
    for (const topic of stream.topics.values()) {
      for (const group of groupsInOrder(topic)) {
        const member = memberOf(group, clientId);
        if (member === undefined) continue;
        group.members.delete(member.id);
        rebalanceFull(group, topic.partitions.map((p) => p.id));
        changed = true;
      }
    }
  }
  if (changed) model.revision += 1n;
  return changed;
}

export function groupDetails(topic: Topic, group: ConsumerGroup): ConsumerGroupDetails {
  const partitionsCount = topic.partitions.length;
  const members = [...group.members.values()].map((m) => ({ id: m.id, partitions: [...m.partitions] }));
  return { id: group.id, partitionsCount, membersCount: members.length, name: group.name, members };
}

type Resolved = { readonly topic: Topic; readonly streamId: number } | { readonly code: number };

function resolveTopic(model: MetadataModel, streamId: Parameters<typeof findStream>[1], topicId: Parameters<typeof findStream>[1]): Resolved {
  const stream = findStream(model, streamId);
  if (stream === undefined) return { code: NotFound.stream };
  const topic = findTopic(stream, topicId);
  if (topic === undefined) return { code: NotFound.topic };
  return { topic, streamId: stream.id };
}

export function applyCreateConsumerGroup(model: MetadataModel, body: Uint8Array, ctx: ApplyContext): Outcome {
  const req = createConsumerGroupCommand.decodeRequest(body);
  if (!req.ok) return rejected(ErrorCode.InvalidCommand);
  const r = resolveTopic(model, req.value.streamId, req.value.topicId);
  if ('code' in r) return rejected(r.code);
  if (!canReadTopic(model.users.get(ctx.userId), r.streamId, r.topic.id)) return rejected(ErrorCode.Unauthorized);
  if (r.topic.groupIndex.has(req.value.name)) return rejected(ErrorCode.ConsumerGroupNameAlreadyExists);
  const id = r.topic.nextConsumerGroupId;
  if (id > 0xffff_ffff) return rejected(ErrorCode.InvalidConsumerGroupId);
  r.topic.nextConsumerGroupId = id + 1;
  const group: ConsumerGroup = { id, generation: 0n, name: req.value.name, members: new IdTable<GroupMember>() };
  r.topic.consumerGroups.set(id, group);
  r.topic.groupIndex.set(group.name, id);
  // The reference's create reply is the new group's details: the topic's partition count, no
  // members (core/metadata/src/stm/consumer_group.rs, CreateConsumerGroupRequest::apply).
  return accepted(createConsumerGroupCommand.encodeResponse(groupDetails(r.topic, group)));
}

export function applyDeleteConsumerGroup(model: MetadataModel, body: Uint8Array, ctx: ApplyContext): Outcome {
  const req = deleteConsumerGroupCommand.decodeRequest(body);
  if (!req.ok) return rejected(ErrorCode.InvalidCommand);
  const r = resolveTopic(model, req.value.streamId, req.value.topicId);
  if ('code' in r) return rejected(r.code);
  const group = findGroup(r.topic, req.value.groupId);
  if (group === undefined) return rejected(NotFound.group);
  if (!canReadTopic(model.users.get(ctx.userId), r.streamId, r.topic.id)) return rejected(ErrorCode.Unauthorized);
  r.topic.consumerGroups.delete(group.id);
  r.topic.groupIndex.delete(group.name);
  model.revision += 1n;
  return accepted();
}

/** 148 (admitted form): the joining client is the prepare's client; re-joining is a no-op. */
export function applyJoinConsumerGroup(model: MetadataModel, body: Uint8Array, ctx: ApplyContext): Outcome {
  const req = decodeJoinGroup(body);
  if (!req.ok) return rejected(ErrorCode.InvalidCommand);
  const r = resolveTopic(model, req.value.streamId, req.value.topicId);
  if ('code' in r) return rejected(r.code);
  const group = findGroup(r.topic, req.value.groupId);
  if (group === undefined) return rejected(NotFound.group);
  if (!canReadTopic(model.users.get(ctx.userId), r.streamId, r.topic.id)) return rejected(ErrorCode.Unauthorized);
  if (memberOf(group, ctx.client) !== undefined) return accepted();
  const id = group.members.nextId();
  group.members.insert(id, { id, clientId: ctx.client, partitions: [], pendingRevocations: [] });
  rebalanceCooperative(group, r.topic.partitions.map((p) => p.id), new Set(req.value.inFlight), ctx.timestamp);
  return accepted();
}

export function applyLeaveConsumerGroup(model: MetadataModel, body: Uint8Array, ctx: ApplyContext): Outcome {
  const req = leaveConsumerGroupCommand.decodeRequest(body);
  if (!req.ok) return rejected(ErrorCode.InvalidCommand);
  const r = resolveTopic(model, req.value.streamId, req.value.topicId);
  if ('code' in r) return rejected(r.code);
  const group = findGroup(r.topic, req.value.groupId);
  if (group === undefined) return rejected(NotFound.group);
  if (!canReadTopic(model.users.get(ctx.userId), r.streamId, r.topic.id)) return rejected(ErrorCode.Unauthorized);
  const member = memberOf(group, ctx.client);
  if (member === undefined) return rejected(StateErrorCode.ConsumerGroupMemberNotFound);
  group.members.delete(member.id);
  rebalanceFull(group, r.topic.partitions.map((p) => p.id));
  return accepted();
}

/** 66 RemoveConsumerGroupMember (server-originated, e.g. on a transport disconnect). */
export function applyRemoveConsumerGroupMember(model: MetadataModel, body: Uint8Array): Outcome {
  const req = decodeRemoveConsumerGroupMember(body);
  if (!req.ok) return rejected(ErrorCode.InvalidCommand);
  removeClientEverywhere(model, req.value);
  return accepted();
}

/** 67 CompleteConsumerGroupRevocation (server-originated). A stale completion is a no-op. */
export function applyCompleteRevocation(model: MetadataModel, body: Uint8Array): Outcome {
  const req = decodeCompleteRevocation(body);
  if (!req.ok) return rejected(ErrorCode.InvalidCommand);
  const topic = model.streams.get(req.value.streamId)?.topics.get(req.value.topicId);
  const group = topic?.consumerGroups.get(req.value.groupId);
  if (topic === undefined || group === undefined) return accepted();
  if (completeRevocation(group, topic, req.value.sourceClient, req.value.partitionId)) model.revision += 1n;
  return accepted();
}
