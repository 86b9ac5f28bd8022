import {
  CommandCode, ErrorCode, HeaderKind, Operation, changePasswordCommand, createConsumerGroupCommand, createPartitionsCommand,
  createPersonalAccessTokenCommand, createStreamCommand, createTopicCommand, createUserCommand, deleteConsumerGroupCommand,
  deletePartitionsCommand, deletePersonalAccessTokenCommand, deleteSegmentsCommand, deleteStreamCommand, deleteTopicCommand,
  deleteUserCommand, encodeHeaderValue, getStreamCommand, getTopicCommand, joinConsumerGroupCommand, leaveConsumerGroupCommand,
  purgeStreamCommand, purgeTopicCommand, stringIdentifier, updatePermissionsCommand, updateStreamCommand, updateTopicCommand,
  updateUserCommand,
} from '@shoal/protocol';
import { describe, expect, it } from 'vitest';
import {
  StateErrorCode, answerRead, encodeCreatePartitionsWithAssignments, encodeCreateTopicWithAssignments, encodeTruncatePartition,
} from '../src/index.js';
import { Harness, globalOnly, id } from './harness.js';

const E = ErrorCode;
const str = (key: string, value: string) => ({ key, valueKind: HeaderKind.String, value: encodeHeaderValue({ kind: 'string', value }) });

function world(): Harness {
  const h = Harness.withRoot();
  h.createStream('s0');
  h.createTopic(0, 't0', 2);
  h.run(Operation.CreateConsumerGroup, createConsumerGroupCommand.encodeRequest({ streamId: id(0), topicId: id(0), name: 'g0' }));
  h.createUser('alice', null);
  return h;
}

