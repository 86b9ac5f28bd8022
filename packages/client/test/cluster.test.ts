import { CommandCode, ErrorCode } from '@shoal/protocol';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ClusterNodeRole, ShoalClient, ShoalResponseError, ShoalRetryExhaustedError } from '../src/index.js';
import { FakeServer, type Interceptor } from './support/fake-server.js';

/**
 * Leader redirection against two in-test servers whose cluster metadata points at each other.
 * `leader` says which node both report as Leader (null: leaderless, a view change in progress);
 * a node that is not the leader answers metadata writes with 58 TransientNotAccepted, as a
 * backup does.
 */
let a: FakeServer;
let b: FakeServer;
let leader: 'a' | 'b' | null;
let client: ShoalClient | null;

const role = (which: 'a' | 'b'): number => (leader === which ? ClusterNodeRole.Leader : ClusterNodeRole.Follower);

const METADATA_WRITES = new Set<number>([CommandCode.CreateStream, CommandCode.DeleteStream, CommandCode.CreateTopic]);

function backupRejects(which: 'a' | 'b'): Interceptor {
  return (r) => (METADATA_WRITES.has(r.code) && leader !== which ? { kind: 'reject', code: ErrorCode.TransientNotAccepted, via: 'result' } : null);
}

beforeEach(async () => {
  a = await FakeServer.start({ name: 'node-a' });
  b = await FakeServer.start({ name: 'node-b' });
  leader = 'b';
  for (const [server, which] of [[a, 'a'], [b, 'b']] as const) {
    server.metadata = () => ({ name: 'pair', nodes: [a.node(role('a')), b.node(role('b'))] });
    server.intercept = backupRejects(which);
    server.addStream('app', [['events', 2]]);
  }
  client = null;
});

afterEach(async () => {
  await client?.close();
  await a.close();
  await b.close();
});

function connect(options: ConstructorParameters<typeof ShoalClient>[0] = {}): ShoalClient {
  client = new ShoalClient({
    address: a.address, credentials: { username: 'iggy', password: 'iggy' }, heartbeatIntervalMs: 0,
    cluster: { metadataPollIntervalMs: 20, nodeDownMs: 50, retry: { backoffBaseMs: 1, backoffMaxMs: 10, budgetMs: 3000 } },
    ...options,
  });
  return client;
}

const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

