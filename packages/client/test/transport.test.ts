import { CommandCode, ErrorCode, EvictionReason, createStreamCommand, sendMessagesCommand } from '@shoal/protocol';
import { toHex } from '@shoal/stdx';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import {
  ShoalAbortError, ShoalClient, ShoalClosedError, ShoalConnectionError, ShoalConnectionLostError, ShoalEvictionError,
  ShoalRetryExhaustedError, ShoalTimeoutError, TcpConnection, encodeBatch, toIdentifier,
} from '../src/index.js';
import { FakeServer } from './support/fake-server.js';

const PING = { code: CommandCode.Ping, body: new Uint8Array(0) };
const GET_STREAMS = { code: CommandCode.GetStreams, body: new Uint8Array(0) };
const LOGIN = { kind: 'password', username: 'iggy', password: 'iggy' } as const;

let server: FakeServer;
const opened: { close(): Promise<void> }[] = [];

beforeEach(async () => {
  server = await FakeServer.start();
});

afterEach(async () => {
  for (const c of opened.splice(0)) await c.close();
  await server.close();
});

function connection(options: ConstructorParameters<typeof TcpConnection>[1] = {}): TcpConnection {
  const c = new TcpConnection({ host: '127.0.0.1', port: server.port }, { heartbeatIntervalMs: 0, ...options });
  c.setCredentials(LOGIN);
  opened.push(c);
  return c;
}

const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

describe('pipelining and the in-flight window', () => {
  it('keeps at most windowMax requests in flight and answers all of them', async () => {
    const c = connection({ windowMax: 4 });
    await c.connect();
    let outstanding = 0;
    let peak = 0;
    server.intercept = (r) => {
      if (r.code !== CommandCode.Ping) return null;
      outstanding++;
      peak = Math.max(peak, outstanding);
      setTimeout(() => outstanding--, 100);
      return { kind: 'delay', ms: 100 };
    };
    const pings = Array.from({ length: 12 }, () => c.request(PING));
    await sleep(0);
    expect(c.inFlight).toBe(4);
    expect(c.queued).toBe(8);
    await Promise.all(pings);
    expect(peak).toBe(4);
    expect(server.requestsOf(CommandCode.Ping)).toHaveLength(12);
  });

  it('correlates out-of-order replies to requests sharing a request number by the echoed timestamp', async () => {
    const c = connection();
    await c.connect();
    let n = 0;
    server.intercept = (r) => (r.code === CommandCode.GetStreams ? { kind: 'delay', ms: 40 - 10 * n++ } : null);
    server.addStream('first');
    const replies = await Promise.all([c.request(GET_STREAMS), c.request(GET_STREAMS), c.request(GET_STREAMS), c.request(GET_STREAMS)]);
    const numbers = new Set(server.requestsOf(CommandCode.GetStreams).map((r) => r.header.request));
    expect(numbers.size).toBe(1);
    expect(replies.every((r) => r.payload.length > 0)).toBe(true);
    expect(c.dropped.size).toBe(0);
  });

  it('write back-pressure: requests wait in the session queue until the socket drains', async () => {
    server.addStream('s', [['t', 1]]);
    const c = connection({ windowMax: 64 });
    await c.connect();
    server.pauseReading();
    const batch = encodeBatch([{ payload: new Uint8Array(1024 * 1024) }], { randomId: () => 1n, nowMicros: () => 1n });
    const body = sendMessagesCommand.encodeRequest({
      streamId: toIdentifier(0), topicId: toIdentifier(0), partitioning: { kind: 'partition_id', partitionId: 0 }, messagesCount: 1, batch,
    });
    const sends = Array.from({ length: 16 }, () => c.request({ code: CommandCode.SendMessages, body }, { timeoutMs: 10_000 }));
    await sleep(50);
    // The first write filled the socket buffer: the rest wait, unnumbered, in the session queue.
    expect(c.queued).toBeGreaterThan(8);
    expect(server.requestsOf(CommandCode.SendMessages)).toHaveLength(0);
    server.resumeReading();
    await Promise.all(sends);
    expect(server.messageCount(0, 0, 0)).toBe(16n);
  });
});

