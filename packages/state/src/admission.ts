import {
  type Decoded, ErrorCode, type Identifier, Operation, PARTITION_ID_LIMIT, PAT_EXPIRY_NEVER,
  PAT_EXPIRY_SERVER_DEFAULT, STREAM_ID_LIMIT, TOPIC_ID_LIMIT, changePasswordCommand, createConsumerGroupCommand,
  createPartitionsCommand, createPersonalAccessTokenCommand, createStreamCommand, createTopicCommand, createUserCommand,
  deleteConsumerGroupCommand, deletePartitionsCommand, deletePersonalAccessTokenCommand, deleteSegmentsCommand,
  deleteStreamCommand, deleteTopicCommand, deleteUserCommand, joinConsumerGroupCommand, leaveConsumerGroupCommand,
  numericIdentifier, purgeStreamCommand, purgeTopicCommand, updatePermissionsCommand, updateStreamCommand,
  updateTopicCommand, updateUserCommand,
} from '@shoal/protocol';
import { U64_MAX, assert } from '@shoal/stdx';
import { memberOf } from './consumer-groups.js';
import {
  encodeCreatePartitionsWithAssignments, encodeCreatePat, encodeCreateTopicWithAssignments, encodeJoinGroup,
  encodeTruncatePartition,
} from './internal-bodies.js';
import { findGroup, findStream, findTopic, findUser } from './lookup.js';
import type { MetadataState } from './metadata-state.js';
import type { Stream, Topic, User } from './model.js';
import { isValidPassword, isValidPatName, isValidUsername } from './names.js';
import { NotFound, StateErrorCode } from './outcome.js';
import { PARTITIONS_PER_REQUEST_MAX, deriveAssignments, nextPartitionId } from './partitions.js';
import { isExpired } from './personal-access-tokens.js';
import {
  ALL_PERMISSIONS, ROOT_USER_ID, canCreateStream, canCreateTopic, canManageStream, canManageTopic, canManageUsers, canReadTopic,
} from './permissions.js';
import { toOptionEntries } from './topics.js';
import { checkEmptyScope, resolveTopicCreateOptions, resolveTopicUpdateOptions, topicSettingsOf } from './topic-options.js';

/**
 * Admission: pure, on the metadata primary, BEFORE proposing. Decodes the client body, checks
 * what can be decided now (existence, permissions, names, limits, option values), and produces
 * the prepare body: the client body unchanged, or a server-built one (internal-bodies.ts).
 * A denial is a header status (pre-commit, empty body); an undecodable body is an eviction, or a
 * status-3 denial for the operations the reference decodes before consensus (below).
 * Apply re-validates all of it: the state can move between admission and commit.
 *
 * Work only the host can do happens first, off the replica thread: `hostWorkFor` says what it is
 * (hash a password; verify a current password and hash the new one; generate a token; gather the
 * in-flight partitions of a group; resolve DeleteSegments into an offset), and `admit` takes the
 * results in `host`.
 */
export interface AdmitHostInputs {
  /** CreateUser / ChangePassword: the salted, memory-hard hash (PHC-like string) of the new password. */
  readonly passwordHash?: string;
  /** ChangePassword: whether the current password matched the stored hash. */
  readonly currentPasswordMatches?: boolean;
  /** CreatePersonalAccessToken: the raw token the host generated (1..255 bytes). */
  readonly token?: string;
  /** JoinConsumerGroup: the group's partitions with polled-but-uncommitted data. */
  readonly inFlight?: readonly number[];
  /** DeleteSegments: exclusive end offset of the `segments_count` oldest sealed segments (0 = none). */
  readonly segmentsUpToOffset?: bigint;
}

export interface AdmitInput {
  readonly operation: number;
  readonly body: Uint8Array;
  readonly actor: { readonly userId: number };
  /** The requesting VSR client (u128). */
  readonly client: bigint;
  /** The primary's current time, µs (only used for token-expiry checks). */
  readonly timestamp: bigint;
  readonly host?: AdmitHostInputs;
}