describe('leader redirection', () => {
  it('reads stay on the connected node; metadata writes go to the metadata primary', async () => {
    const c = connect();
    expect((await c.stream.list()).map((s) => s.name)).toEqual(['app']);
    await c.stream.create({ name: 'orders' });
    expect(b.requestsOf(CommandCode.CreateStream)).toHaveLength(1);
    expect(a.requestsOf(CommandCode.CreateStream)).toHaveLength(0);
    expect(a.requestsOf(CommandCode.GetStreams)).toHaveLength(1);
    expect(b.requestsOf(CommandCode.GetStreams)).toHaveLength(0);
    expect(c.router.view?.leader?.name).toBe('node-b');
    const view = await c.getClusterMetadata();
    expect(view.nodes.map((n) => [n.name, n.role, n.status])).toEqual([['node-a', 'follower', 'healthy'], ['node-b', 'leader', 'healthy']]);
  });

  it('follows a view change: 58 from the old primary, fresh metadata, the write lands on the new one', async () => {
    const c = connect();
    await c.stream.create({ name: 'one' });
    leader = 'a';
    await c.stream.create({ name: 'two' });
    expect(b.requestsOf(CommandCode.CreateStream).map((r) => r.code)).toHaveLength(2);
    expect(a.streams.size).toBe(2);
    expect([...a.streams.values()].map((s) => s.name)).toEqual(['app', 'two']);
    expect(c.router.view?.leader?.name).toBe('node-a');
  });

  it('polls the metadata while the cluster is leaderless, then writes to the leader that appears', async () => {
    const c = connect();
    await c.ping();
    leader = null;
    setTimeout(() => {
      leader = 'a';
    }, 150);
    const started = Date.now();
    await c.stream.create({ name: 'after-election' });
    expect(Date.now() - started).toBeGreaterThanOrEqual(120);
    expect([...a.streams.values()].map((s) => s.name)).toContain('after-election');
    expect(a.requestsOf(CommandCode.GetClusterMetadata).length + b.requestsOf(CommandCode.GetClusterMetadata).length).toBeGreaterThan(3);
  });

  it('gives up after the budget when no leader appears', async () => {
    const c = connect({ cluster: { metadataPollIntervalMs: 20, retry: { budgetMs: 200 } } });
    leader = null;
    const error = await c.stream.create({ name: 'never' }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ShoalRetryExhaustedError);
    expect(error).toMatchObject({ reason: 'leaderless', retriable: true });
  });

  it('caps redirects at three when the roster flaps', async () => {
    const c = connect();
    // Every metadata answer names the other node as leader, and both refuse writes.
    let flips = 0;
    const flapping = (): ReturnType<NonNullable<typeof a.metadata>> => {
      const aLeads = flips++ % 2 === 1;
      return { name: 'pair', nodes: [a.node(aLeads ? ClusterNodeRole.Leader : ClusterNodeRole.Follower), b.node(aLeads ? ClusterNodeRole.Follower : ClusterNodeRole.Leader)] };
    };
    a.metadata = flapping;
    b.metadata = flapping;
    a.intercept = (r) => (METADATA_WRITES.has(r.code) ? { kind: 'reject', code: ErrorCode.TransientNotAccepted, via: 'result' } : null);
    b.intercept = a.intercept;
    const error = await c.stream.create({ name: 'bounce' }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ShoalRetryExhaustedError);
    expect(error).toMatchObject({ reason: 'redirects', redirects: 3, code: ErrorCode.TransientNotAccepted });
    expect(a.requestsOf(CommandCode.CreateStream).length + b.requestsOf(CommandCode.CreateStream).length).toBe(4);
  });

  it('the primary dies mid-write: the write is retried on the new primary', async () => {
    const c = connect();
    await c.stream.create({ name: 'before' });
    b.intercept = (r) => {
      if (r.code !== CommandCode.CreateStream) return null;
      leader = 'a';
      setTimeout(() => void b.close(), 0);
      return { kind: 'close' };
    };
    await c.stream.create({ name: 'during' });
    expect([...a.streams.values()].map((s) => s.name)).toContain('during');
  });

  it('a node that went away costs one dial, not the connection\'s reconnect retries: the router moves on', async () => {
    // The nemesis's 3-5 s write gaps after a kill -9: each pooled connection re-dialed its dead
    // node 4 times, 1 s apart, before the router could try the node that leads now.
    const c = connect({ reconnect: { maxRetries: 3, intervalMs: 1000 } });
    const reconnecting: string[] = [];
    c.on('reconnecting', (e) => {
      if (e.type === 'reconnecting') reconnecting.push(e.node);
    });
    await c.stream.create({ name: 'before' });
    expect(b.requestsOf(CommandCode.CreateStream)).toHaveLength(1);
    let lost = false;
    c.on('disconnected', (e) => {
      if (e.type === 'disconnected' && e.node === b.address) lost = true;
    });
    leader = 'a';
    await b.close();
    // The connection knows its node is gone before the next write needs it.
    while (!lost) await sleep(5);
    await c.stream.create({ name: 'after' });
    expect([...a.streams.values()].map((s) => s.name)).toContain('after');
    expect(reconnecting).toEqual([]);
  });

  it('partition writes learn the partition primary from 58s and stick to it', async () => {
    const c = connect();
    // node-b leads the metadata group, but node-a is the primary of partition 1.
    b.intercept = (r) => (r.code === CommandCode.SendMessages ? { kind: 'reject', code: ErrorCode.TransientNotAccepted } : backupRejects('b')(r, b));
    const producer = c.producer({ streamId: 0, topicId: 0, partitioning: { partitionId: 1 }, lingerMs: 0, maxInFlight: 1 });
    for (let i = 0; i < 3; i++) await producer.send({ payload: `m${i}` });
    expect(b.requestsOf(CommandCode.SendMessages)).toHaveLength(1);
    expect(a.requestsOf(CommandCode.SendMessages)).toHaveLength(3);
    expect(a.messageCount(0, 0, 1)).toBe(3n);
  });

  it('an uncertain partition write handed back still drops the learned primary that failed it', async () => {
    const c = connect({ cluster: { metadataPollIntervalMs: 20, nodeDownMs: 50, retry: { backoffBaseMs: 1, backoffMaxMs: 10, budgetMs: 3000, retryUncertainWrites: false } } });
    const send = (payload: string): Promise<unknown> => c.sendMessages({ streamId: 0, topicId: 0, partitioning: { partitionId: 1 }, messages: [{ payload }] });
    // node-a leads partition 1 (node-b answers 58), and the client learns it.
    b.intercept = (r) => (r.code === CommandCode.SendMessages ? { kind: 'reject', code: ErrorCode.TransientNotAccepted } : backupRejects('b')(r, b));
    await send('first');
    expect(a.requestsOf(CommandCode.SendMessages)).toHaveLength(1);
    // Leadership of partition 1 moves to node-b; node-a drops the connection after reading the
    // write (an unknown outcome: handed back, not retried) and answers 58 from then on.
    let dropped = false;
    a.intercept = (r) => {
      if (r.code !== CommandCode.SendMessages) return backupRejects('a')(r, a);
      if (!dropped) {
        dropped = true;
        return { kind: 'close' };
      }
      return { kind: 'reject', code: ErrorCode.TransientNotAccepted };
    };
    b.intercept = backupRejects('b');
    await expect(send('uncertain')).rejects.toThrow();
    const before = a.requestsOf(CommandCode.SendMessages).length;
    await send('after');
    // The next write does not start at the learned target that just failed.
    expect(a.requestsOf(CommandCode.SendMessages)).toHaveLength(before);
    expect(b.messageCount(0, 0, 1)).toBe(1n);
  });

  it('a definitive error is never retried or redirected', async () => {
    const c = connect();
    await c.stream.create({ name: 'dup' });
    const error = await c.stream.create({ name: 'dup' }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ShoalResponseError);
    expect(b.requestsOf(CommandCode.CreateStream)).toHaveLength(2);
    expect(a.requestsOf(CommandCode.CreateStream)).toHaveLength(0);
  });

  it('read-your-writes: "not found" from a lagging node just after a create elsewhere is retried', async () => {
    const c = connect();
    await c.stream.create({ name: 'orders' }); // acknowledged by node-b, the metadata primary
    // node-a (where reads go) applies the create a moment later, as a backup's metadata copy does.
    // It has applied it by the third time it is asked.
    let polls = 0;
    const aRejects = a.intercept;
    a.intercept = (r, server) => {
      if (r.code === CommandCode.PollMessages && ++polls === 3) a.addStream('orders', [['events', 1]]);
      return aRejects === null ? null : aRejects(r, server);
    };
    const poll = { streamId: 'orders', topicId: 'events', partitionId: 0, consumer: 1, strategy: { offset: 0n }, count: 10 } as const;
    const got = await c.pollMessages(poll);
    expect(got.messages).toHaveLength(0);
    expect(a.requestsOf(CommandCode.PollMessages)).toHaveLength(3);
    // Without a recent write elsewhere, "not found" is an answer: asked once, never retried.
    const lone = connect({ cluster: { readYourWritesMs: 0, retry: { backoffBaseMs: 1, backoffMaxMs: 10, budgetMs: 3000 } } });
    const before = a.requestsOf(CommandCode.PollMessages).length;
    await lone.stream.create({ name: 'elsewhere' });
    const error = await lone.pollMessages({ ...poll, streamId: 'elsewhere' }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ShoalResponseError);
    expect(error).toMatchObject({ code: ErrorCode.StreamNameNotFound });
    expect(a.requestsOf(CommandCode.PollMessages).length - before).toBe(1);
    await lone.close();
  });

  it('a partition primary that lets a write time out (paused) is skipped: another node takes the write and answers the metadata', async () => {
    // node-a, the home node, leads the metadata and partition 1, and is then paused (SIGSTOP):
    // sockets open, nothing answered. node-b has not noticed yet (its metadata still names node-a)
    // but takes partition writes (a Shoal node forwards them to the primary's successor).
    leader = 'a';
    const c = connect({ requestTimeoutMs: 500 });
    const send = (payload: string): Promise<unknown> => c.sendMessages({ streamId: 0, topicId: 0, partitioning: { partitionId: 1 }, messages: [{ payload }] });
    await send('before');
    expect(a.messageCount(0, 0, 1)).toBe(1n);
    const metadataAsked = a.requestsOf(CommandCode.GetClusterMetadata).length;
    a.intercept = () => ({ kind: 'drop' });
    await send('paused');
    await send('still paused');
    expect(b.messageCount(0, 0, 1)).toBe(2n);
    // One write timed out at node-a; nothing after it went there, metadata included.
    expect(a.requestsOf(CommandCode.SendMessages)).toHaveLength(2);
    expect(a.requestsOf(CommandCode.GetClusterMetadata)).toHaveLength(metadataAsked);
  });

  it('a metadata leader that let one write time out still takes the next while the others name it', async () => {
    const c = connect({ requestTimeoutMs: 500 });
    await c.stream.create({ name: 'before' });
    // node-b, the metadata leader, loses one CreateStream (slow once), then is healthy again.
    let dropped = 0;
    b.intercept = (r) => (r.code === CommandCode.CreateStream && dropped++ === 0 ? { kind: 'drop' } : backupRejects('b')(r, b));
    await c.stream.create({ name: 'during' });
    expect([...b.streams.values()].map((s) => s.name)).toContain('during');
    expect(b.requestsOf(CommandCode.CreateStream)).toHaveLength(3);
  });

  it('when every node is suspect, metadata is asked of each in turn, not of the first only', async () => {
    leader = 'a';
    const c = connect({ requestTimeoutMs: 500 });
    const send = (payload: string): Promise<unknown> => c.sendMessages({ streamId: 0, topicId: 0, partitioning: { partitionId: 1 }, messages: [{ payload }] });
    await send('before');
    // node-a (home, leader) pauses for good; node-b is slow once, then healthy and the leader.
    a.intercept = () => ({ kind: 'drop' });
    let slow = true;
    b.intercept = (r) => {
      if (slow && r.code === CommandCode.SendMessages) {
        slow = false;
        return { kind: 'drop' };
      }
      return null;
    };
    await expect(send('paused')).rejects.toThrow(); // a times out; b (asked next) drops it too
    leader = 'b';
    await send('recovered');
    expect(b.messageCount(0, 0, 1)).toBe(1n);
  });

  it('a server without cluster metadata: everything goes to the connected node', async () => {
    a.metadata = null;
    a.intercept = (r) => (r.code === CommandCode.GetClusterMetadata ? { kind: 'reject', code: ErrorCode.FeatureUnavailable } : null);
    const c = connect();
    await c.stream.create({ name: 'local' });
    expect(c.router.leaderAware).toBe(false);
    expect(a.requestsOf(CommandCode.CreateStream)).toHaveLength(1);
    await sleep(1);
    expect(b.requestsOf(CommandCode.CreateStream)).toHaveLength(0);
  });
});
