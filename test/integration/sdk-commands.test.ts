/**
 * Every command of commands.mdx through the SDK (packages/client) against the compiled server, on
 * a real process with two shard workers: reads answered from a shard's metadata copy, writes
 * committed through the metadata and partition cores, replies routed back across threads.
 * (The legacy logins 38 / 44 have no SDK method: golden-frames.test.ts sends them raw.)
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ShoalClient, ShoalEvictionError, ShoalResponseError } from '@shoal/client';
import { CommandCode, ErrorCode, type Permissions } from '@shoal/protocol';
import { removeDataDir, startServer, metricSum, type ServerHandle } from './support/server.js';

const decode = (bytes: Uint8Array): string => new TextDecoder().decode(bytes);
const NO_GLOBAL = {
  manageServers: false, readServers: false, manageUsers: false, readUsers: false, manageStreams: false,
  readStreams: true, manageTopics: false, readTopics: true, pollMessages: true, sendMessages: true,
} as const;

async function expectCode(promise: Promise<unknown>, code: number): Promise<void> {
  const error = await promise.then(() => null, (e: unknown) => e);
  expect(error, `expected error code ${code}`).toBeInstanceOf(ShoalResponseError);
  expect((error as ShoalResponseError).code).toBe(code);
}

describe('every command through the SDK', () => {
  let server: ServerHandle;
  let root: ShoalClient;
  const clients: ShoalClient[] = [];

  const connect = (credentials: ConstructorParameters<typeof ShoalClient>[0] = {}): ShoalClient => {
    const client = new ShoalClient({ address: server.address, heartbeatIntervalMs: 0, ...credentials });
    clients.push(client);
    return client;
  };

  beforeAll(async () => {
    server = await startServer({ shards: 2 });
    root = connect({ credentials: { username: 'iggy', password: 'iggy' } });
  });

  afterAll(async () => {
    for (const client of clients) await client.destroy();
    const exit = await server?.stop('SIGTERM');
    expect(exit?.code).toBe(0);
    if (server !== undefined) removeDataDir(server.dataDir);
  });

  it('system: ping (1), stats (10), snapshot (11), cluster metadata (12), options (13), me (20), client (21), clients (22)', async () => {
    await root.ping();
    const me = await root.getMe();
    expect(me.userId).toBe(0);
    const clientsList = await root.getClients();
    expect(clientsList.some((c) => c.clientId === me.clientId)).toBe(true);
    expect((await root.getClient(me.clientId))?.address).toBe(me.address);
    expect(await root.getClient(0xfff_fff0)).toBeNull();
    const cluster = await root.getClusterMetadata();
    expect(cluster.leader?.address.port).toBe(server.tcp.port);
    expect((await root.describeOptions('topic')).map((o) => o.key)).toContain('segment_size');
    expect(await root.describeOptions('stream')).toEqual([]);
    const stats = await root.getStats();
    expect(stats.processId).toBe(server.pid);
    expect(stats.clientsCount).toBeGreaterThanOrEqual(1);
    await expectCode(root.getSnapshot(), ErrorCode.FeatureUnavailable);
  });

  it('streams (200-205), topics (300-305), partitions (402, 403)', async () => {
    const stream = await root.stream.create({ name: 'sdk-stream' });
    expect(stream.name).toBe('sdk-stream');
    await expectCode(root.stream.create({ name: 'sdk-stream' }), ErrorCode.StreamNameAlreadyExists);
    expect((await root.stream.get({ streamId: stream.id }))?.name).toBe('sdk-stream');
    expect(await root.stream.get({ streamId: 'missing' })).toBeNull();
    await root.stream.update({ streamId: stream.id, name: 'sdk-renamed' });
    expect((await root.stream.list()).map((s) => s.name)).toContain('sdk-renamed');
    const topic = await root.topic.create({ streamId: 'sdk-renamed', name: 't', partitionsCount: 2, messageExpiry: 3_600_000_000n });
    expect(topic.partitionsCount).toBe(2);
    expect((await root.topic.list({ streamId: stream.id })).map((t) => t.name)).toEqual(['t']);
    await root.topic.update({ streamId: stream.id, topicId: 't', name: 't2', maxTopicSize: 4_000_000_000n });
    expect((await root.topic.get({ streamId: stream.id, topicId: 't2' }))?.maxTopicSize).toBe(4_000_000_000n);
    await root.partition.create({ streamId: stream.id, topicId: 't2', partitionsCount: 3 });
    expect((await root.topic.get({ streamId: stream.id, topicId: 't2' }))?.partitionsCount).toBe(5);
    await root.partition.delete({ streamId: stream.id, topicId: 't2', partitionsCount: 2 });
    expect((await root.topic.get({ streamId: stream.id, topicId: 't2' }))?.partitions.map((p) => p.id)).toEqual([0, 1, 2]);
    await root.topic.delete({ streamId: stream.id, topicId: 't2' });
    expect(await root.topic.get({ streamId: stream.id, topicId: 't2' })).toBeNull();
    await root.stream.delete({ streamId: stream.id });
    expect(await root.stream.get({ streamId: stream.id })).toBeNull();
  });

  it('messages (100-102), offsets (120-122), segments (503), purges (205, 305)', async () => {
    const stream = await root.stream.create({ name: 'msg' });
    await root.topic.create({ streamId: 'msg', name: 'events', partitionsCount: 4 });
    for (let p = 0; p < 4; p++) {
      const sent = await root.message.send({
        streamId: 'msg', topicId: 'events', partitioning: { partitionId: p },
        messages: [{ payload: `p${p}-a`, headers: { n: { kind: 'uint32', value: p } } }, { payload: `p${p}-b` }],
      });
      expect(sent.confirmations?.[0]?.partitionId ?? p).toBe(p);
    }
    await root.message.send({ streamId: 'msg', topicId: 'events', partitioning: { key: 'customer-7' }, messages: [{ payload: 'keyed' }] });
    await root.message.send({ streamId: 'msg', topicId: 'events', messages: [{ payload: 'balanced' }] });
    let total = 0;
    for (let p = 0; p < 4; p++) {
      const polled = await root.message.poll({ streamId: 'msg', topicId: 'events', partitionId: p, consumer: 1, strategy: { offset: 0n }, count: 100 });
      expect(decode((polled.messages[0] as { payload: Uint8Array }).payload)).toBe(`p${p}-a`);
      expect(polled.messages.map((m) => Number(m.offset))).toEqual(polled.messages.map((_, i) => i));
      // The reply's own fields (poll_messages.rs): partition id, current offset, messages count.
      expect({ partitionId: polled.partitionId, messagesCount: polled.messagesCount }).toEqual({ partitionId: p, messagesCount: polled.messages.length });
      expect(polled.currentOffset).toBe(BigInt(polled.messages.length - 1));
      total += polled.messages.length;
    }
    expect(total).toBe(10);
    const last = await root.message.poll({ streamId: 'msg', topicId: 'events', partitionId: 0, consumer: 1, strategy: 'last', count: 1 });
    expect(last.messages.length).toBe(1);
    await root.offset.store({ streamId: 'msg', topicId: 'events', partitionId: 0, consumer: 1, offset: 1n });
    expect((await root.offset.get({ streamId: 'msg', topicId: 'events', partitionId: 0, consumer: 1 }))?.storedOffset).toBe(1n);
    await root.offset.store({ streamId: 'msg', topicId: 'events', partitionId: 1, consumer: 'reader', offset: 0n, ack: 'none' });
    expect((await root.offset.get({ streamId: 'msg', topicId: 'events', partitionId: 1, consumer: 'reader' }))?.storedOffset).toBe(0n);
    const next = await root.message.poll({ streamId: 'msg', topicId: 'events', partitionId: 0, consumer: 1, strategy: 'next', count: 10, autoCommit: true });
    expect(next.messages.map((m) => Number(m.offset))[0]).toBe(2);
    await root.offset.delete({ streamId: 'msg', topicId: 'events', partitionId: 0, consumer: 1 });
    expect(await root.offset.get({ streamId: 'msg', topicId: 'events', partitionId: 0, consumer: 1 })).toBeNull();
    await expectCode(root.message.flush({ streamId: 'msg', topicId: 'events', partitionId: 0 }), ErrorCode.FeatureUnavailable);
    await root.segment.delete({ streamId: 'msg', topicId: 'events', partitionId: 0, segmentsCount: 1 });
    const detail = await root.stream.get({ streamId: 'msg' });
    expect(detail?.messagesCount).toBe(10n);
    await root.topic.purge({ streamId: 'msg', topicId: 'events' });
    const afterPurge = await root.message.poll({ streamId: 'msg', topicId: 'events', partitionId: 0, consumer: 2, strategy: 'first', count: 10 });
    expect(afterPurge.messages.length).toBe(0);
    await root.message.send({ streamId: 'msg', topicId: 'events', partitioning: { partitionId: 0 }, messages: [{ payload: 'again' }] });
    await root.stream.purge({ streamId: 'msg' });
    expect((await root.message.poll({ streamId: 'msg', topicId: 'events', partitionId: 0, consumer: 2, strategy: 'first', count: 10 })).messages).toEqual([]);
    await expectCode(root.message.poll({ streamId: 'msg', topicId: 'nope', partitionId: 0, consumer: 1 }), ErrorCode.TopicIdNotFound);
    await root.stream.delete({ streamId: stream.id });
  });

  it('consumer groups (600-606)', async () => {
    await root.stream.create({ name: 'cg' });
    await root.topic.create({ streamId: 'cg', name: 't', partitionsCount: 3 });
    for (let p = 0; p < 3; p++) {
      await root.message.send({ streamId: 'cg', topicId: 't', partitioning: { partitionId: p }, messages: [{ payload: `m${p}` }] });
    }
    const group = await root.group.create({ streamId: 'cg', topicId: 't', name: 'readers' });
    expect(group.name).toBe('readers');
    expect(group.partitionsCount).toBe(3);
    expect(group.membersCount).toBe(0);
    expect((await root.group.list({ streamId: 'cg', topicId: 't' })).map((g) => g.name)).toEqual(['readers']);
    await root.group.join({ streamId: 'cg', topicId: 't', groupId: 'readers' });
    const assignment = await root.group.sync({ streamId: 'cg', topicId: 't', groupId: 'readers' });
    expect(assignment?.partitions.length).toBe(3);
    expect((await root.group.get({ streamId: 'cg', topicId: 't', groupId: group.id }))?.membersCount).toBe(1);
    const seen: string[] = [];
    for (let i = 0; i < 3; i++) {
      const polled = await root.message.poll({ streamId: 'cg', topicId: 't', consumer: { kind: 'consumer_group', id: 'readers' }, strategy: 'next', count: 10, autoCommit: true });
      for (const m of polled.messages) seen.push(decode(m.payload));
    }
    expect(seen.sort()).toEqual(['m0', 'm1', 'm2']);
    await root.offset.store({ streamId: 'cg', topicId: 't', partitionId: 0, consumer: { kind: 'consumer_group', id: 'readers' }, offset: 0n });
    await root.group.leave({ streamId: 'cg', topicId: 't', groupId: 'readers' });
    expect(await root.group.sync({ streamId: 'cg', topicId: 't', groupId: 'readers' })).toBeNull();
    await root.group.delete({ streamId: 'cg', topicId: 't', groupId: 'readers' });
    expect(await root.group.get({ streamId: 'cg', topicId: 't', groupId: 'readers' })).toBeNull();
  });

  it('users (31-37), tokens (41-43), login with a token (45), logout (39)', async () => {
    const permissions: Permissions = { global: NO_GLOBAL, streams: [] };
    const alice = await root.user.create({ username: 'alice', password: 'secret-1', permissions });
    expect(alice.username).toBe('alice');
    expect((await root.user.get({ userId: 'alice' }))?.id).toBe(alice.id);
    expect((await root.user.list()).map((u) => u.username)).toEqual(['iggy', 'alice']);
    await root.user.update({ userId: 'alice', username: 'alice2' });
    await root.user.updatePermissions({ userId: 'alice2', permissions: { global: { ...NO_GLOBAL, readServers: true }, streams: [] } });
    await root.user.changePassword({ userId: 'alice2', currentPassword: 'secret-1', newPassword: 'secret-2' });

    const asAlice = connect({ credentials: { username: 'alice2', password: 'secret-2' } });
    expect((await asAlice.getMe()).userId).toBe(alice.id);
    await expectCode(asAlice.stream.create({ name: 'not-allowed' }), ErrorCode.Unauthorized);
    const token = await asAlice.token.create({ name: 'ci-token' });
    expect((await asAlice.token.list()).map((t) => t.name)).toEqual(['ci-token']);

    const withToken = connect({ credentials: { token } });
    expect((await withToken.getMe()).userId).toBe(alice.id);
    await withToken.logout();
    await asAlice.token.delete({ name: 'ci-token' });
    expect(await asAlice.token.list()).toEqual([]);

    const badToken = connect({ credentials: { token }, reconnect: { enabled: false } });
    const refused = await badToken.ping().then(() => badToken.getMe()).then(() => null, (e: unknown) => e);
    expect(refused).toBeInstanceOf(ShoalEvictionError);
    expect((refused as ShoalEvictionError).reason).toBe(10);

    const wrongPassword = connect({ credentials: { username: 'alice2', password: 'nope' }, reconnect: { enabled: false } });
    const denied = await wrongPassword.getMe().then(() => null, (e: unknown) => e);
    expect((denied as ShoalEvictionError).reason).toBe(9);

    await root.user.update({ userId: 'alice2', status: 'inactive' });
    const inactive = connect({ credentials: { username: 'alice2', password: 'secret-2' }, reconnect: { enabled: false } });
    const blocked = await inactive.getMe().then(() => null, (e: unknown) => e);
    expect((blocked as ShoalEvictionError).reason).toBe(11);

    await root.user.delete({ userId: 'alice2' });
    expect(await root.user.get({ userId: 'alice2' })).toBeNull();
    await expectCode(root.user.delete({ userId: 0 }), ErrorCode.CannotDeleteUser);
  });

  it('a metadata write is in effect at once on the client\'s other connections, whichever shard took them', async () => {
    // Each new connection lands on either shard; the one that did not answer the write runs the
    // connection's first frame only once its metadata copy holds the write (docs/runtime.md).
    const permissions: Permissions = { global: NO_GLOBAL, streams: [] };
    const accepted = async (): Promise<number[]> => {
      const text = await server.metrics();
      return [0, 1].map((shard) => metricSum(text, 'shoal_connections_accepted_total', { thread: `shard-${shard}` }));
    };
    const before = await accepted();
    for (let i = 0; i < 16; i++) {
      const user = await root.user.create({ username: `fresh-${i}`, password: `pw-${i}`, permissions });
      const stream = await root.stream.create({ name: `fresh-stream-${i}` });
      const logins = [0, 1].map(() => connect({ credentials: { username: `fresh-${i}`, password: `pw-${i}` }, reconnect: { enabled: false } }));
      const reader = connect({ credentials: { username: 'iggy', password: 'iggy' }, reconnect: { enabled: false } });
      const [a, b, found] = await Promise.all([logins[0]?.getMe(), logins[1]?.getMe(), reader.stream.get({ streamId: stream.id })]);
      expect([a?.userId, b?.userId]).toEqual([user.id, user.id]);
      expect(found?.name).toBe(`fresh-stream-${i}`);
      for (const client of [...logins, reader]) await client.destroy();
    }
    const after = await accepted();
    expect((after[0] as number) + (after[1] as number) - (before[0] as number) - (before[1] as number)).toBeGreaterThanOrEqual(48);
    for (let i = 0; i < 16; i++) await root.user.delete({ userId: `fresh-${i}` });
  });

  it('counts every request in the metrics, by command', async () => {
    const text = await server.metrics();
    expect(metricSum(text, 'shoal_requests_total', { command: 'send_messages' })).toBeGreaterThan(0);
    expect(metricSum(text, 'shoal_commits_total', { plane: 'metadata' })).toBeGreaterThan(10);
    expect(text).toContain('shoal_ring_occupancy_bytes{from="metadata",to="shard-0"}');
    expect(text).toContain('shoal_group_view{group="9223372036854775808"');
    void CommandCode;
  });
});