export type AdmitResult =
  | { readonly kind: 'propose'; readonly operation: number; readonly body: Uint8Array }
  | { readonly kind: 'reject'; readonly status: number }
  | { readonly kind: 'evict'; readonly reason: 'invalid_request_body' | 'invalid_request_operation'; readonly detail: string };

export type HostWork =
  | { readonly kind: 'none' }
  | { readonly kind: 'hash_password'; readonly password: string }
  | { readonly kind: 'verify_and_hash'; readonly storedHash: string; readonly currentPassword: string; readonly newPassword: string }
  | { readonly kind: 'generate_token' }
  | { readonly kind: 'gather_in_flight'; readonly streamId: number; readonly topicId: number; readonly groupId: number; readonly partitionIds: readonly number[] }
  | { readonly kind: 'resolve_segments'; readonly streamId: number; readonly topicId: number; readonly partitionId: number; readonly segmentsCount: number };

const NONE: HostWork = { kind: 'none' };

/** What the host must compute before `admit` for this request (or nothing). */
export function hostWorkFor(state: MetadataState, operation: number, body: Uint8Array): HostWork {
  switch (operation) {
    case Operation.CreateUser: {
      const req = createUserCommand.decodeRequest(body);
      return req.ok ? { kind: 'hash_password', password: req.value.password } : NONE;
    }
    case Operation.ChangePassword: {
      const req = changePasswordCommand.decodeRequest(body);
      const user = req.ok ? findUser(state.model, req.value.userId) : undefined;
      if (!req.ok || user === undefined) return NONE;
      return { kind: 'verify_and_hash', storedHash: user.passwordHash, currentPassword: req.value.currentPassword, newPassword: req.value.newPassword };
    }
    case Operation.CreatePersonalAccessToken:
      return createPersonalAccessTokenCommand.decodeRequest(body).ok ? { kind: 'generate_token' } : NONE;
    case Operation.JoinConsumerGroup: {
      const req = joinConsumerGroupCommand.decodeRequest(body);
      const found = req.ok ? state.topic(req.value.streamId, req.value.topicId) : undefined;
      const group = req.ok && found !== undefined ? findGroup(found.topic, req.value.groupId) : undefined;
      if (found === undefined || group === undefined) return NONE;
      return { kind: 'gather_in_flight', streamId: found.stream.id, topicId: found.topic.id, groupId: group.id, partitionIds: found.topic.partitions.map((p) => p.id) };
    }
    case Operation.DeleteSegments: {
      const req = deleteSegmentsCommand.decodeRequest(body);
      const found = req.ok ? state.topic(req.value.streamId, req.value.topicId) : undefined;
      if (!req.ok || found === undefined || !found.topic.partitions.some((p) => p.id === req.value.partitionId)) return NONE;
      return { kind: 'resolve_segments', streamId: found.stream.id, topicId: found.topic.id, partitionId: req.value.partitionId, segmentsCount: req.value.segmentsCount };
    }
    default:
      return NONE;
  }
}

const propose = (operation: number, body: Uint8Array): AdmitResult => ({ kind: 'propose', operation, body });
const reject = (status: number): AdmitResult => ({ kind: 'reject', status });

/**
 * The operations the reference decodes BEFORE consensus (server dispatch.rs, the "static bounds"
 * pass): a body that does not decode is denied there with a status-3 (InvalidCommand) reply and
 * the session lives on. Any other operation's undecodable body is evicted as structurally invalid
 * (metadata impls `eviction_reason_for_invalid`: InvalidRequestBody), replication-semantics §4.3.
 */
const DECODED_BEFORE_CONSENSUS: ReadonlySet<number> = new Set([
  Operation.CreateTopic, Operation.CreatePartitions, Operation.DeletePartitions, Operation.UpdateTopic,
  Operation.UpdateStream, Operation.UpdateUser, Operation.CreateStream, Operation.CreateUser,
]);

