import { ErrorCode, EvictionReason } from '@shoal/protocol';
import { fromHex, toHex } from '@shoal/stdx';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import {
  type Message, type Scheduler, ShoalClient, ShoalEvictionError, ShoalInvalidArgumentError, ShoalResponseError, nodeScheduler,
  parseConnectionString,
} from '../src/index.js';
import { FakeServer } from './support/fake-server.js';
import { loadClientFrames, requestVector } from './support/vectors.js';

const frames = loadClientFrames();
const CLIENT_ID = BigInt(String(requestVector(frames, 'ping_before_login').inputs['client_id']));
const zeroClock: Scheduler = { ...nodeScheduler, nowMicros: () => 0n };

let server: FakeServer;
let client: ShoalClient | null = null;

beforeEach(async () => {
  server = await FakeServer.start();
});

afterEach(async () => {
  await client?.close();
  client = null;
  await server.close();
});

function connect(extra: ConstructorParameters<typeof ShoalClient>[0] = {}): ShoalClient {
  client = new ShoalClient({ address: server.address, credentials: { username: 'iggy', password: 'iggy' }, heartbeatIntervalMs: 0, ...extra });
  return client;
}

describe('the whole stack reproduces the official SDK frames on the wire', () => {
  it('sends the ten vector requests byte for byte over a real socket', async () => {
    server.forceEpoch = 7n;
    server.addStream('s0');
    server.addStream('s1', [['t0', 3]]);
    client = new ShoalClient({
      address: server.address,
      heartbeatIntervalMs: 0,
      random: { u128: () => CLIENT_ID, float: () => 0.5 },
      scheduler: zeroClock,
      versionInfo: { protocolVersion: 11264, sdkName: 'node-sdk', sdkVersion: '0.10.0-edge.4' },
      cluster: { leaderAware: false },
    });
    const inputs = requestVector(frames, 'send_messages').inputs as { messages: { id: string; payload_hex: string; origin_timestamp: string; headers: { key: string; kind: string; value: unknown }[] }[] };
    const messages: Message[] = inputs.messages.map((m) => ({
      id: BigInt(m.id), payload: fromHex(m.payload_hex), originTimestamp: BigInt(m.origin_timestamp),
      headers: Object.fromEntries(m.headers.map((h) => [h.key, h.kind === 'string' ? String(h.value) : h.kind === 'bool' ? Boolean(h.value) : { kind: 'uint32' as const, value: Number(h.value) }])),
    }));

    await client.ping();
    const login = await client.login('iggy', 'iggy');
    expect(login.session).toBe(7n);
    await client.ping();
    await client.stream.create({ name: 'test-stream' });
    await client.topic.create({ streamId: 1, name: 'test-topic', partitionsCount: 3 });
    const sent = await client.sendMessages({ streamId: 1, topicId: 1, partitioning: { partitionId: 1 }, messages });
    expect(sent.confirmations[0]?.baseOffset).toBe(0n);
    const polled = await client.pollMessages({ consumer: 1, streamId: 1, topicId: 1, partitionId: 1, strategy: { offset: 0 }, count: 10 });
    expect(polled.messages.map((m) => m.id)).toEqual([1001n, 1002n, 1003n]);
    expect(polled.messages[2]?.headers['n']).toEqual({ kind: 'uint32', value: 42 });
    await client.offset.store({ consumer: 1, streamId: 1, topicId: 1, partitionId: 1, offset: 2 });
    await client.stream.list();
    await client.logout();

    expect(server.requests.map((r) => toHex(r.frame))).toEqual(frames.requests.map((r) => r.hex));
  });
});

