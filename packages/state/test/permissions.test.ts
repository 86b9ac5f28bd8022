import {
  CommandCode, ErrorCode, Operation, type Permissions, type StreamPermissions, buildBatch, createConsumerGroupCommand,
  createPartitionsCommand, createStreamCommand, createTopicCommand, createUserCommand, deleteConsumerGroupCommand,
  deletePartitionsCommand, deleteSegmentsCommand, deleteStreamCommand, deleteTopicCommand, deleteUserCommand, getStreamCommand,
  getTopicCommand, getUserCommand, joinConsumerGroupCommand, purgeStreamCommand, purgeTopicCommand, sendMessagesCommand,
  updatePermissionsCommand, updateStreamCommand, updateTopicCommand, updateUserCommand,
} from '@shoal/protocol';
import { describe, expect, it } from 'vitest';
import { admitSendMessages, answerRead, resolveTarget } from '../src/index.js';
import { Harness, NO_GLOBAL, id } from './harness.js';

type G = Permissions['global'];
const stream = (over: Partial<StreamPermissions>): StreamPermissions => ({
  streamId: 0, manageStream: false, readStream: false, manageTopics: false, readTopics: false, pollMessages: false, sendMessages: false, topics: [], ...over,
});
const topicScope = (over: Partial<StreamPermissions['topics'][number]>) =>
  stream({ topics: [{ topicId: 0, manageTopic: false, readTopic: false, pollMessages: false, sendMessages: false, ...over }] });

/** Grants to test, each a permissions value for user "u" (stream 0 / topic 0 are the targets). */
const GRANTS: Record<string, Permissions | null> = {
  none: null,
  empty: { global: NO_GLOBAL, streams: [] },
  ...Object.fromEntries((Object.keys(NO_GLOBAL) as (keyof G)[]).map((k) => [`global.${k}`, { global: { ...NO_GLOBAL, [k]: true }, streams: [] }])),
  ...Object.fromEntries((['manageStream', 'readStream', 'manageTopics', 'readTopics', 'pollMessages', 'sendMessages'] as const)
    .map((k) => [`stream.${k}`, { global: NO_GLOBAL, streams: [stream({ [k]: true })] }])),
  ...Object.fromEntries((['manageTopic', 'readTopic', 'pollMessages', 'sendMessages'] as const)
    .map((k) => [`topic.${k}`, { global: NO_GLOBAL, streams: [topicScope({ [k]: true })] }])),
  'other-stream.manageStream': { global: NO_GLOBAL, streams: [{ ...stream({ manageStream: true, manageTopics: true, pollMessages: true, sendMessages: true }), streamId: 1 }] },
};

/** The reference rules, restated independently of src/permissions.ts. */
function expected(p: Permissions | null, rule: string): boolean {
  const g = p?.global ?? NO_GLOBAL;
  const s = p?.streams.find((x) => x.streamId === 0);
  const t = s?.topics.find((x) => x.topicId === 0);
  const readTopics = g.readStreams || g.manageStreams || g.manageTopics || g.readTopics || s?.manageTopics === true || s?.readTopics === true;
  switch (rule) {
    case 'servers': return g.manageServers || g.readServers;
    case 'manageUsers': return g.manageUsers;
    case 'readUsers': return g.manageUsers || g.readUsers;
    case 'createStream': return g.manageStreams;
    case 'readStreams': return g.manageStreams || g.readStreams;
    case 'readStream': return g.manageStreams || g.readStreams || s?.manageStream === true || s?.readStream === true;
    case 'manageStream': return g.manageStreams || s?.manageStream === true;
    case 'createTopic': return g.manageStreams || g.manageTopics || s?.manageTopics === true;
    case 'readTopics': return readTopics;
    case 'readTopic': return readTopics || t?.manageTopic === true || t?.readTopic === true;
    case 'manageTopic': return g.manageStreams || g.manageTopics || s?.manageTopics === true || t?.manageTopic === true;
    case 'poll': return g.pollMessages || s?.pollMessages === true || s?.readStream === true || s?.manageTopics === true || s?.readTopics === true
      || t?.pollMessages === true || t?.readTopic === true || t?.manageTopic === true;
    case 'send': return g.sendMessages || s?.sendMessages === true || s?.manageStream === true || s?.manageTopics === true
      || t?.sendMessages === true || t?.manageTopic === true;
    default: throw new Error(rule);
  }
}