describe('every failure path returns the reference code', () => {
  const cases: [string, (h: Harness) => number, number][] = [
    ['CreateStream: name exists', (h) => h.code(Operation.CreateStream, createStreamCommand.encodeRequest({ name: 's0', options: [] })), E.StreamNameAlreadyExists],
    ['CreateStream: option key', (h) => h.code(Operation.CreateStream, createStreamCommand.encodeRequest({ name: 'x', options: [str('k', 'v')] })), E.UnsupportedOptionKey],
    ['CreateStream: unauthorized', (h) => h.code(Operation.CreateStream, createStreamCommand.encodeRequest({ name: 'x', options: [] }), 1), E.Unauthorized],
    ['UpdateStream: not found', (h) => h.code(Operation.UpdateStream, updateStreamCommand.encodeRequest({ streamId: id(9), name: 'x', options: [] })), E.StreamIdNotFound],
    ['UpdateStream: not found by name', (h) => h.code(Operation.UpdateStream, updateStreamCommand.encodeRequest({ streamId: stringIdentifier('nope'), name: 'x', options: [] })), E.StreamIdNotFound],
    ['UpdateStream: name taken', (h) => { h.createStream('s1'); return h.code(Operation.UpdateStream, updateStreamCommand.encodeRequest({ streamId: id(1), name: 's0', options: [] })); }, E.StreamNameAlreadyExists],
    ['DeleteStream: not found', (h) => h.code(Operation.DeleteStream, deleteStreamCommand.encodeRequest({ streamId: id(7) })), E.StreamIdNotFound],
    ['PurgeStream: not found', (h) => h.code(Operation.PurgeStream, purgeStreamCommand.encodeRequest({ streamId: id(7) })), E.StreamIdNotFound],
    ['CreateTopic: stream missing', (h) => h.code(Operation.CreateTopic, createTopicCommand.encodeRequest({ streamId: id(5), partitionsCount: 1, name: 't', options: [] })), E.StreamIdNotFound],
    ['CreateTopic: name exists', (h) => h.code(Operation.CreateTopic, createTopicCommand.encodeRequest({ streamId: id(0), partitionsCount: 1, name: 't0', options: [] })), E.TopicNameAlreadyExists],
    ['CreateTopic: too many partitions', (h) => h.code(Operation.CreateTopic, createTopicCommand.encodeRequest({ streamId: id(0), partitionsCount: 1001, name: 't', options: [] })), E.TooManyPartitions],
    ['CreateTopic: unknown option', (h) => h.code(Operation.CreateTopic, createTopicCommand.encodeRequest({ streamId: id(0), partitionsCount: 1, name: 't', options: [str('bogus', '1')] })), E.UnsupportedOptionKey],
    ['CreateTopic: bad option value', (h) => h.code(Operation.CreateTopic, createTopicCommand.encodeRequest({ streamId: id(0), partitionsCount: 1, name: 't', options: [str('segment_size', '1 KiB')] })), E.InvalidOptionValue],
    ['UpdateTopic: topic missing', (h) => h.code(Operation.UpdateTopic, updateTopicCommand.encodeRequest({ streamId: id(0), topicId: id(4), name: 'x', options: [] })), E.TopicIdNotFound],
    ['UpdateTopic: create-only key', (h) => h.code(Operation.UpdateTopic, updateTopicCommand.encodeRequest({ streamId: id(0), topicId: id(0), name: 't0', options: [str('segment_size', '2 MiB')] })), E.UnsupportedOptionKey],
    ['UpdateTopic: name taken', (h) => { h.createTopic(0, 't1'); return h.code(Operation.UpdateTopic, updateTopicCommand.encodeRequest({ streamId: id(0), topicId: id(1), name: 't0', options: [] })); }, E.TopicNameAlreadyExists],
    ['DeleteTopic: missing', (h) => h.code(Operation.DeleteTopic, deleteTopicCommand.encodeRequest({ streamId: id(0), topicId: id(3) })), E.TopicIdNotFound],
    ['PurgeTopic: stream missing', (h) => h.code(Operation.PurgeTopic, purgeTopicCommand.encodeRequest({ streamId: id(3), topicId: id(0) })), E.StreamIdNotFound],
    ['CreatePartitions: zero', (h) => h.code(Operation.CreatePartitions, createPartitionsCommand.encodeRequest({ streamId: id(0), topicId: id(0), partitionsCount: 0 })), E.TooManyPartitions],
    ['CreatePartitions: topic missing', (h) => h.code(Operation.CreatePartitions, createPartitionsCommand.encodeRequest({ streamId: id(0), topicId: id(9), partitionsCount: 1 })), E.TopicIdNotFound],
    ['DeletePartitions: more than exist', (h) => h.code(Operation.DeletePartitions, deletePartitionsCommand.encodeRequest({ streamId: id(0), topicId: id(0), partitionsCount: 3 })), E.InvalidPartitionsCount],
    ['DeleteSegments: partition missing', (h) => h.code(Operation.DeleteSegments, deleteSegmentsCommand.encodeRequest({ streamId: id(0), topicId: id(0), partitionId: 9, segmentsCount: 1 })), E.PartitionNotFound],
    ['CreateConsumerGroup: name exists', (h) => h.code(Operation.CreateConsumerGroup, createConsumerGroupCommand.encodeRequest({ streamId: id(0), topicId: id(0), name: 'g0' })), E.ConsumerGroupNameAlreadyExists],
    ['CreateConsumerGroup: topic missing', (h) => h.code(Operation.CreateConsumerGroup, createConsumerGroupCommand.encodeRequest({ streamId: id(0), topicId: id(8), name: 'g' })), E.TopicIdNotFound],
    ['DeleteConsumerGroup: missing', (h) => h.code(Operation.DeleteConsumerGroup, deleteConsumerGroupCommand.encodeRequest({ streamId: id(0), topicId: id(0), groupId: id(5) })), E.ConsumerGroupIdNotFound],
    ['JoinConsumerGroup: missing', (h) => h.code(Operation.JoinConsumerGroup, joinConsumerGroupCommand.encodeRequest({ streamId: id(0), topicId: id(0), groupId: stringIdentifier('nope') })), E.ConsumerGroupIdNotFound],
    ['LeaveConsumerGroup: not a member', (h) => h.code(Operation.LeaveConsumerGroup, leaveConsumerGroupCommand.encodeRequest({ streamId: id(0), topicId: id(0), groupId: id(0) })), StateErrorCode.ConsumerGroupMemberNotFound],
    ['CreateUser: exists', (h) => h.code(Operation.CreateUser, createUserCommand.encodeRequest({ username: 'alice', password: 'secret', status: 1, permissions: null, options: [] })), E.UserAlreadyExists],
    ['CreateUser: short username', (h) => h.code(Operation.CreateUser, createUserCommand.encodeRequest({ username: 'ab', password: 'secret', status: 1, permissions: null, options: [] })), E.InvalidUsername],
    ['CreateUser: short password', (h) => h.code(Operation.CreateUser, createUserCommand.encodeRequest({ username: 'bobby', password: 'ab', status: 1, permissions: null, options: [] })), E.InvalidPassword],
    ['CreateUser: unauthorized', (h) => h.code(Operation.CreateUser, createUserCommand.encodeRequest({ username: 'bobby', password: 'secret', status: 1, permissions: null, options: [] }), 1), E.Unauthorized],
    ['UpdateUser: missing', (h) => h.code(Operation.UpdateUser, updateUserCommand.encodeRequest({ userId: id(42), username: null, status: 2, options: [] })), E.ResourceNotFound],
    ['UpdateUser: username taken', (h) => h.code(Operation.UpdateUser, updateUserCommand.encodeRequest({ userId: id(1), username: 'iggy', status: null, options: [] })), E.UserAlreadyExists],
    ['DeleteUser: root', (h) => h.code(Operation.DeleteUser, deleteUserCommand.encodeRequest({ userId: id(0) })), E.CannotDeleteUser],
    ['DeleteUser: missing', (h) => h.code(Operation.DeleteUser, deleteUserCommand.encodeRequest({ userId: id(9) })), E.ResourceNotFound],
    ['UpdatePermissions: root', (h) => h.code(Operation.UpdatePermissions, updatePermissionsCommand.encodeRequest({ userId: id(0), permissions: null })), E.CannotChangePermissions],
    ['ChangePassword: wrong current', (h) => h.code(Operation.ChangePassword, changePasswordCommand.encodeRequest({ userId: id(1), currentPassword: 'wrong', newPassword: 'newpass' }), 1), E.InvalidCredentials],
    ['ChangePassword: other user', (h) => h.code(Operation.ChangePassword, changePasswordCommand.encodeRequest({ userId: id(0), currentPassword: 'iggy', newPassword: 'newpass' }), 1), E.Unauthorized],
    ['ChangePassword: missing user', (h) => h.code(Operation.ChangePassword, changePasswordCommand.encodeRequest({ userId: id(77), currentPassword: 'x', newPassword: 'newpass' })), E.ResourceNotFound],
    ['CreatePAT: bad name', (h) => h.code(Operation.CreatePersonalAccessToken, createPersonalAccessTokenCommand.encodeRequest({ name: 'ab', expiry: 0n })), E.InvalidPersonalAccessTokenName],
    ['CreatePAT: expiry overflow', (h) => h.code(Operation.CreatePersonalAccessToken, createPersonalAccessTokenCommand.encodeRequest({ name: 'tok', expiry: 0xffff_ffff_ffff_fff0n })), E.InvalidPersonalAccessTokenExpiry],
    ['CreatePAT: exists', (h) => { h.run(Operation.CreatePersonalAccessToken, createPersonalAccessTokenCommand.encodeRequest({ name: 'tok', expiry: 0n })); return h.code(Operation.CreatePersonalAccessToken, createPersonalAccessTokenCommand.encodeRequest({ name: 'tok', expiry: 0n })); }, E.PersonalAccessTokenAlreadyExists],
    ['DeletePAT: missing', (h) => h.code(Operation.DeletePersonalAccessToken, deletePersonalAccessTokenCommand.encodeRequest({ name: 'nope' })), E.ResourceNotFound],
    ['GetTopic: unauthorized', (h) => answerRead(h.state, { code: CommandCode.GetTopic, body: getTopicCommand.encodeRequest({ streamId: id(0), topicId: id(0) }), userId: 1, client: 1n }).code, E.Unauthorized],
    ['GetStreams: unauthenticated', (h) => answerRead(h.state, { code: CommandCode.GetStreams, body: new Uint8Array(0), userId: null, client: 1n }).code, E.Unauthenticated],
    ['FlushUnsavedBuffer', (h) => answerRead(h.state, { code: CommandCode.FlushUnsavedBuffer, body: new Uint8Array(0), userId: 0, client: 1n }).code, E.FeatureUnavailable],
  ];
  for (const [name, run, code] of cases) {
    it(name, () => expect(run(world())).toBe(code));
  }

  it('an undecodable body: status 3 where the reference decodes before consensus, an eviction elsewhere', () => {
    const h = world();
    // CreateStream, CreateTopic, CreatePartitions, DeletePartitions, UpdateTopic, UpdateStream, UpdateUser,
    // CreateUser: the reference's static-bounds pass denies InvalidCommand (server dispatch.rs).
    expect(h.run(Operation.CreateStream, new Uint8Array([0])).admitted).toEqual({ kind: 'reject', status: E.InvalidCommand });
    expect(h.run(Operation.CreateStream, new Uint8Array([1, 0x61, 9, 9])).admitted).toEqual({ kind: 'reject', status: E.InvalidCommand });
    expect(h.run(Operation.UpdateUser, new Uint8Array([1])).admitted).toEqual({ kind: 'reject', status: E.InvalidCommand });
    // Everything else is structurally invalid at prepare time: InvalidRequestBody (metadata impls).
    expect(h.run(Operation.DeleteStream, new Uint8Array([9])).admitted).toMatchObject({ kind: 'evict', reason: 'invalid_request_body' });
    expect(h.run(Operation.CreateTopicWithAssignments, new Uint8Array(4)).admitted).toMatchObject({ kind: 'evict', reason: 'invalid_request_operation' });
  });
});

