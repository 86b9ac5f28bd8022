import { CommandCode, ErrorCode, peekBatchMessageCount, sendMessagesCommand } from '@shoal/protocol';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import {
  type ReceivedMessage, ShoalClient, ShoalClosedError, ShoalResponseError, partitionForKey,
} from '../src/index.js';
import { FakeServer, type RecordedRequest } from './support/fake-server.js';

let server: FakeServer;
let client: ShoalClient;

beforeEach(async () => {
  server = await FakeServer.start();
  server.addStream('app', [['events', 3]]);
  client = new ShoalClient({ address: server.address, credentials: { username: 'iggy', password: 'iggy' }, heartbeatIntervalMs: 0 });
});

afterEach(async () => {
  await client.close();
  await server.close();
});

const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

/** Polls until `done()` (a loaded machine may take longer than any fixed sleep), at most ~5 s. */
async function until(done: () => boolean): Promise<void> {
  for (let i = 0; i < 500 && !done(); i++) await sleep(10);
}

function sentBatches(): { partition: number; count: number }[] {
  return server.requestsOf(CommandCode.SendMessages).map((r: RecordedRequest) => {
    const decoded = sendMessagesCommand.decodeRequest(r.body);
    if (!decoded.ok) throw new Error(decoded.reason);
    const p = decoded.value.partitioning;
    return { partition: p.kind === 'partition_id' ? p.partitionId : -1, count: peekBatchMessageCount(decoded.value.batch) ?? -1 };
  });
}

async function produce(count: number, partitionId = 0): Promise<void> {
  await client.sendMessages({
    streamId: 'app', topicId: 'events', partitioning: { partitionId },
    messages: Array.from({ length: count }, (_, i) => ({ payload: `m${i}`, headers: { index: { kind: 'uint32', value: i } } })),
  });
}