describe('timeouts, aborts, late replies', () => {
  it('a request that gets no reply times out (retriable), and its late reply is dropped', async () => {
    const c = connection();
    await c.connect();
    server.intercept = (r) => (r.code === CommandCode.GetStreams ? { kind: 'delay', ms: 120 } : null);
    const error = await c.request(GET_STREAMS, { timeoutMs: 40 }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ShoalTimeoutError);
    expect(error).toMatchObject({ code: ErrorCode.TaskTimeout, retriable: true });
    server.intercept = null;
    await sleep(200);
    await c.request(GET_STREAMS);
    expect(c.dropped.get('abandoned')).toBe(1);
  });

  it('AbortSignal: an abort fails the call at once; an aborted signal sends nothing', async () => {
    const c = connection();
    await c.connect();
    server.intercept = (r) => (r.code === CommandCode.Ping ? { kind: 'drop' } : null);
    const controller = new AbortController();
    const pending = c.request(PING, { signal: controller.signal });
    setTimeout(() => controller.abort(new Error('user stop')), 10);
    const error = await pending.catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ShoalAbortError);
    expect((error as ShoalAbortError).retriable).toBe(false);
    const before = server.requests.length;
    await expect(c.request(PING, { signal: AbortSignal.abort() })).rejects.toBeInstanceOf(ShoalAbortError);
    expect(server.requests.length).toBe(before);
  });
});

describe('57 replay, evictions, connection loss', () => {
  it('57 TransientNotCommitted: the same frame (same request number) is written again on the same connection', async () => {
    const c = connection();
    await c.connect();
    let first = true;
    server.intercept = (r) => (r.code === CommandCode.CreateStream && first ? ((first = false), { kind: 'reject', code: 57, via: 'result' }) : null);
    await c.request({ code: CommandCode.CreateStream, body: createStreamCommand.encodeRequest({ name: 'replayed', options: [] }) });
    const sent = server.requestsOf(CommandCode.CreateStream);
    expect(sent).toHaveLength(2);
    expect(toHex(sent[0]?.frame ?? new Uint8Array())).toBe(toHex(sent[1]?.frame ?? new Uint8Array(1)));
    expect(sent[0]?.connection).toBe(sent[1]?.connection);
    expect(server.streams.size).toBe(1);
  });

  it('57 on a partition write (status) is replayed too', async () => {
    const c = connection();
    await c.connect();
    let first = true;
    server.intercept = (r) => (r.code === CommandCode.Ping && first ? ((first = false), { kind: 'reject', code: 57 }) : null);
    await c.request(PING);
    expect(server.requestsOf(CommandCode.Ping)).toHaveLength(2);
  });

  it('an eviction fails every pending request with the mapped error; the next request registers afresh', async () => {
    const c = connection();
    await c.connect();
    const firstClient = c.clientId;
    let pings = 0;
    server.intercept = (r) => {
      if (r.code !== CommandCode.Ping) return null;
      pings++;
      return pings === 4 ? { kind: 'evict', reason: EvictionReason.StaleClient } : { kind: 'delay', ms: 50 };
    };
    const results = await Promise.all(Array.from({ length: 4 }, () => c.request(PING).catch((e: unknown) => e)));
    for (const result of results) {
      expect(result).toBeInstanceOf(ShoalEvictionError);
      expect(result).toMatchObject({ code: ErrorCode.StaleClient, reason: EvictionReason.StaleClient, retriable: true });
    }
    server.intercept = null;
    await sleep(60);
    await c.request(PING);
    expect(c.clientId).not.toBe(firstClient);
    expect(server.requestsOf(40)).toHaveLength(2);
  });

  it('the server closing the connection fails in-flight requests (written) and the next request reconnects', async () => {
    const c = connection({ reconnect: { intervalMs: 10 } });
    await c.connect();
    server.intercept = (r) => (r.code === CommandCode.GetStreams ? { kind: 'close' } : null);
    const error = await c.request(GET_STREAMS).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ShoalConnectionLostError);
    expect(error).toMatchObject({ written: true, retriable: true, code: ErrorCode.Disconnected });
    server.intercept = null;
    await c.request(GET_STREAMS);
    expect(server.requestsOf(40)).toHaveLength(2);
  });

  it('a refused connection is a retriable ShoalConnectionError', async () => {
    const port = server.port;
    await server.close();
    const c = new TcpConnection({ host: '127.0.0.1', port }, { heartbeatIntervalMs: 0 });
    const error = await c.request(PING).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ShoalConnectionError);
    expect(error).toMatchObject({ code: ErrorCode.CannotEstablishConnection, retriable: true });
    server = await FakeServer.start();
  });

  it('close() during connect: the connect fails with ShoalClosedError and nothing stays open', async () => {
    const c = connection();
    const connecting = c.connect().catch((e: unknown) => e);
    await c.close();
    expect(await connecting).toBeInstanceOf(ShoalClosedError);
    expect(c.state).toBe('shutdown');
    await sleep(30);
    expect(server.connectionCount).toBe(0);
  });

  it('heartbeat pings keep an idle session alive', async () => {
    const c = connection({ heartbeatIntervalMs: 30 });
    await c.connect();
    await sleep(150);
    expect(server.requestsOf(CommandCode.Ping).length).toBeGreaterThanOrEqual(2);
  });

  it('close(): pending requests fail with ShoalClosedError and the socket is ended', async () => {
    const c = connection();
    await c.connect();
    server.intercept = () => ({ kind: 'drop' });
    const pending = c.request(PING).catch((e: unknown) => e);
    await sleep(5);
    await c.close();
    expect(await pending).toBeInstanceOf(ShoalClosedError);
    await sleep(20);
    expect(server.connectionCount).toBe(0);
    await expect(c.request(PING)).rejects.toBeInstanceOf(ShoalClosedError);
  });
});