describe('apply re-validates what admission decided (the state moved in between)', () => {
  it('two creates of one stream name in the pipeline: the second commits StreamNameAlreadyExists', () => {
    const h = Harness.withRoot();
    const body = createStreamCommand.encodeRequest({ name: 'dup', options: [] });
    expect(h.run(Operation.CreateStream, body).admitted.kind).toBe('propose');
    expect(h.apply(Operation.CreateStream, body, 0, 1n).code).toBe(E.StreamNameAlreadyExists);
  });

  it('two topic creates admitted against the same state get distinct ids and groups', () => {
    const h = Harness.withRoot();
    h.createStream('s');
    const a = h.run(Operation.CreateTopic, createTopicCommand.encodeRequest({ streamId: id(0), partitionsCount: 2, name: 'a', options: [] })).admitted;
    expect(a.kind).toBe('propose');
    // Both predicted topic id 0: the committed create of "b" must re-derive id 1.
    const predicted = encodeCreateTopicWithAssignments({
      streamId: 0, topicId: 0, name: 'b', partitionsCount: 2, explicit: [], derived: [],
      assignments: [{ partitionId: 0, consensusGroupId: 0n }, { partitionId: 1, consensusGroupId: 1n }],
    });
    const out = h.apply(Operation.CreateTopicWithAssignments, predicted, 0, 1n);
    expect(out.ok).toBe(true);
    const routes = h.state.partitions();
    expect(routes.map((r) => [r.topicId, r.partitionId, r.consensusGroupId])).toEqual([
      [0, 0, 0n], [0, 1, 1n], [1, 0, 1n << 20n], [1, 1, (1n << 20n) | 1n],
    ]);
  });

  it('65 with a miscounted assignment list is InvalidPartitionsCount; 68 on a missing partition is PartitionNotFound', () => {
    const h = world();
    const bad = encodeCreatePartitionsWithAssignments({ streamId: 0, topicId: 0, partitionsCount: 2, assignments: [{ partitionId: 2, consensusGroupId: 2n }] });
    expect(h.apply(Operation.CreatePartitionsWithAssignments, bad, 0, 1n).code).toBe(E.InvalidPartitionsCount);
    const trunc = encodeTruncatePartition({ streamId: id(0), topicId: id(0), partitionId: 5, upToOffset: 10n });
    expect(h.apply(Operation.TruncatePartition, trunc, 0, 1n).code).toBe(E.PartitionNotFound);
  });

  it('a permission revoked between admission and commit commits Unauthorized', () => {
    const h = Harness.withRoot();
    const uid = h.createUser('carol', globalOnly({ manageStreams: true }));
    const body = createStreamCommand.encodeRequest({ name: 'x', options: [] });
    const admitted = h.run(Operation.CreateStream, body, uid).admitted;
    expect(admitted.kind).toBe('propose');
    h.run(Operation.UpdatePermissions, updatePermissionsCommand.encodeRequest({ userId: id(uid), permissions: null }));
    expect(h.apply(Operation.CreateStream, body, uid, 1n).code).toBe(E.Unauthorized);
  });

  it('internal operations and the admitted-only forms refuse raw client bodies at apply', () => {
    const h = world();
    expect(h.apply(Operation.CreateTopic, new Uint8Array(0), 0, 1n).code).toBe(E.InvalidCommand);
    expect(h.apply(Operation.DeleteSegments, new Uint8Array(0), 0, 1n).code).toBe(E.InvalidCommand);
    expect(h.apply(Operation.CreateTopicWithAssignments, new Uint8Array([1, 2, 3]), 0, 1n).code).toBe(E.InvalidCommand);
  });
});