function setup(p: Permissions | null): { h: Harness; uid: number } {
  const h = Harness.withRoot();
  h.createStream('s0');
  h.createStream('s1');
  h.createTopic(0, 't0', 2);
  h.run(Operation.CreateConsumerGroup, createConsumerGroupCommand.encodeRequest({ streamId: id(0), topicId: id(0), name: 'g' }));
  const uid = h.createUser('user', p);
  h.createUser('other', null);
  return { h, uid };
}

const batch = (() => {
  const b = buildBatch([{ id: 1n, payload: new Uint8Array([1, 2, 3]), originTimestamp: 5n }]);
  if (!b.ok) throw new Error(b.reason);
  return b.value;
})();

const h32 = (bytes: Uint8Array): number => bytes.length;

type Probe = (h: Harness, uid: number) => number;
const write = (operation: number, body: Uint8Array): Probe => (h, uid) => h.code(operation, body, uid);
const read = (code: number, body: Uint8Array): Probe => (h, uid) => answerRead(h.state, { code, body, userId: uid, client: 9n }).code;

const COMMANDS: [string, string, Probe][] = [
  ['CreateStream', 'createStream', write(Operation.CreateStream, createStreamCommand.encodeRequest({ name: 'new', options: [] }))],
  ['UpdateStream', 'manageStream', write(Operation.UpdateStream, updateStreamCommand.encodeRequest({ streamId: id(0), name: 'ren', options: [] }))],
  ['DeleteStream', 'manageStream', write(Operation.DeleteStream, deleteStreamCommand.encodeRequest({ streamId: id(0) }))],
  ['PurgeStream', 'manageStream', write(Operation.PurgeStream, purgeStreamCommand.encodeRequest({ streamId: id(0) }))],
  ['GetStreams', 'readStreams', read(CommandCode.GetStreams, new Uint8Array(0))],
  ['GetStream', 'readStream', read(CommandCode.GetStream, getStreamCommand.encodeRequest({ streamId: id(0) }))],
  ['CreateTopic', 'createTopic', write(Operation.CreateTopic, createTopicCommand.encodeRequest({ streamId: id(0), partitionsCount: 1, name: 'nt', options: [] }))],
  ['UpdateTopic', 'manageTopic', write(Operation.UpdateTopic, updateTopicCommand.encodeRequest({ streamId: id(0), topicId: id(0), name: 'rt', options: [] }))],
  ['DeleteTopic', 'manageTopic', write(Operation.DeleteTopic, deleteTopicCommand.encodeRequest({ streamId: id(0), topicId: id(0) }))],
  ['PurgeTopic', 'manageTopic', write(Operation.PurgeTopic, purgeTopicCommand.encodeRequest({ streamId: id(0), topicId: id(0) }))],
  ['CreatePartitions', 'manageTopic', write(Operation.CreatePartitions, createPartitionsCommand.encodeRequest({ streamId: id(0), topicId: id(0), partitionsCount: 1 }))],
  ['DeletePartitions', 'manageTopic', write(Operation.DeletePartitions, deletePartitionsCommand.encodeRequest({ streamId: id(0), topicId: id(0), partitionsCount: 1 }))],
  ['DeleteSegments', 'manageTopic', write(Operation.DeleteSegments, deleteSegmentsCommand.encodeRequest({ streamId: id(0), topicId: id(0), partitionId: 0, segmentsCount: 1 }))],
  ['GetTopic', 'readTopic', read(CommandCode.GetTopic, getTopicCommand.encodeRequest({ streamId: id(0), topicId: id(0) }))],
  ['GetTopics', 'readTopics', read(CommandCode.GetTopics, getStreamCommand.encodeRequest({ streamId: id(0) }))],
  ['CreateConsumerGroup', 'readTopic', write(Operation.CreateConsumerGroup, createConsumerGroupCommand.encodeRequest({ streamId: id(0), topicId: id(0), name: 'ng' }))],
  ['DeleteConsumerGroup', 'readTopic', write(Operation.DeleteConsumerGroup, deleteConsumerGroupCommand.encodeRequest({ streamId: id(0), topicId: id(0), groupId: id(0) }))],
  ['JoinConsumerGroup', 'readTopic', write(Operation.JoinConsumerGroup, joinConsumerGroupCommand.encodeRequest({ streamId: id(0), topicId: id(0), groupId: id(0) }))],
  ['GetConsumerGroup', 'readTopic', read(CommandCode.GetConsumerGroup, joinConsumerGroupCommand.encodeRequest({ streamId: id(0), topicId: id(0), groupId: id(0) }))],
  ['CreateUser', 'manageUsers', write(Operation.CreateUser, createUserCommand.encodeRequest({ username: 'newuser', password: 'pw123', status: 1, permissions: null, options: [] }))],
  ['UpdateUser', 'manageUsers', write(Operation.UpdateUser, updateUserCommand.encodeRequest({ userId: id(2), username: null, status: 2, options: [] }))],
  ['DeleteUser', 'manageUsers', write(Operation.DeleteUser, deleteUserCommand.encodeRequest({ userId: id(2) }))],
  ['UpdatePermissions', 'manageUsers', write(Operation.UpdatePermissions, updatePermissionsCommand.encodeRequest({ userId: id(2), permissions: null }))],
  ['GetUser (other)', 'readUsers', read(CommandCode.GetUser, getUserCommand.encodeRequest({ userId: id(2) }))],
  ['GetUsers', 'readUsers', read(CommandCode.GetUsers, new Uint8Array(0))],
  ['GetClients', 'servers', (h, uid) => answerRead(h.state, { code: CommandCode.GetClients, body: new Uint8Array(0), userId: uid, client: 9n, host: { sessions: () => [] } }).code],
  ['PollMessages', 'poll', (h, uid) => {
    const r = resolveTarget(h.state, { kind: 'consumer', id: id(1) }, id(0), id(0), 0, { userId: uid, client: 9n, h32, requireMembership: false });
    return r.ok ? 0 : r.code;
  }],
  ['SendMessages', 'send', (h, uid) => {
    const body = sendMessagesCommand.encodeRequest({ streamId: id(0), topicId: id(0), partitioning: { kind: 'partition_id', partitionId: 1 }, messagesCount: 1, batch });
    const r = admitSendMessages(h.state, body, uid, 0, h32);
    return r.kind === 'route' ? 0 : r.kind === 'reject' ? r.status : -1;
  }],
];

describe('permission matrix (every command × the grants that matter)', () => {
  for (const [grantName, permissions] of Object.entries(GRANTS)) {
    it(`grant ${grantName}`, () => {
      for (const [command, rule, probe] of COMMANDS) {
        const { h, uid } = setup(permissions);
        const code = probe(h, uid);
        const allowed = expected(permissions, rule);
        expect({ command, denied: code === ErrorCode.Unauthorized }).toEqual({ command, denied: !allowed });
      }
    });
  }

  it('root passes every check; self-service needs no permission', () => {
    for (const [command, , probe] of COMMANDS) {
      const { h } = setup(null);
      expect({ command, code: probe(h, 0) === ErrorCode.Unauthorized }).toEqual({ command, code: false });
    }
    const { h, uid } = setup(null);
    expect(answerRead(h.state, { code: CommandCode.GetUser, body: getUserCommand.encodeRequest({ userId: id(uid) }), userId: uid, client: 1n }).ok).toBe(true);
    expect(answerRead(h.state, { code: CommandCode.GetPersonalAccessTokens, body: new Uint8Array(0), userId: uid, client: 1n }).ok).toBe(true);
  });
});
