/**
 * Shoal's reply bytes through the OFFICIAL SDK's decoders (apache/iggy foreign/node, the copy in
 * ../shared/compat, run from SHOAL_COMPAT_SDK where its dependencies are installed): the bytes
 * Shoal's state machine and read path produce for every command with a reply body, whole reply
 * frames through the SDK's `decodeResponse`, and every eviction reason through its error mapping.
 * Run by `npm run compat` only (it needs ../shared).
 */
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { beforeAll, describe, expect, it } from 'vitest';
import {
  ByteWriter, CommandCode, EvictionReason, Operation, RequestHeaderView, buildBatch, createConsumerGroupCommand, createPersonalAccessTokenCommand,
  describeOptionsCommand, encodeRequestFrame, evictionErrorCode, getClientCommand, getClientsCommand, getClusterMetadataCommand,
  getConsumerGroupCommand, getConsumerGroupsCommand, getConsumerOffsetCommand, getMeCommand, getPersonalAccessTokensCommand,
  getStatsCommand, getStreamCommand, getStreamsCommand, getTopicCommand, getTopicsCommand, getUserCommand, getUsersCommand,
  joinConsumerGroupCommand, numericIdentifier, pollMessagesCommand, sendMessagesCommand, stampBatch, syncConsumerGroupCommand, writeClusterGroups,
} from '@shoal/protocol';
import { answerRead } from '@shoal/state';
import { Harness } from '../../packages/state/test/harness.js';
import { eviction, incompatibleProtocolEviction, loginReply, payloadReply, statusReply, type ReplyContext } from '@shoal/gateway';

const SDK = process.env['SHOAL_COMPAT_SDK'];
const wire = async (file: string): Promise<Record<string, unknown>> => {
  if (SDK === undefined) throw new Error('SHOAL_COMPAT_SDK is not set: run through npm run compat');
  return import(pathToFileURL(join(SDK, 'src/wire', file)).href) as Promise<Record<string, unknown>>;
};

type Deserializer = { deserialize(r: { status: number; length: number; data: Buffer }): unknown };
async function sdkDecode(file: string, name: string, payload: Uint8Array): Promise<unknown> {
  const module = await wire(file);
  const command = module[name] as Deserializer;
  const data = Buffer.from(payload);
  return command.deserialize({ status: 0, length: data.length, data });
}

const micros = (date: unknown): bigint => BigInt((date as Date).getTime()) * 1000n;

/** A catalog with everything a reply can carry: streams, topics, partitions, users, a group, a token. */
function world(): Harness {
  const h = Harness.withRoot();
  h.createStream('orders');
  h.createTopic(0, 'created', 3);
  h.createTopic(0, 'paid', 1);
  h.createUser('alice', { global: { manageServers: false, readServers: true, manageUsers: false, readUsers: true, manageStreams: false, readStreams: true, manageTopics: false, readTopics: true, pollMessages: true, sendMessages: false }, streams: [{ streamId: 0, manageStream: false, readStream: true, manageTopics: false, readTopics: true, pollMessages: true, sendMessages: true, topics: [{ topicId: 1, manageTopic: true, readTopic: true, pollMessages: false, sendMessages: true }] }] });
  return h;
}

function read(h: Harness, code: number, body: Uint8Array, host: Parameters<typeof answerRead>[1]['host'] = {}): Uint8Array {
  const out = answerRead(h.state, { code, body, userId: 0, client: 21n, host });
  if (!out.ok) throw new Error(`read ${code} failed with ${out.code}`);
  return out.payload;
}

function committed(h: Harness, operation: number, body: Uint8Array, client = 21n): Uint8Array {
  const step = h.run(operation, body, 0, client);
  if (step.outcome === null || !step.outcome.ok) throw new Error(`operation ${operation} failed: ${JSON.stringify(step.admitted)}`);
  return step.outcome.payload;
}