describe('typed commands', () => {
  it('streams, topics, partitions, groups, users, tokens, offsets, system', async () => {
    const c = connect();
    expect((await c.getClusterMetadata()).leader?.name).toBe('node-0');
    const stream = await c.stream.create({ name: 'orders' });
    expect(stream).toMatchObject({ id: 0, name: 'orders', topicsCount: 0 });
    await c.stream.update({ streamId: 'orders', name: 'orders2' });
    expect((await c.stream.list()).map((s) => s.name)).toEqual(['orders2']);
    expect(await c.stream.get({ streamId: 42 })).toBeNull();

    const topic = await c.topic.create({ streamId: 0, name: 'created', partitionsCount: 2, messageExpiry: 60_000_000n, options: { segment_size: '128MiB', enforce_fsync: true } });
    expect(topic.partitions).toHaveLength(2);
    const stored = server.streams.get(0)?.topics.get(0)?.options.map((o) => o.key);
    expect(stored).toEqual(['message_expiry', 'segment_size', 'enforce_fsync']);
    await c.partition.create({ streamId: 0, topicId: 'created', partitionsCount: 1 });
    expect((await c.topic.get({ streamId: 0, topicId: 0 }))?.partitionsCount).toBe(3);
    await c.partition.delete({ streamId: 0, topicId: 0, partitionsCount: 1 });
    expect((await c.topic.list({ streamId: 0 }))[0]?.partitionsCount).toBe(2);

    const group = await c.group.create({ streamId: 0, topicId: 0, name: 'billing' });
    await c.group.join({ streamId: 0, topicId: 0, groupId: group.id });
    expect(await c.group.sync({ streamId: 0, topicId: 0, groupId: 'billing' })).toEqual({ generation: 1n, partitions: [0, 1] });
    expect((await c.group.list({ streamId: 0, topicId: 0 }))[0]?.membersCount).toBe(1);
    await c.group.leave({ streamId: 0, topicId: 0, groupId: 0 });
    await c.group.delete({ streamId: 0, topicId: 0, groupId: 0 });

    const user = await c.user.create({ username: 'reader', password: 'secret', status: 'inactive' });
    expect(user.status).toBe(2);
    await c.user.update({ userId: 'reader', status: 'active' });
    await c.user.changePassword({ userId: user.id, currentPassword: 'secret', newPassword: 'better' });
    expect((await c.user.list()).map((u) => u.username)).toEqual(['iggy', 'reader']);
    await c.user.delete({ userId: 'reader' });

    const token = await c.token.create({ name: 'ci' });
    expect((await c.token.list()).map((t) => t.name)).toEqual(['ci']);
    await c.token.delete({ name: 'ci' });

    expect(await c.offset.get({ consumer: 7, streamId: 0, topicId: 0, partitionId: 0 })).toBeNull();
    await c.offset.store({ consumer: 7, streamId: 0, topicId: 0, partitionId: 0, offset: 5 });
    expect((await c.offset.get({ consumer: 7, streamId: 0, topicId: 0, partitionId: 0 }))?.storedOffset).toBe(5n);
    await c.offset.delete({ consumer: 7, streamId: 0, topicId: 0, partitionId: 0 });

    expect((await c.getStats()).processId).toBe(42);
    expect((await c.getMe()).userId).toBe(0);
    expect((await c.getClients()).length).toBeGreaterThanOrEqual(1);
    expect((await c.describeOptions('topic')).map((o) => o.key)).toContain('segment_size');
    await c.topic.purge({ streamId: 0, topicId: 0 });
    await c.topic.delete({ streamId: 0, topicId: 0 });
    await c.stream.purge({ streamId: 0 });
    await c.stream.delete({ streamId: 0 });
    expect(await c.stream.list()).toEqual([]);
    expect(token.length).toBeGreaterThan(0);
  });

  it('a personal access token logs in with LOGIN_REGISTER_WITH_PAT', async () => {
    const token = await connect().token.create({ name: 'pat' });
    const other = new ShoalClient({ url: `iggy://${token}@${server.address}`, heartbeatIntervalMs: 0 });
    try {
      await other.ping();
      expect(server.requestsOf(45)).toHaveLength(1);
      expect((await other.getMe()).userId).toBe(0);
    } finally {
      await other.close();
    }
  });

  it('numbers metadata requests strictly upward and echoes the session', async () => {
    const c = connect();
    await c.stream.create({ name: 'a' });
    await c.ping();
    await c.stream.create({ name: 'b' });
    await c.stream.list();
    await c.stream.delete({ streamId: 'a' });
    const sent = server.requests.filter((r) => r.code !== 40).map((r) => [r.code, r.header.request]);
    // GetClusterMetadata (non-replicated, request 1) is fetched before the first write.
    expect(sent).toEqual([[12, 1n], [202, 1n], [1, 2n], [202, 2n], [201, 3n], [203, 3n]]);
    const sessions = new Set(server.requests.filter((r) => r.code !== 40).map((r) => r.header.session));
    expect(sessions.size).toBe(1);
  });
});