function decodeOr<T>(operation: number, decoded: Decoded<T>, then: (value: T) => AdmitResult): AdmitResult {
  if (decoded.ok) return then(decoded.value);
  if (DECODED_BEFORE_CONSENSUS.has(operation)) return reject(ErrorCode.InvalidCommand);
  return { kind: 'evict', reason: 'invalid_request_body', detail: decoded.reason };
}

type Found<T> = { readonly value: T } | { readonly status: number };

function needStream(state: MetadataState, id: Identifier): Found<Stream> {
  const stream = findStream(state.model, id);
  return stream === undefined ? { status: NotFound.stream } : { value: stream };
}

function needTopic(state: MetadataState, streamId: Identifier, topicId: Identifier): Found<{ stream: Stream; topic: Topic }> {
  const stream = findStream(state.model, streamId);
  if (stream === undefined) return { status: NotFound.stream };
  const topic = findTopic(stream, topicId);
  return topic === undefined ? { status: NotFound.topic } : { value: { stream, topic } };
}

export function admit(state: MetadataState, input: AdmitInput): AdmitResult {
  const actor = state.user(input.actor.userId);
  const op = input.operation;
  const body = input.body;
  const host = input.host ?? {};
  switch (op) {
    case Operation.CreateStream:
      return decodeOr(op, createStreamCommand.decodeRequest(body), (r) => {
        if (!canCreateStream(actor)) return reject(ErrorCode.Unauthorized);
        if (state.model.streamIndex.has(r.name)) return reject(ErrorCode.StreamNameAlreadyExists);
        if (checkEmptyScope(r.options) !== null) return reject(ErrorCode.UnsupportedOptionKey);
        if (state.model.streams.nextId() >= STREAM_ID_LIMIT) return reject(ErrorCode.TooManyStreams);
        return propose(op, body);
      });
    case Operation.UpdateStream:
      return decodeOr(op, updateStreamCommand.decodeRequest(body), (r) => {
        const s = needStream(state, r.streamId);
        if ('status' in s) return reject(s.status);
        if (!canManageStream(actor, s.value.id)) return reject(ErrorCode.Unauthorized);
        const holder = state.model.streamIndex.get(r.name);
        if (holder !== undefined && holder !== s.value.id) return reject(ErrorCode.StreamNameAlreadyExists);
        if (checkEmptyScope(r.options) !== null) return reject(ErrorCode.UnsupportedOptionKey);
        return propose(op, body);
      });
    case Operation.DeleteStream:
    case Operation.PurgeStream:
      return decodeOr(op, (op === Operation.DeleteStream ? deleteStreamCommand : purgeStreamCommand).decodeRequest(body), (r) => {
        const s = needStream(state, r.streamId);
        if ('status' in s) return reject(s.status);
        return canManageStream(actor, s.value.id) ? propose(op, body) : reject(ErrorCode.Unauthorized);
      });
    case Operation.CreateTopic:
      return decodeOr(op, createTopicCommand.decodeRequest(body), (r) => admitCreateTopic(state, actor, r));
    case Operation.UpdateTopic:
      return decodeOr(op, updateTopicCommand.decodeRequest(body), (r) => {
        const t = needTopic(state, r.streamId, r.topicId);
        if ('status' in t) return reject(t.status);
        const { stream, topic } = t.value;
        if (!canManageTopic(actor, stream.id, topic.id)) return reject(ErrorCode.Unauthorized);
        const holder = stream.topicIndex.get(r.name);
        if (holder !== undefined && holder !== topic.id) return reject(ErrorCode.TopicNameAlreadyExists);
        const patch = resolveTopicUpdateOptions(r.options, topicSettingsOf(topic.options));
        return patch.ok ? propose(op, body) : reject(patch.code);
      });
    case Operation.DeleteTopic:
    case Operation.PurgeTopic:
      return decodeOr(op, (op === Operation.DeleteTopic ? deleteTopicCommand : purgeTopicCommand).decodeRequest(body), (r) => {
        const t = needTopic(state, r.streamId, r.topicId);
        if ('status' in t) return reject(t.status);
        return canManageTopic(actor, t.value.stream.id, t.value.topic.id) ? propose(op, body) : reject(ErrorCode.Unauthorized);
      });
    case Operation.CreatePartitions:
      return decodeOr(op, createPartitionsCommand.decodeRequest(body), (r) => {
        const t = needTopic(state, r.streamId, r.topicId);
        if ('status' in t) return reject(t.status);
        const { stream, topic } = t.value;
        if (!canManageTopic(actor, stream.id, topic.id)) return reject(ErrorCode.Unauthorized);
        if (r.partitionsCount < 1 || r.partitionsCount > PARTITIONS_PER_REQUEST_MAX) return reject(ErrorCode.TooManyPartitions);
        const base = nextPartitionId(topic);
        const assignments = base + r.partitionsCount > PARTITION_ID_LIMIT ? null : deriveAssignments(stream.id, topic.id, base, r.partitionsCount);
        if (assignments === null) return reject(ErrorCode.PartitionIdSpaceExhausted);
        return propose(Operation.CreatePartitionsWithAssignments, encodeCreatePartitionsWithAssignments({
          streamId: stream.id, topicId: topic.id, partitionsCount: r.partitionsCount, assignments,
        }));
      });
    case Operation.DeletePartitions:
      return decodeOr(op, deletePartitionsCommand.decodeRequest(body), (r) => {
        const t = needTopic(state, r.streamId, r.topicId);
        if ('status' in t) return reject(t.status);
        if (!canManageTopic(actor, t.value.stream.id, t.value.topic.id)) return reject(ErrorCode.Unauthorized);
        if (r.partitionsCount < 1 || r.partitionsCount > PARTITIONS_PER_REQUEST_MAX) return reject(ErrorCode.TooManyPartitions);
        if (r.partitionsCount > t.value.topic.partitions.length) return reject(ErrorCode.InvalidPartitionsCount);
        return propose(op, body);
      });
    case Operation.DeleteSegments:
      return decodeOr(op, deleteSegmentsCommand.decodeRequest(body), (r) => {
        const t = needTopic(state, r.streamId, r.topicId);
        if ('status' in t) return reject(t.status);
        const { stream, topic } = t.value;
        if (!topic.partitions.some((p) => p.id === r.partitionId)) return reject(NotFound.partition);
        if (!canManageTopic(actor, stream.id, topic.id)) return reject(ErrorCode.Unauthorized);
        return propose(Operation.TruncatePartition, encodeTruncatePartition({
          streamId: numericIdentifier(stream.id), topicId: numericIdentifier(topic.id), partitionId: r.partitionId,
          upToOffset: host.segmentsUpToOffset ?? 0n,
        }));
      });
    case Operation.CreateConsumerGroup:
      return decodeOr(op, createConsumerGroupCommand.decodeRequest(body), (r) => {
        const t = needTopic(state, r.streamId, r.topicId);
        if ('status' in t) return reject(t.status);
        if (!canReadTopic(actor, t.value.stream.id, t.value.topic.id)) return reject(ErrorCode.Unauthorized);
        if (t.value.topic.groupIndex.has(r.name)) return reject(ErrorCode.ConsumerGroupNameAlreadyExists);
        return propose(op, body);
      });
    case Operation.DeleteConsumerGroup:
    case Operation.JoinConsumerGroup:
    case Operation.LeaveConsumerGroup:
      return admitGroupOp(state, actor, input, op === Operation.DeleteConsumerGroup ? deleteConsumerGroupCommand.decodeRequest(body)
        : op === Operation.JoinConsumerGroup ? joinConsumerGroupCommand.decodeRequest(body) : leaveConsumerGroupCommand.decodeRequest(body));
    case Operation.CreateUser:
      return decodeOr(op, createUserCommand.decodeRequest(body), (r) => {
        if (!canManageUsers(actor)) return reject(ErrorCode.Unauthorized);
        if (!isValidUsername(r.username)) return reject(ErrorCode.InvalidUsername);
        if (!isValidPassword(r.password)) return reject(ErrorCode.InvalidPassword);
        if (state.model.userIndex.has(r.username)) return reject(ErrorCode.UserAlreadyExists);
        if (checkEmptyScope(r.options) !== null) return reject(ErrorCode.UnsupportedOptionKey);
        const hash = requireHost(host.passwordHash, 'CreateUser needs the host password hash');
        return propose(op, createUserCommand.encodeRequest({ ...r, password: hash }));
      });
    case Operation.UpdateUser:
      return decodeOr(op, updateUserCommand.decodeRequest(body), (r) => {
        if (!canManageUsers(actor)) return reject(ErrorCode.Unauthorized);
        const user = findUser(state.model, r.userId);
        if (user === undefined) return reject(NotFound.user);
        if (r.username !== null) {
          if (!isValidUsername(r.username)) return reject(ErrorCode.InvalidUsername);
          const holder = state.model.userIndex.get(r.username);
          if (holder !== undefined && holder !== user.id) return reject(ErrorCode.UserAlreadyExists);
        }
        if (checkEmptyScope(r.options) !== null) return reject(ErrorCode.UnsupportedOptionKey);
        return propose(op, body);
      });
    case Operation.DeleteUser:
    case Operation.UpdatePermissions:
      return decodeOr(op, (op === Operation.DeleteUser ? deleteUserCommand : updatePermissionsCommand).decodeRequest(body), (r) => {
        if (!canManageUsers(actor)) return reject(ErrorCode.Unauthorized);
        const user = findUser(state.model, r.userId);
        if (user === undefined) return reject(NotFound.user);
        if (user.id === ROOT_USER_ID) return reject(op === Operation.DeleteUser ? ErrorCode.CannotDeleteUser : ErrorCode.CannotChangePermissions);
        return propose(op, body);
      });
    case Operation.ChangePassword:
      return decodeOr(op, changePasswordCommand.decodeRequest(body), (r) => {
        const user = findUser(state.model, r.userId);
        if (user === undefined) return reject(NotFound.user);
        if (user.id !== input.actor.userId && !canManageUsers(actor)) return reject(ErrorCode.Unauthorized);
        if (!isValidPassword(r.newPassword)) return reject(ErrorCode.InvalidPassword);
        if (host.currentPasswordMatches !== true) return reject(ErrorCode.InvalidCredentials);
        const hash = requireHost(host.passwordHash, 'ChangePassword needs the host password hash');
        return propose(op, changePasswordCommand.encodeRequest({ userId: numericIdentifier(user.id), currentPassword: '', newPassword: hash }));
      });
    case Operation.CreatePersonalAccessToken:
      return decodeOr(op, createPersonalAccessTokenCommand.decodeRequest(body), (r) => admitCreatePat(actor, input, r.name, r.expiry));
    case Operation.DeletePersonalAccessToken:
      return decodeOr(op, deletePersonalAccessTokenCommand.decodeRequest(body), (r) => {
        if (actor === undefined) return reject(ErrorCode.Unauthenticated);
        return actor.tokens.has(r.name) ? propose(op, body) : reject(NotFound.user);
      });
    default:
      return { kind: 'evict', reason: 'invalid_request_operation', detail: `operation ${op} is not admissible on the metadata plane` };
  }
}