describe("Shoal's replies through the official SDK's decoders", () => {
  let h: Harness;
  beforeAll(() => {
    h = world();
  });

  it('streams: CreateStream, GetStream, GetStreams', async () => {
    const created = committed(h, Operation.CreateStream, new Uint8Array([3, 0x6e, 0x65, 0x77]));
    expect(await sdkDecode('stream/create-stream.command.ts', 'CREATE_STREAM', created)).toMatchObject({ id: 1, name: 'new', topicsCount: 0, options: {} });
    const stream = await sdkDecode('stream/get-stream.command.ts', 'GET_STREAM', read(h, CommandCode.GetStream, getStreamCommand.encodeRequest({ streamId: numericIdentifier(0) }))) as Record<string, unknown>;
    expect(stream).toMatchObject({ id: 0, name: 'orders', topicsCount: 2 });
    const list = await sdkDecode('stream/get-streams.command.ts', 'GET_STREAMS', read(h, CommandCode.GetStreams, new Uint8Array(0))) as Record<string, unknown>[];
    expect(list.map((s) => s['name'])).toEqual(['orders', 'new']);
    expect(await sdkDecode('stream/get-stream.command.ts', 'GET_STREAM', read(h, CommandCode.GetStream, getStreamCommand.encodeRequest({ streamId: numericIdentifier(9) })))).toBeNull();
  });

  it('topics: GetTopic with partitions, GetTopics, CreateTopic', async () => {
    const topic = await sdkDecode('topic/get-topic.command.ts', 'GET_TOPIC', read(h, CommandCode.GetTopic, getTopicCommand.encodeRequest({ streamId: numericIdentifier(0), topicId: numericIdentifier(0) }))) as Record<string, unknown>;
    expect(topic).toMatchObject({ id: 0, name: 'created', partitionsCount: 3 });
    expect((topic['partitions'] as unknown[]).length).toBe(3);
    const topics = await sdkDecode('topic/get-topics.command.ts', 'GET_TOPICS', read(h, CommandCode.GetTopics, getTopicsCommand.encodeRequest({ streamId: numericIdentifier(0) }))) as Record<string, unknown>[];
    expect(topics.map((t) => [t['name'], t['partitionsCount']])).toEqual([['created', 3], ['paid', 1]]);
    const missing = await sdkDecode('topic/get-topics.command.ts', 'GET_TOPICS', read(h, CommandCode.GetTopics, getTopicsCommand.encodeRequest({ streamId: numericIdentifier(42) })));
    expect(missing).toEqual([]);
  });

  it('users: CreateUser, GetUser with and without permissions, GetUsers', async () => {
    const users = await sdkDecode('user/get-users.command.ts', 'GET_USERS', read(h, CommandCode.GetUsers, new Uint8Array(0))) as Record<string, unknown>[];
    expect(users.map((u) => [u['userName'], u['status']])).toEqual([['iggy', 'Active'], ['alice', 'Active']]);
    const alice = await sdkDecode('user/get-user.command.ts', 'GET_USER', read(h, CommandCode.GetUser, getUserCommand.encodeRequest({ userId: numericIdentifier(1) }))) as Record<string, unknown>;
    expect(alice).toMatchObject({ id: 1, userName: 'alice', options: {} });
    expect(alice['permissions']).toMatchObject({ global: { ReadServers: true, ManageServers: false }, streams: [{ streamId: 0 }] });
    const created = committed(h, Operation.CreateUser, new Uint8Array([3, 0x62, 0x6f, 0x62, 4, 0x68, 0x61, 0x73, 0x68, 2, 0]));
    expect(await sdkDecode('user/create-user.command.ts', 'CREATE_USER', created)).toMatchObject({ userName: 'bob', status: 'Inactive', permissions: null });
  });

  it('consumer groups: CreateConsumerGroup (partitions of the topic), GetConsumerGroup, GetConsumerGroups, SyncConsumerGroup', async () => {
    const ids = { streamId: numericIdentifier(0), topicId: numericIdentifier(0) };
    const created = committed(h, Operation.CreateConsumerGroup, createConsumerGroupCommand.encodeRequest({ ...ids, name: 'billing' }));
    expect(await sdkDecode('consumer-group/create-group.command.ts', 'CREATE_GROUP', created)).toMatchObject({ name: 'billing', partitionsCount: 3, membersCount: 0 });
    committed(h, Operation.JoinConsumerGroup, joinConsumerGroupCommand.encodeRequest({ ...ids, groupId: numericIdentifier(0) }));
    const group = await sdkDecode('consumer-group/get-group.command.ts', 'GET_GROUP', read(h, CommandCode.GetConsumerGroup, getConsumerGroupCommand.encodeRequest({ ...ids, groupId: numericIdentifier(0) })));
    expect(group).toMatchObject({ name: 'billing', partitionsCount: 3, membersCount: 1 });
    const groups = await sdkDecode('consumer-group/get-groups.command.ts', 'GET_GROUPS', read(h, CommandCode.GetConsumerGroups, getConsumerGroupsCommand.encodeRequest(ids)));
    expect(groups).toMatchObject([{ name: 'billing', membersCount: 1 }]);
    const sync = await sdkDecode('consumer-group/sync-group.command.ts', 'SYNC_GROUP', read(h, CommandCode.SyncConsumerGroup, syncConsumerGroupCommand.encodeRequest({ ...ids, groupId: numericIdentifier(0) }))) as Record<string, unknown>;
    expect((sync['partitions'] as number[]).sort()).toEqual([0, 1, 2]);
  });

  it('personal access tokens: CreatePersonalAccessToken (raw token), GetPersonalAccessTokens', async () => {
    const created = committed(h, Operation.CreatePersonalAccessToken, createPersonalAccessTokenCommand.encodeRequest({ name: 'ci-token', expiry: 0n }));
    const token = await sdkDecode('token/create-token.command.ts', 'CREATE_TOKEN', created) as Record<string, unknown>;
    expect(typeof token['token']).toBe('string');
    const tokens = await sdkDecode('token/get-tokens.command.ts', 'GET_TOKENS', read(h, CommandCode.GetPersonalAccessTokens, new Uint8Array(0))) as Record<string, unknown>[];
    expect(tokens.map((t) => t['name'])).toEqual(['ci-token']);
  });

  it('system: GetMe, GetClient(s), GetStats, GetClusterMetadata (single node, and a cluster with the Shoal extension), DescribeOptions', async () => {
    const me = { clientId: 7, vsrClient: 21n, userId: 0, transport: 1, address: '127.0.0.1:50000' };
    const host = { me, sessions: () => [me], stats: () => STATS, cluster: () => CLUSTER };
    const decodedMe = await sdkDecode('client/get-me.command.ts', 'GET_ME', read(h, CommandCode.GetMe, new Uint8Array(0), host));
    expect(decodedMe).toMatchObject({ clientId: 7, userId: 0, transport: 'tcp', address: '127.0.0.1:50000', consumerGroupCount: 1 });
    expect(await sdkDecode('client/get-clients.command.ts', 'GET_CLIENTS', read(h, CommandCode.GetClients, new Uint8Array(0), host))).toMatchObject([{ clientId: 7 }]);
    expect(await sdkDecode('client/get-client.command.ts', 'GET_CLIENT', read(h, CommandCode.GetClient, getClientCommand.encodeRequest({ clientId: 7 }), host))).toMatchObject({ clientId: 7 });
    const stats = await sdkDecode('system/get-stats.command.ts', 'GET_STATS', read(h, CommandCode.GetStats, new Uint8Array(0), host));
    expect(stats).toMatchObject({ processId: 4242, hostname: 'shoal-host', streamsCount: 2, topicsCount: 2, partitionsCount: 4, consumersGroupsCount: 1 });
    const cluster = await sdkDecode('cluster/get-cluster-metadata.command.ts', 'GET_CLUSTER_METADATA', read(h, CommandCode.GetClusterMetadata, new Uint8Array(0), host));
    expect(cluster).toEqual({ name: 'single-node', nodes: [{ name: 'iggy-node', ip: '127.0.0.1', endpoints: { tcp: 8090, quic: 0, http: 3000, websocket: 0 }, role: 'Leader', status: 'Healthy' }] });
    // In a cluster Shoal appends its per-group primaries after the standard list (docs/cluster.md);
    // the SDK reads the standard part and ignores the rest.
    const w = new ByteWriter(512);
    w.bytes(getClusterMetadataCommand.encodeResponse(THREE_NODES));
    writeClusterGroups(w, { metadataView: 4, metadataPrimary: 1, nodeReplicaIds: [0, 1, 2], topics: [{ streamId: 0, streamName: 'orders', topicId: 0, topicName: 'created', partitions: [{ partitionId: 0, view: 2, primary: 2 }] }] });
    const three = await sdkDecode('cluster/get-cluster-metadata.command.ts', 'GET_CLUSTER_METADATA', w.finish()) as { name: string; nodes: { name: string; role: string; status: string }[] };
    expect(three.name).toBe('shoal-compat');
    expect(three.nodes.map((n) => [n.name, n.role, n.status])).toEqual([['node-0', 'Follower', 'Healthy'], ['node-1', 'Leader', 'Healthy'], ['node-2', 'Follower', 'Unreachable']]);
    const options = await sdkDecode('system/describe-options.command.ts', 'DESCRIBE_OPTIONS', read(h, CommandCode.DescribeOptions, describeOptionsCommand.encodeRequest({ scope: 1 }))) as Record<string, unknown>[];
    expect(options.map((o) => o['key'])).toEqual(['compression_algorithm', 'message_expiry', 'max_topic_size', 'segment_size', 'enforce_fsync', 'messages_required_to_save', 'size_of_messages_required_to_save', 'preallocate_segments']);
    void [getMeCommand, getClientsCommand, getStatsCommand, getClusterMetadataCommand, getPersonalAccessTokensCommand, getUsersCommand, getStreamsCommand];
  });

  it('messages: SendMessages confirmations, PollMessages with stamped batches, GetConsumerOffset', async () => {
    const sent = sendMessagesCommand.encodeResponse({ confirmations: [{ streamId: 0, topicId: 0, partitionId: 2, baseOffset: 40n }] });
    expect(await sdkDecode('message/send-messages.command.ts', 'SEND_MESSAGES', sent)).toMatchObject({ confirmations: [{ streamId: 0, topicId: 0, partitionId: 2, baseOffset: 40n }] });
    const built = buildBatch([0, 1, 2].map((i) => ({ id: BigInt(i + 1), payload: new TextEncoder().encode(`m${i}`), originTimestamp: 1_700_000_000_000_000n + BigInt(i) })));
    if (!built.ok) throw new Error(built.reason);
    const batch = built.value.slice();
    expect(stampBatch(batch, { partitionId: 2n, baseOffset: 40n, baseTimestamp: 1_700_000_000_000_100n }).ok).toBe(true);
    const polled = pollMessagesCommand.encodeResponse({ partitionId: 2, currentOffset: 42n, messagesCount: 3, batches: batch });
    const decoded = await sdkDecode('message/poll-messages.command.ts', 'POLL_MESSAGES', polled) as { partitionId: number; currentOffset: bigint; count: number; messages: { headers: { offset: bigint; id: bigint }; payload: Buffer }[] };
    expect({ partitionId: decoded.partitionId, currentOffset: decoded.currentOffset, count: decoded.count }).toEqual({ partitionId: 2, currentOffset: 42n, count: 3 });
    expect(decoded.messages.map((m) => [m.headers.offset, m.payload.toString()])).toEqual([[40n, 'm0'], [41n, 'm1'], [42n, 'm2']]);
    const offset = getConsumerOffsetCommand.encodeResponse({ partitionId: 2, currentOffset: 42n, storedOffset: 41n });
    expect(await sdkDecode('offset/get-offset.command.ts', 'GET_OFFSET', offset)).toEqual({ partitionId: 2, currentOffset: 42n, storedOffset: 41n });
    expect(await sdkDecode('offset/get-offset.command.ts', 'GET_OFFSET', new Uint8Array(0))).toBeNull();
    void micros;
  });
});