describe('producer', () => {
  it('batches by count; every send resolves with its partition and offset', async () => {
    const producer = client.producer({ streamId: 'app', topicId: 'events', partitioning: { partitionId: 1 }, batchMaxMessages: 10, lingerMs: 10_000 });
    const sends = Array.from({ length: 25 }, (_, i) => producer.send({ payload: `p${i}` }));
    // Two full batches leave at once; the 5 left over wait for the 10 s linger (or the flush).
    await until(() => sentBatches().length >= 2);
    expect(sentBatches().map((b) => b.count)).toEqual([10, 10]);
    await producer.flush();
    const results = await Promise.all(sends);
    expect(results.map((r) => r.offset)).toEqual(Array.from({ length: 25 }, (_, i) => BigInt(i)));
    expect(new Set(results.map((r) => r.partitionId))).toEqual(new Set([1]));
    expect(sentBatches().map((b) => b.count)).toEqual([10, 10, 5]);
    expect(producer.stats).toMatchObject({ batchesSent: 3, messagesSent: 25, inFlight: 0, bufferedBytes: 0 });
  });

  it('linger: a partial batch leaves after lingerMs', async () => {
    const producer = client.producer({ streamId: 0, topicId: 0, partitioning: { partitionId: 0 }, lingerMs: 250 });
    const started = Date.now();
    const sends = [producer.send({ payload: 'a' }), producer.send({ payload: 'b' }), producer.send([{ payload: 'c' }, { payload: 'd' }])];
    await sleep(20);
    expect(sentBatches()).toEqual([]);
    const results = await Promise.all(sends);
    expect(Date.now() - started).toBeGreaterThanOrEqual(240);
    expect(sentBatches()).toEqual([{ partition: 0, count: 4 }]);
    expect(results.map((r) => [r.offset, r.count])).toEqual([[0n, 1], [1n, 1], [2n, 2]]);
  });

  it('batches by bytes', async () => {
    const producer = client.producer({ streamId: 0, topicId: 0, partitioning: { partitionId: 2 }, batchMaxBytes: 4096, lingerMs: 10_000 });
    const sends = Array.from({ length: 7 }, () => producer.send({ payload: new Uint8Array(1000) }));
    await producer.flush();
    await Promise.all(sends);
    expect(sentBatches().map((b) => b.count)).toEqual([3, 3, 1]);
  });

  it('pipelines up to maxInFlight batches', async () => {
    let outstanding = 0;
    let peak = 0;
    server.intercept = (r) => {
      if (r.code !== CommandCode.SendMessages) return null;
      outstanding++;
      peak = Math.max(peak, outstanding);
      setTimeout(() => outstanding--, 150);
      return { kind: 'delay', ms: 150 };
    };
    const producer = client.producer({ streamId: 0, topicId: 0, partitioning: { partitionId: 0 }, batchMaxMessages: 1, maxInFlight: 2 });
    const results = await Promise.all(Array.from({ length: 6 }, (_, i) => producer.send({ payload: `x${i}` })));
    expect(peak).toBe(2);
    expect(results.map((r) => r.offset)).toEqual([0n, 1n, 2n, 3n, 4n, 5n]);
  });

  it('balanced partitioning is round robin per send; keys hash with XXH32 like the server', async () => {
    const producer = client.producer({ streamId: 0, topicId: 0, lingerMs: 0, maxInFlight: 1 });
    for (let i = 0; i < 6; i++) await producer.send({ payload: `b${i}` });
    expect(sentBatches().map((b) => b.partition)).toEqual([0, 1, 2, 0, 1, 2]);
    const keyed = await producer.send({ payload: 'k' }, { partitioning: { key: 'user-42' } });
    expect(keyed.partitionId).toBe(await partitionForKey('user-42', 3));
    // A topic the producer has not seen: the partition count is fetched once and cached.
    expect(server.requestsOf(CommandCode.GetTopic)).toHaveLength(1);
  });

  it('errors surface per batch; other batches still succeed', async () => {
    let calls = 0;
    server.intercept = (r) => (r.code === CommandCode.SendMessages && calls++ === 0 ? { kind: 'reject', code: ErrorCode.InvalidBatchChecksum } : null);
    const producer = client.producer({ streamId: 0, topicId: 0, partitioning: { partitionId: 0 }, batchMaxMessages: 2, maxInFlight: 1 });
    const outcomes = await Promise.allSettled([producer.send({ payload: '1' }), producer.send({ payload: '2' }), producer.send({ payload: '3' }), producer.send({ payload: '4' })]);
    expect(outcomes.map((o) => o.status)).toEqual(['rejected', 'rejected', 'fulfilled', 'fulfilled']);
    const reason = (outcomes[0] as PromiseRejectedResult).reason as ShoalResponseError;
    expect(reason).toBeInstanceOf(ShoalResponseError);
    expect(reason.code).toBe(ErrorCode.InvalidBatchChecksum);
    expect(producer.stats.batchesFailed).toBe(1);
  });

  it('close flushes and refuses further sends', async () => {
    const producer = client.producer({ streamId: 0, topicId: 0, partitioning: { partitionId: 0 }, lingerMs: 10_000 });
    const pending = producer.send({ payload: 'last' });
    await producer.close();
    expect((await pending).offset).toBe(0n);
    await expect(producer.send({ payload: 'late' })).rejects.toBeInstanceOf(ShoalClosedError);
  });
});

async function take(iterable: AsyncIterable<ReceivedMessage>, count: number): Promise<ReceivedMessage[]> {
  const out: ReceivedMessage[] = [];
  if (count === 0) return out;
  for await (const message of iterable) {
    out.push(message);
    if (out.length === count) break;
  }
  return out;
}