function requireHost<T>(value: T | undefined, what: string): T {
  assert(value !== undefined, what);
  return value;
}

function admitCreateTopic(state: MetadataState, actor: User | undefined, r: ReturnType<typeof createTopicCommand.decodeRequest> extends Decoded<infer T> ? T : never): AdmitResult {
  const s = needStream(state, r.streamId);
  if ('status' in s) return reject(s.status);
  const stream = s.value;
  if (!canCreateTopic(actor, stream.id)) return reject(ErrorCode.Unauthorized);
  if (r.partitionsCount > PARTITIONS_PER_REQUEST_MAX) return reject(ErrorCode.TooManyPartitions);
  if (stream.topicIndex.has(r.name)) return reject(ErrorCode.TopicNameAlreadyExists);
  const topicId = stream.topics.nextId();
  if (topicId >= TOPIC_ID_LIMIT) return reject(ErrorCode.TooManyTopics);
  const options = resolveTopicCreateOptions(r.options, r.partitionsCount);
  if (!options.ok) return reject(options.code);
  const assignments = deriveAssignments(stream.id, topicId, 0, r.partitionsCount);
  if (assignments === null) return reject(ErrorCode.PartitionIdSpaceExhausted);
  return propose(Operation.CreateTopicWithAssignments, encodeCreateTopicWithAssignments({
    streamId: stream.id, topicId, name: r.name, partitionsCount: r.partitionsCount,
    explicit: toOptionEntries(options.explicit), derived: toOptionEntries(options.derived), assignments,
  }));
}