describe("Shoal's reply frames through the SDK's decodeResponse", () => {
  const ctx: ReplyContext = { cluster: 7n, replica: 0, view: () => 3, commit: () => 12n };
  const request = (operation: number, code = 0): RequestHeaderView => new RequestHeaderView(encodeRequestFrame({
    client: 99n, session: 5n, request: 4n, operation, ...(operation === Operation.NonReplicated ? { nonReplicatedCode: code } : {}),
  }, new Uint8Array(0)));

  it('a read, a pre-commit denial, a login reply', async () => {
    const reply = await wire('vsr/reply.ts');
    const decodeResponse = reply['decodeResponse'] as (frame: Buffer, code?: number) => Buffer;
    const payload = Uint8Array.of(1, 2, 3);
    expect([...decodeResponse(Buffer.from(payloadReply(ctx, request(Operation.NonReplicated, CommandCode.GetStreams), payload)))]).toEqual([1, 2, 3]);
    expect(() => decodeResponse(Buffer.from(statusReply(ctx, request(Operation.CreateStream), 1012)))).toThrow();
    const login = loginReply(ctx, request(Operation.Register), 0, 17n);
    const body = decodeResponse(Buffer.from(login));
    expect(body.readUInt32LE(0)).toBe(0);
    expect(body.readBigUInt64LE(4)).toBe(17n);
  });

  it('every eviction reason maps to the code Shoal says it does, an inverted protocol window included', async () => {
    const reply = await wire('vsr/reply.ts');
    const decodeResponse = reply['decodeResponse'] as (frame: Buffer) => Buffer;
    const codeOf = (frame: Uint8Array): number => {
      try {
        decodeResponse(Buffer.from(frame));
      } catch (error) {
        return (error as { errorCode?: number }).errorCode ?? -1;
      }
      return 0;
    };
    for (const reason of (Object.values(EvictionReason) as unknown[]).filter((r): r is number => typeof r === 'number' && r !== 0 && r !== EvictionReason.IncompatibleProtocol)) {
      expect(codeOf(eviction(ctx, 99n, reason as EvictionReason)), `reason ${reason}`).toBe(evictionErrorCode(reason as EvictionReason, 0, 0));
    }
    const window = incompatibleProtocolEviction(ctx, 99n);
    const view = new DataView(window.buffer, window.byteOffset);
    expect(codeOf(window)).toBe(evictionErrorCode(EvictionReason.IncompatibleProtocol, view.getUint32(144, true), view.getUint32(148, true)));
    const inverted = window.slice();
    new DataView(inverted.buffer).setUint32(148, view.getUint32(144, true) + 1, true);
    expect(codeOf(inverted)).toBe(evictionErrorCode(EvictionReason.IncompatibleProtocol, view.getUint32(144, true), view.getUint32(144, true) + 1));
  });
});