describe('errors', () => {
  it('a committed rejection is a ShoalResponseError with the wire code, never retried', async () => {
    const c = connect();
    await c.stream.create({ name: 'dup' });
    const error = await c.stream.create({ name: 'dup' }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ShoalResponseError);
    expect(error).toMatchObject({ code: ErrorCode.StreamNameAlreadyExists, retriable: false, source: 'result_section', codeName: 'StreamNameAlreadyExists' });
    expect(server.requestsOf(202)).toHaveLength(2);
  });

  it('bad credentials: the eviction fails the login, not retriable', async () => {
    client = new ShoalClient({ address: server.address, credentials: { username: 'iggy', password: 'nope' }, heartbeatIntervalMs: 0 });
    const error = await client.ping().catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ShoalEvictionError);
    expect(error).toMatchObject({ code: ErrorCode.InvalidCredentials, reason: EvictionReason.InvalidCredentials, retriable: false });
  });

  it('a stale-client eviction re-registers with a fresh client id and retries', async () => {
    const c = connect();
    await c.ping();
    let evicted = false;
    server.intercept = (r) => (r.code === 201 && !evicted ? ((evicted = true), { kind: 'evict', reason: EvictionReason.StaleClient }) : null);
    expect(await c.stream.list()).toEqual([]);
    const logins = server.requestsOf(40);
    expect(logins).toHaveLength(2);
    expect(logins[0]?.header.client).not.toBe(logins[1]?.header.client);
  });

  it('input errors are thrown before anything is sent', async () => {
    const c = connect();
    await expect(c.stream.get({ streamId: -1 })).rejects.toBeInstanceOf(ShoalInvalidArgumentError);
    await expect(c.stream.get({ streamId: '' })).rejects.toBeInstanceOf(ShoalInvalidArgumentError);
    expect(server.requests).toHaveLength(0);
  });
});

describe('connection strings', () => {
  it('parses credentials, tokens and options', () => {
    expect(parseConnectionString('iggy://user:p%40ss@localhost:8090?heartbeat_interval=3s&reconnection_retries=5&nodelay=true')).toEqual({
      address: { host: 'localhost', port: 8090 },
      credentials: { kind: 'password', username: 'user', password: 'p@ss' },
      options: { heartbeatIntervalMs: 3000, reconnectionRetries: 5, noDelay: true },
    });
    expect(parseConnectionString('iggy+tcp://abcDEF123==@10.0.0.1:9000').credentials).toEqual({ kind: 'token', token: 'abcDEF123==' });
    expect(parseConnectionString('iggy://u:p@h:1?reconnection_retries=unlimited&reconnection_interval=1m30s').options)
      .toEqual({ reconnectionRetries: Number.POSITIVE_INFINITY, reconnectionIntervalMs: 90_000 });
  });

  it('reads tls, tls_domain and tls_ca_file; the TLS keys without tls=true are refused', () => {
    expect(parseConnectionString('iggy://u:p@h:1?tls=true&tls_domain=example.com&tls_ca_file=%2Fetc%2Fca.pem').options)
      .toEqual({ tls: true, tlsDomain: 'example.com', tlsCaFile: '/etc/ca.pem' });
    expect(parseConnectionString('iggy://u:p@h:1?tls=false').options).toEqual({ tls: false });
    for (const bad of ['iggy://u:p@h:1?tls_domain=x', 'iggy://u:p@h:1?tls=false&tls_ca_file=/x', 'iggy://u:p@h:1?tls=yes', 'iggy://u:p@h:1?tls=true&tls_domain=']) {
      expect(() => parseConnectionString(bad), bad).toThrow(ShoalInvalidArgumentError);
    }
    expect(() => new ShoalClient({ url: 'iggy://u:p@h:1?tls=true&tls_ca_file=/nonexistent/ca.pem' })).toThrow(/tls_ca_file/);
  });

  it('refuses unknown keys, other transports, missing ports', () => {
    for (const bad of ['iggy://u:p@h:1?bogus=1', 'iggy+quic://u:p@h:8080', 'iggy://u:p@h', 'http://h:1', 'iggy://:p@h:1', 'iggy://u:p@h:1?heartbeat_interval=5']) {
      expect(() => parseConnectionString(bad), bad).toThrow(ShoalInvalidArgumentError);
    }
    expect(() => parseConnectionString('iggy://u:p@h:1?bogus=1')).toThrow(/unknown option 'bogus'/);
  });

  it('durations use the shared parser of @shoal/stdx (the config and the CLI read the same syntax)', () => {
    const { options } = parseConnectionString('iggy://u:p@h:1?heartbeat_interval=1m30s&reconnection_interval=250ms&reestablish_after=1%20day');
    expect(options).toEqual({ heartbeatIntervalMs: 90_000, reconnectionIntervalMs: 250, reestablishAfterMs: 86_400_000 });
    expect(() => parseConnectionString('iggy://u:p@h:1?heartbeat_interval=1.5s')).toThrow(/not a duration/);
  });

  it('the client uses the connection string', async () => {
    client = ShoalClient.fromConnectionString(server.url(), { heartbeatIntervalMs: 0 });
    await client.ping();
    expect(server.requestsOf(40)).toHaveLength(1);
  });
});