describe('consumer', () => {
  it('iterates messages with offsets, payloads and headers; commits after processing', async () => {
    await produce(25);
    const consumer = client.consumer({ streamId: 'app', topicId: 'events', consumer: 7, partitionId: 0, batchSize: 10, strategy: 'first' });
    const messages = await take(consumer, 25);
    expect(messages.map((m) => m.offset)).toEqual(Array.from({ length: 25 }, (_, i) => BigInt(i)));
    expect(new TextDecoder().decode(messages[3]?.payload)).toBe('m3');
    expect(messages[3]?.headers['index']).toEqual({ kind: 'uint32', value: 3 });
    expect(messages[0]?.partitionId).toBe(0);
    // Batches end at 9 and 19; on break the message in hand (24) is not counted as processed.
    expect(server.storedOffset(0, 0, 0, 'consumer:numeric:7')).toBe(23n);
    expect(server.requestsOf(CommandCode.StoreConsumerOffset).map((r) => r.header.operation)).toEqual([161, 161, 161]);

    const resumed = client.consumer({ streamId: 'app', topicId: 'events', consumer: 7, partitionId: 0 });
    expect((await take(resumed, 1)).map((m) => m.offset)).toEqual([24n]);
  }, 10_000);

  it('server-side auto-commit: the poll carries auto_commit and no offsets are stored by the client', async () => {
    await produce(5);
    const consumer = client.consumer({ streamId: 0, topicId: 0, consumer: 3, partitionId: 0, autoCommit: 'server' });
    expect(await take(consumer, 5)).toHaveLength(5);
    expect(server.requestsOf(CommandCode.StoreConsumerOffset)).toHaveLength(0);
    expect(server.storedOffset(0, 0, 0, 'consumer:numeric:3')).toBe(4n);
  });

  it("autoCommit 'none': nothing is stored until commit(), which stores the processed offsets", async () => {
    await produce(6);
    const consumer = client.consumer({ streamId: 0, topicId: 0, consumer: 4, partitionId: 0, autoCommit: 'none', strategy: 'first' });
    expect(await take(consumer, 4)).toHaveLength(4);
    expect(server.requestsOf(CommandCode.StoreConsumerOffset)).toHaveLength(0);
    await consumer.commit();
    // 0..2 processed; 3 was in hand at the break.
    expect(server.storedOffset(0, 0, 0, 'consumer:numeric:4')).toBe(2n);
    await consumer.close();
  });

  it('reads every partition of the topic when none is given, and backs off when empty', async () => {
    await produce(2, 0);
    await produce(2, 1);
    await produce(2, 2);
    const controller = new AbortController();
    const consumer = client.consumer({ streamId: 0, topicId: 0, signal: controller.signal, pollIntervalMs: 40, pollIntervalMaxMs: 80, strategy: 'first' });
    const seen: string[] = [];
    setTimeout(() => controller.abort(), 400);
    for await (const m of consumer) seen.push(`${m.partitionId}:${m.offset}`);
    expect(seen.sort()).toEqual(['0:0', '0:1', '1:0', '1:1', '2:0', '2:1']);
    // ~400 ms idle at 40..80 ms back-off per round of 3 polls: a handful of rounds, not a busy loop.
    expect(server.requestsOf(CommandCode.PollMessages).length).toBeLessThan(40);
  });

  it('a consumer group splits the partitions between members, each message once', async () => {
    const other = new ShoalClient({ address: server.address, credentials: { username: 'iggy', password: 'iggy' }, heartbeatIntervalMs: 0 });
    try {
      const controller = new AbortController();
      const options = { streamId: 0, topicId: 0, group: { name: 'workers' }, groupSyncIntervalMs: 20, pollIntervalMs: 10, pollIntervalMaxMs: 20, signal: controller.signal };
      const a = client.consumer(options);
      await sleep(50);
      const b = other.consumer(options);
      const seen = new Map<string, number>();
      const run = async (c: AsyncIterable<ReceivedMessage>): Promise<void> => {
        for await (const m of c) {
          const key = `${m.partitionId}:${m.offset}`;
          seen.set(key, (seen.get(key) ?? 0) + 1);
          if (seen.size === 12) controller.abort();
          if (controller.signal.aborted) break;
        }
      };
      const stopper = setTimeout(() => controller.abort(), 4000);
      const running = Promise.all([run(a), run(b)]);
      // Both members have joined and synced before anything is produced: no rebalance mid-stream
      // (a rebalance hands a partition over at its last committed offset: at-least-once).
      await sleep(150);
      for (let p = 0; p < 3; p++) await produce(4, p);
      await running;
      clearTimeout(stopper);
      expect(seen.size).toBe(12);
      expect([...seen.values()].every((n) => n === 1)).toBe(true);
      expect(a.groupId).toBe(0);
      expect(new Set([...a.assignment, ...b.assignment])).toEqual(new Set([0, 1, 2]));
      expect(a.assignment.filter((p) => b.assignment.includes(p))).toEqual([]);
      await a.close();
      await b.close();
      expect(server.requestsOf(CommandCode.LeaveConsumerGroup)).toHaveLength(2);
    } finally {
      await other.close();
    }
  }, 10_000);
});