const STATS = {
  processId: 4242, cpuUsage: 12.5, totalCpuUsage: 20, memoryUsage: 1n << 28n, totalMemory: 1n << 34n, availableMemory: 1n << 33n,
  runTime: 5_000_000n, startTime: 1_700_000_000_000_000n, readBytes: 1000n, writtenBytes: 2000n, clientsCount: 1,
  hostname: 'shoal-host', osName: 'Linux', osVersion: '6.1', kernelVersion: '#1 SMP', iggyServerVersion: '0.11.0', iggyServerSemver: 11000,
  cacheMetrics: [], threadsCount: 4, freeDiskSpace: 1n << 30n, totalDiskSpace: 1n << 31n,
};
const THREE_NODES = {
  name: 'shoal-compat',
  nodes: [0, 1, 2].map((i) => ({ name: `node-${i}`, ip: '127.0.0.1', tcpPort: 8091 + i, quicPort: 0, httpPort: 3001 + i, websocketPort: 0, role: i === 1 ? 0 : 1, status: i === 2 ? 3 : 0 })),
};
const CLUSTER = {
  name: 'single-node',
  nodes: [{ name: 'iggy-node', ip: '127.0.0.1', tcpPort: 8090, quicPort: 0, httpPort: 3000, websocketPort: 0, role: 0, status: 0 }],
};
