import type { Permissions, StreamPermissions } from '@shoal/protocol';
import type { User } from './model.js';

/**
 * Authorization rules, one function per command family, as the reference permissioner applies
 * them (apache/iggy core/server/src/streaming/users/permissioner_rules/*.rs; the VSR server gates
 * committed ops with the same rules, core/metadata/src/stm/authz.rs). The root user (id 0) holds
 * every permission and bypasses every check. A user without permissions is denied everything
 * except self-service (own account, own password, own personal access tokens).
 *
 * Note the reference code is narrower than security.mdx's superset prose in two places, and we
 * follow the code: polling needs `poll_messages` (global or stream-scoped, or stream
 * read_stream/manage_topics/read_topics, or topic poll/read/manage), not global `read_topics`;
 * reading topics on a stream needs stream-scoped manage_topics/read_topics, not read_stream.
 */
export const ROOT_USER_ID = 0;

export type Actor = User | undefined;

function isRoot(actor: Actor): boolean {
  return actor !== undefined && actor.id === ROOT_USER_ID;
}

function streamScope(actor: Actor, streamId: number): StreamPermissions | undefined {
  return actor?.permissions?.streams.find((s) => s.streamId === streamId);
}

function global(actor: Actor): Permissions['global'] | undefined {
  return actor?.permissions?.global;
}

export function canReadServers(actor: Actor): boolean {
  const g = global(actor);
  return isRoot(actor) || (g !== undefined && (g.manageServers || g.readServers));
}

export function canManageUsers(actor: Actor): boolean {
  return isRoot(actor) || global(actor)?.manageUsers === true;
}

export function canReadUsers(actor: Actor): boolean {
  const g = global(actor);
  return isRoot(actor) || (g !== undefined && (g.manageUsers || g.readUsers));
}

export function canCreateStream(actor: Actor): boolean {
  return isRoot(actor) || global(actor)?.manageStreams === true;
}

export function canReadStreams(actor: Actor): boolean {
  const g = global(actor);
  return isRoot(actor) || (g !== undefined && (g.manageStreams || g.readStreams));
}

export function canReadStream(actor: Actor, streamId: number): boolean {
  if (canReadStreams(actor)) return true;
  const s = streamScope(actor, streamId);
  return s !== undefined && (s.manageStream || s.readStream);
}

/** Update, delete, purge stream. */
export function canManageStream(actor: Actor, streamId: number): boolean {
  if (isRoot(actor) || global(actor)?.manageStreams === true) return true;
  return streamScope(actor, streamId)?.manageStream === true;
}

export function canCreateTopic(actor: Actor, streamId: number): boolean {
  const g = global(actor);
  if (isRoot(actor) || (g !== undefined && (g.manageStreams || g.manageTopics))) return true;
  return streamScope(actor, streamId)?.manageTopics === true;
}

function globalReadsTopics(actor: Actor): boolean {
  const g = global(actor);
  return isRoot(actor) || (g !== undefined && (g.readStreams || g.manageStreams || g.manageTopics || g.readTopics));
}

export function canReadTopics(actor: Actor, streamId: number): boolean {
  if (globalReadsTopics(actor)) return true;
  const s = streamScope(actor, streamId);
  return s !== undefined && (s.manageTopics || s.readTopics);
}

/** GetTopic, and every consumer-group command (create, delete, join, leave, get, sync). */
export function canReadTopic(actor: Actor, streamId: number, topicId: number): boolean {
  if (canReadTopics(actor, streamId)) return true;
  const t = streamScope(actor, streamId)?.topics.find((x) => x.topicId === topicId);
  return t !== undefined && (t.manageTopic || t.readTopic);
}

/** Update, delete, purge topic; create and delete partitions; delete segments. */
export function canManageTopic(actor: Actor, streamId: number, topicId: number): boolean {
  const g = global(actor);
  if (isRoot(actor) || (g !== undefined && (g.manageStreams || g.manageTopics))) return true;
  const s = streamScope(actor, streamId);
  if (s === undefined) return false;
  if (s.manageTopics) return true;
  return s.topics.find((x) => x.topicId === topicId)?.manageTopic === true;
}

/** PollMessages, and Get/Store/DeleteConsumerOffset. */
export function canPollMessages(actor: Actor, streamId: number, topicId: number): boolean {
  if (isRoot(actor) || global(actor)?.pollMessages === true) return true;
  const s = streamScope(actor, streamId);
  if (s === undefined) return false;
  if (s.pollMessages || s.readStream || s.manageTopics || s.readTopics) return true;
  const t = s.topics.find((x) => x.topicId === topicId);
  return t !== undefined && (t.pollMessages || t.readTopic || t.manageTopic);
}

export function canSendMessages(actor: Actor, streamId: number, topicId: number): boolean {
  if (isRoot(actor) || global(actor)?.sendMessages === true) return true;
  const s = streamScope(actor, streamId);
  if (s === undefined) return false;
  if (s.sendMessages || s.manageStream || s.manageTopics) return true;
  const t = s.topics.find((x) => x.topicId === topicId);
  return t !== undefined && (t.sendMessages || t.manageTopic);
}

/** Every global permission set: what the root user holds. */
export const ALL_PERMISSIONS: Permissions = Object.freeze({
  global: Object.freeze({
    manageServers: true, readServers: true, manageUsers: true, readUsers: true, manageStreams: true,
    readStreams: true, manageTopics: true, readTopics: true, pollMessages: true, sendMessages: true,
  }),
  streams: Object.freeze([]) as readonly StreamPermissions[],
});
