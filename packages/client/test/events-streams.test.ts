import { pipeline } from 'node:stream/promises';
import { Transform, Writable } from 'node:stream';
import { CommandCode, ErrorCode } from '@shoal/protocol';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { type ClientEvent, ClusterNodeRole, type ReceivedMessage, ShoalClient, ShoalRetryExhaustedError } from '../src/index.js';
import { FakeServer } from './support/fake-server.js';

/**
 * Client events (and the logger hook) for what the client does on its own: reconnects, 57
 * replays, retries, redirects, leader changes, evictions, giving up; and the Node streams over the
 * consumer and the producer, with back-pressure and commits. Real loopback sockets (FakeServer).
 */
let a: FakeServer;
let b: FakeServer;
const clients: ShoalClient[] = [];

beforeEach(async () => {
  a = await FakeServer.start({ name: 'node-a' });
  b = await FakeServer.start({ name: 'node-b' });
  a.addStream('app', [['events', 2]]);
});

afterEach(async () => {
  for (const c of clients.splice(0)) await c.close();
  await a.close();
  await b.close();
});

function connect(options: ConstructorParameters<typeof ShoalClient>[0] = {}): { client: ShoalClient; events: ClientEvent[] } {
  const client = new ShoalClient({
    address: a.address, credentials: { username: 'iggy', password: 'iggy' }, heartbeatIntervalMs: 0,
    reconnect: { intervalMs: 20 }, replayBackoffMs: 1,
    cluster: { metadataPollIntervalMs: 20, nodeDownMs: 50, retry: { backoffBaseMs: 1, backoffMaxMs: 10, budgetMs: 3000 } },
    ...options,
  });
  clients.push(client);
  const events: ClientEvent[] = [];
  client.on('*', (event) => events.push(event));
  return { client, events };
}

const types = (events: readonly ClientEvent[]): string[] => events.map((e) => e.type);

describe('client events', () => {
  it('a lost connection: disconnected, reconnecting, connected (reconnect), and the call succeeds', async () => {
    const { client, events } = connect();
    await client.ping();
    expect(events).toEqual([{ type: 'connected', node: a.address, reconnect: false, attempts: 1 }]);
    a.dropConnections();
    await new Promise((resolve) => setTimeout(resolve, 50));
    await client.ping();
    expect(types(events)).toEqual(['connected', 'disconnected', 'reconnecting', 'connected']);
    expect(events[2]).toMatchObject({ type: 'reconnecting', node: a.address, attempt: 1, attemptsMax: 4 });
    expect(events[3]).toMatchObject({ type: 'connected', reconnect: true, attempts: 1 });
  });

  it('57 replays, then a retry after the replays ran out, then a give-up with its reason', async () => {
    const { client, events } = connect({ replayAttemptsMax: 2, cluster: { retry: { attemptsMax: 2, backoffBaseMs: 1, backoffMaxMs: 2 } } });
    a.intercept = (r) => (r.code === CommandCode.CreateStream ? { kind: 'reject', code: ErrorCode.TransientNotCommitted, via: 'result' } : null);
    const error = await client.stream.create({ name: 'never' }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ShoalRetryExhaustedError);
    const ofCreate = events.filter((e) => 'command' in e && e.command === 'CREATE_STREAM');
    expect(types(ofCreate)).toEqual(['replay', 'replay', 'retry', 'replay', 'replay', 'gave_up']);
    expect(ofCreate[2]).toMatchObject({ type: 'retry', node: a.address, attempt: 1, error: { code: ErrorCode.TransientNotCommitted } });
    expect(ofCreate[5]).toMatchObject({ type: 'gave_up', reason: 'attempts', attempts: 2 });
  });

  it('a write redirected to the new leader, with leader_changed', async () => {
    let leader: 'a' | 'b' = 'a';
    for (const [server, which] of [[a, 'a'], [b, 'b']] as const) {
      server.metadata = () => ({ name: 'pair', nodes: [a.node(leader === 'a' ? ClusterNodeRole.Leader : ClusterNodeRole.Follower), b.node(leader === 'b' ? ClusterNodeRole.Leader : ClusterNodeRole.Follower)] });
      server.intercept = (r) => (r.code === CommandCode.CreateStream && leader !== which ? { kind: 'reject', code: ErrorCode.TransientNotAccepted, via: 'result' } : null);
    }
    const { client, events } = connect();
    await client.stream.create({ name: 'one' });
    leader = 'b';
    await client.stream.create({ name: 'two' });
    const after = events.slice(events.findIndex((e) => e.type === 'retry'));
    expect(types(after).filter((t) => t !== 'connected')).toEqual(['retry', 'leader_changed', 'redirect']);
    expect(after.find((e) => e.type === 'leader_changed')).toEqual({ type: 'leader_changed', from: a.address, to: b.address });
    expect(after.find((e) => e.type === 'redirect')).toEqual({ type: 'redirect', command: 'CREATE_STREAM', from: a.address, to: b.address, redirects: 1 });
  });

  it('an eviction is an event', async () => {
    const { client, events } = connect();
    await client.ping();
    a.intercept = (r) => (r.code === CommandCode.GetStreams ? { kind: 'evict', reason: 3 } : null);
    await client.stream.list().catch(() => undefined);
    expect(types(events)).toContain('evicted');
  });

  it('the logger hook gets every event at its level with a readable line; a throwing listener breaks nothing', async () => {
    const lines: string[] = [];
    const log = (level: string) => (message: string, fields: Readonly<Record<string, unknown>>) => lines.push(`${level} ${message} ${String(fields['type'])}`);
    const { client } = connect({ logger: { debug: log('debug'), info: log('info'), warn: log('warn'), error: log('error') } });
    client.on('disconnected', () => {
      throw new Error('listener bug');
    });
    await client.ping();
    a.dropConnections();
    await new Promise((resolve) => setTimeout(resolve, 50));
    await client.ping();
    expect(lines).toEqual([
      `info shoal: connected to ${a.address} connected`,
      `warn shoal: connection to ${a.address} lost disconnected`,
      'error shoal: an event listener threw undefined',
      `warn shoal: reconnecting to ${a.address} (attempt 1 of 4) reconnecting`,
      `info shoal: reconnected to ${a.address} connected`,
    ]);
  });

  it('unsubscribe stops delivery', async () => {
    const { client } = connect();
    const seen: string[] = [];
    const off = client.on('connected', (e) => seen.push(e.node));
    await client.ping();
    off();
    a.dropConnections();
    await new Promise((resolve) => setTimeout(resolve, 50));
    await client.ping();
    expect(seen).toEqual([a.address]);
  });
});