function admitGroupOp(state: MetadataState, actor: User | undefined, input: AdmitInput,
  decoded: Decoded<{ streamId: Identifier; topicId: Identifier; groupId: Identifier }>): AdmitResult {
  return decodeOr(input.operation, decoded, (r) => {
    const t = needTopic(state, r.streamId, r.topicId);
    if ('status' in t) return reject(t.status);
    const { stream, topic } = t.value;
    const group = findGroup(topic, r.groupId);
    if (group === undefined) return reject(NotFound.group);
    if (!canReadTopic(actor, stream.id, topic.id)) return reject(ErrorCode.Unauthorized);
    if (input.operation === Operation.LeaveConsumerGroup && memberOf(group, input.client) === undefined) {
      return reject(StateErrorCode.ConsumerGroupMemberNotFound);
    }
    if (input.operation !== Operation.JoinConsumerGroup) return propose(input.operation, input.body);
    const inFlight = (input.host?.inFlight ?? []).filter((p) => topic.partitions.some((x) => x.id === p));
    return propose(input.operation, encodeJoinGroup({ streamId: r.streamId, topicId: r.topicId, groupId: r.groupId, inFlight }));
  });
}

function admitCreatePat(actor: User | undefined, input: AdmitInput, name: string, expiry: bigint): AdmitResult {
  if (actor === undefined) return reject(ErrorCode.Unauthenticated);
  if (!isValidPatName(name)) return reject(ErrorCode.InvalidPersonalAccessTokenName);
  if (expiry !== PAT_EXPIRY_SERVER_DEFAULT && expiry !== PAT_EXPIRY_NEVER && input.timestamp + expiry >= U64_MAX) {
    return reject(ErrorCode.InvalidPersonalAccessTokenExpiry);
  }
  const existing = actor.tokens.get(name);
  if (existing !== undefined && !isExpired(existing, input.timestamp)) return reject(ErrorCode.PersonalAccessTokenAlreadyExists);
  const token = requireHost(input.host?.token, 'CreatePersonalAccessToken needs the host-generated token');
  return propose(Operation.CreatePersonalAccessToken, encodeCreatePat({ name, expiry, token }));
}

/**
 * The committed operation that creates the root user on the first boot of an empty cluster. The
 * host proposes it from client 0 with user id 0; the state accepts it as the root bootstrap only
 * while no user exists (afterwards it is an ordinary CreateUser by root and fails
 * UserAlreadyExists). Root gets id 0, active status and every permission.
 */
export function buildRootUserCreateBody(username: string, passwordHash: string): { operation: number; body: Uint8Array } {
  assert(isValidUsername(username), `root username must be 3..50 bytes: ${username}`);
  assert(passwordHash.length > 0, 'root password hash is empty');
  return {
    operation: Operation.CreateUser,
    body: createUserCommand.encodeRequest({ username, password: passwordHash, status: 1, permissions: ALL_PERMISSIONS, options: [] }),
  };
}