describe('router retries (single node)', () => {
  it('58 TransientNotAccepted is retried as a new request; 57 beyond the replay limit is retried within the budget', async () => {
    const client = new ShoalClient({ address: server.address, credentials: LOGIN, heartbeatIntervalMs: 0, replayAttemptsMax: 1, cluster: { retry: { attemptsMax: 3, backoffBaseMs: 1, backoffMaxMs: 5 } } });
    opened.push(client);
    let rejections = 1;
    server.intercept = (r) => (r.code === CommandCode.CreateStream && rejections-- > 0 ? { kind: 'reject', code: 58, via: 'result' } : null);
    await client.stream.create({ name: 'after-58' });
    const creates = server.requestsOf(CommandCode.CreateStream);
    expect(creates.map((r) => r.header.request)).toEqual([1n, 2n]);

    server.intercept = (r) => (r.code === CommandCode.DeleteStream ? { kind: 'reject', code: 57, via: 'result' } : null);
    const error = await client.stream.delete({ streamId: 0 }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ShoalRetryExhaustedError);
    expect(error).toMatchObject({ reason: 'attempts', attempts: 3, code: 57, retriable: true });
    // Each attempt: the first send plus one same-frame replay.
    expect(server.requestsOf(CommandCode.DeleteStream)).toHaveLength(6);
  });

  it('a dropped connection during a read is retried on a new connection', async () => {
    const client = new ShoalClient({ address: server.address, credentials: LOGIN, heartbeatIntervalMs: 0, reconnect: { intervalMs: 5 }, cluster: { retry: { backoffBaseMs: 1, backoffMaxMs: 5 }, nodeDownMs: 1 } });
    opened.push(client);
    await client.ping();
    let closes = 1;
    server.intercept = (r) => (r.code === CommandCode.GetStreams && closes-- > 0 ? { kind: 'close' } : null);
    expect(await client.stream.list()).toEqual([]);
    expect(server.requestsOf(CommandCode.GetStreams)).toHaveLength(2);
  });
});