async function produce(client: ShoalClient, count: number, partitionId = 0): Promise<void> {
  await client.sendMessages({ streamId: 'app', topicId: 'events', partitioning: { partitionId }, messages: Array.from({ length: count }, (_, i) => ({ payload: `m${i}` })) });
}

describe('Node streams', () => {
  it('consumer.readable() | Transform | producer.writable(): a topic copied in order, with back-pressure', async () => {
    const { client } = connect();
    a.addStream('copy', [['events', 1]]);
    await produce(client, 50);
    const controller = new AbortController();
    const consumer = client.consumer({ streamId: 'app', topicId: 'events', partitionId: 0, strategy: 'first', batchSize: 10, signal: controller.signal });
    const readable = consumer.readable({ highWaterMark: 4 });
    const producer = client.producer({ streamId: 'copy', topicId: 'events', partitioning: { partitionId: 0 } });
    let copied = 0;
    const upper = new Transform({
      objectMode: true,
      transform(message: ReceivedMessage, _encoding, callback) {
        if (++copied === 50) setTimeout(() => controller.abort(), 10);
        callback(null, { payload: new TextDecoder().decode(message.payload).toUpperCase(), id: message.id });
      },
    });
    await pipeline(readable, upper, producer.writable());
    await producer.close();
    const polled = await client.pollMessages({ streamId: 'copy', topicId: 'events', partitionId: 0, strategy: 'first', count: 100 });
    expect(polled.messages.map((m) => new TextDecoder().decode(m.payload))).toEqual(Array.from({ length: 50 }, (_, i) => `M${i}`));
    // Back-pressure: with 4 buffered and batches of 10, the polls follow the reader (no run-ahead past the topic).
    expect(a.requestsOf(CommandCode.PollMessages).length).toBeGreaterThanOrEqual(5);
    expect(a.storedOffset(0, 0, 0, 'consumer:numeric:0')).toBe(49n);
  });

  it('destroying the readable closes the consumer and commits what was handed on', async () => {
    const { client } = connect();
    await produce(client, 10);
    const consumer = client.consumer({ streamId: 'app', topicId: 'events', partitionId: 0, strategy: 'first', consumer: 5 });
    const readable = consumer.readable({ highWaterMark: 1 });
    const got: bigint[] = [];
    await new Promise<void>((resolve) => {
      readable.on('data', (m: ReceivedMessage) => {
        got.push(m.offset);
        if (got.length === 3) {
          readable.destroy();
          resolve();
        }
      });
    });
    await new Promise((resolve) => readable.once('close', resolve));
    expect(got).toEqual([0n, 1n, 2n]);
    // Offsets 0 and 1 were handed on and the next one asked for (processed); never past what was handed on.
    const stored = a.storedOffset(0, 0, 0, 'consumer:numeric:5');
    expect(stored).toBeGreaterThanOrEqual(1n);
    expect(stored).toBeLessThanOrEqual(2n);
    await expect(async () => {
      for await (const _ of consumer) break;
    }).rejects.toThrow(/closed/);
  });

  it("commit(message) with autoCommit 'none' stores exactly the sink's position", async () => {
    const { client } = connect();
    await produce(client, 6);
    const controller = new AbortController();
    const consumer = client.consumer({ streamId: 'app', topicId: 'events', partitionId: 0, strategy: 'first', consumer: 6, autoCommit: 'none', signal: controller.signal });
    let written = 0;
    const sink = new Writable({
      objectMode: true,
      write(message: ReceivedMessage, _encoding, callback) {
        const done = ++written === 4;
        (done ? consumer.commit(message) : Promise.resolve()).then(() => {
          if (done) controller.abort();
          callback();
        }, callback);
      },
    });
    await pipeline(consumer.readable(), sink);
    expect(a.storedOffset(0, 0, 0, 'consumer:numeric:6')).toBe(3n);
  });

  it('producer.writable() takes strings and bytes, and fails the stream on a failed send', async () => {
    const { client } = connect();
    const producer = client.producer({ streamId: 'app', topicId: 'events', partitioning: { partitionId: 1 } });
    const writable = producer.writable();
    writable.write('text');
    writable.write(new TextEncoder().encode('bytes'));
    await new Promise<void>((resolve, reject) => writable.end((error?: Error | null) => (error ? reject(error) : resolve())));
    expect(a.messageCount(0, 0, 1)).toBe(2n);
    const broken = client.producer({ streamId: 'app', topicId: 'missing' }).writable();
    broken.write('x');
    await expect(new Promise((_, reject) => broken.once('error', reject))).rejects.toThrow(/not found|TopicNameNotFound/i);
    await producer.close();
  });
});
