/**
 * Clients that misbehave cannot hurt the node: fuzzed and truncated frames, wrong sizes, a frame
 * of 64 MiB + 1, slow-drip writers and slow readers, and 10,000 connect/disconnect cycles (whose
 * heap growth, summed over every thread, must stay under 10 MB). Through all of it the node keeps
 * serving, and every message committed before is read back intact at its offset.
 */
import { connect } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ShoalClient } from '@shoal/client';
import { Prng } from '@shoal/stdx';
import {
  CommandCode, ErrorCode, FRAME_HEADER_SIZE, Operation, classifyServerFrame, encodeLoginRegisterRequest, encodeRequestFrame,
  SHOAL_PROTOCOL_VERSION,
} from '@shoal/protocol';
import { RawClient } from './support/raw-client.js';
import { metricSum, removeDataDir, startServer, type ServerHandle } from './support/server.js';

const MiB = 1024 * 1024;
const decode = (bytes: Uint8Array): string => new TextDecoder().decode(bytes);
/** Short, comparable form of a payload (large payloads would flood a failure report). */
const digest = (text: string): string => (text.length <= 40 ? text : `${text.slice(0, 12)}…(${text.length} chars)`);

function ping(client: bigint): Uint8Array {
  return encodeRequestFrame({ client, operation: Operation.NonReplicated, nonReplicatedCode: CommandCode.Ping }, new Uint8Array(0));
}

/** A 256-byte header that claims `size` bytes (command 5). */
function headerClaiming(size: number): Uint8Array {
  const frame = ping(7n).slice();
  new DataView(frame.buffer).setUint32(48, size, true);
  return frame;
}

async function heapTotal(server: ServerHandle): Promise<number> {
  const text = await server.metrics('?gc=1');
  return metricSum(text, 'shoal_thread_heap_used_bytes');
}

describe('hostile and careless clients', () => {
  let server: ServerHandle;
  let sdk: ShoalClient;
  const committed: { partition: number; payload: string }[] = [];

  beforeAll(async () => {
    server = await startServer({
      shards: 2,
      nodeArgs: ['--expose-gc'],
      env: { SHOAL_TCP_FRAME_READ_TIMEOUT: '1s', SHOAL_TCP_WRITE_STALL_TIMEOUT: '2s', SHOAL_TCP_WRITE_BUFFER_BYTES_MAX: '1 MiB' },
    });
    sdk = new ShoalClient({ address: server.address, credentials: { username: 'iggy', password: 'iggy' }, heartbeatIntervalMs: 0 });
    await sdk.stream.create({ name: 'safe' });
    await sdk.topic.create({ streamId: 'safe', name: 'data', partitionsCount: 4 });
    for (let i = 0; i < 40; i++) {
      const partition = i % 4;
      const payload = `committed-${i}`;
      await sdk.message.send({ streamId: 'safe', topicId: 'data', partitioning: { partitionId: partition }, messages: [{ payload }] });
      committed.push({ partition, payload });
    }
  });

  afterAll(async () => {
    await sdk?.destroy();
    expect((await server?.stop()).code).toBe(0);
    if (server !== undefined) removeDataDir(server.dataDir);
  });

  async function expectHealthyAndIntact(): Promise<void> {
    await sdk.ping();
    for (let partition = 0; partition < 4; partition++) {
      // A poll is bounded in bytes (storage read-ahead), so read on until every message came back.
      const got: { offset: number; digest: string }[] = [];
      for (;;) {
        const polled = await sdk.message.poll({
          streamId: 'safe', topicId: 'data', partitionId: partition, consumer: 9, strategy: { offset: BigInt(got.length) }, count: 1000,
        });
        if (polled.messages.length === 0) break;
        for (const m of polled.messages) got.push({ offset: Number(m.offset), digest: digest(decode(m.payload)) });
      }
      const expected = committed.filter((c) => c.partition === partition).map((c) => digest(c.payload));
      expect(got.length, `partition ${partition}: messages read back`).toBe(expected.length);
      expect(got.map((g) => g.digest)).toEqual(expected);
      expect(got.map((g) => g.offset)).toEqual(expected.map((_, i) => i));
    }
  }

  it('closes a connection whose frame claims fewer than 256 bytes or more than 64 MiB (before reading the body)', async () => {
    for (const size of [0, 255, 64 * MiB + 1, 0xffff_ffff]) {
      const raw = await RawClient.connect(server.tcp);
      raw.write(headerClaiming(size));
      expect(await raw.closedWithin(3000), `size ${size}`).toBe(true);
    }
    const ok = await RawClient.connect(server.tcp);
    expect(classifyServerFrame(await ok.request(ping(9n)) as Uint8Array)).toMatchObject({ outcome: 'ok' });
    ok.destroy();
    await expectHealthyAndIntact();
  });

  it('survives fuzzed frames: random bytes, mutated valid frames, truncated frames, wrong sizes', async () => {
    const prng = new Prng(0x5eed);
    const login = encodeRequestFrame({ client: 77n, operation: Operation.Register }, encodeLoginRegisterRequest({
      versionInfo: { protocolVersion: SHOAL_PROTOCOL_VERSION, sdkName: 'fuzz', sdkVersion: '1' }, username: 'iggy', password: 'iggy', context: '',
    }));
    const seeds = [ping(5n), login, headerClaiming(300)];
    for (let round = 0; round < 120; round++) {
      const raw = await RawClient.connect(server.tcp);
      const seed = seeds[round % seeds.length] as Uint8Array;
      let bytes: Uint8Array;
      switch (round % 4) {
        case 0: // pure noise
          bytes = Uint8Array.from({ length: 1 + prng.below(600) }, () => prng.below(256));
          break;
        case 1: { // a valid frame with a few bytes flipped (size kept sane half the time)
          bytes = seed.slice();
          for (let i = 0; i < 1 + prng.below(8); i++) bytes[prng.below(bytes.length)] = prng.below(256);
          if (round % 8 === 1) new DataView(bytes.buffer).setUint32(48, bytes.length, true);
          break;
        }
        case 2: // truncated
          bytes = seed.slice(0, prng.below(seed.length));
          break;
        default: { // a size that disagrees with the bytes that follow
          bytes = seed.slice();
          new DataView(bytes.buffer).setUint32(48, FRAME_HEADER_SIZE + prng.below(64), true);
        }
      }
      raw.write(bytes);
      await new Promise((resolve) => setTimeout(resolve, 5));
      raw.destroy();
    }
    await expectHealthyAndIntact();
  });

  it('closes a slow-drip writer after frame_read_timeout and a slow reader after write_stall_timeout', async () => {
    const drip = await RawClient.connect(server.tcp);
    const frame = ping(11n);
    let sent = 0;
    const timer = setInterval(() => {
      if (sent < frame.length && !drip.closed) drip.write(frame.subarray(sent, ++sent));
    }, 40);
    expect(await drip.closedWithin(4000)).toBe(true);
    clearInterval(timer);
    expect(sent).toBeLessThan(frame.length);

    // A reader that never reads: PING replies pile up in its socket until the stall clock fires.
    const socket = connect({ host: server.tcp.host, port: server.tcp.port });
    await new Promise((resolve) => socket.once('connect', resolve));
    socket.pause();
    socket.on('error', () => undefined);
    const closed = new Promise<boolean>((resolve) => socket.once('close', () => resolve(true)));
    // The kernel's loopback buffers (autotuned, several MiB each way) absorb replies before any
    // pile up in the server's socket, so one fixed burst is not enough everywhere: keep sending
    // until the server stops reading (our own unsent bytes grow), then its stall clock runs.
    const pings = Buffer.concat(Array.from({ length: 10_000 }, () => ping(99n)));
    const feeder = setInterval(() => {
      if (!socket.destroyed && socket.writableLength < 8 * MiB) socket.write(pings);
    }, 50);
    socket.write(pings);
    const outcome = await Promise.race([closed, new Promise<boolean>((r) => setTimeout(() => r(false), 20_000))]);
    clearInterval(feeder);
    expect(outcome).toBe(true);
    const text = await server.metrics();
    const reasons = text.split('\n').filter((l) => l.startsWith('shoal_connections_refused_total')).join('\n');
    expect(metricSum(text, 'shoal_connections_refused_total', { reason: 'frame_read_timeout' }), reasons).toBeGreaterThanOrEqual(1);
    expect(metricSum(text, 'shoal_connections_refused_total', { reason: 'write_stall_timeout' }), reasons).toBeGreaterThanOrEqual(1);
    await expectHealthyAndIntact();
  });

  it('carries a 6 MiB batch through the rings (fragmented across threads) and back', async () => {
    const payload = 'y'.repeat(6 * MiB);
    for (let partition = 0; partition < 4; partition++) {
      await sdk.message.send({ streamId: 'safe', topicId: 'data', partitioning: { partitionId: partition }, messages: [{ payload }] });
      committed.push({ partition, payload });
    }
    await expectHealthyAndIntact();
  });

  it('takes 10,000 connect/disconnect cycles with heap growth under 10 MB over all threads', async () => {
    const before = await heapTotal(server);
    const cycles = 10_000;
    const concurrency = 32;
    let next = 0;
    let pinged = 0;
    const worker = async (): Promise<void> => {
      while (next < cycles) {
        const index = next++;
        const raw = await RawClient.connect(server.tcp);
        if (index % 20 === 0) {
          const reply = await raw.request(ping(BigInt(index + 1)));
          if (reply !== null && classifyServerFrame(reply).outcome === 'ok') pinged += 1;
        }
        raw.destroy();
        await raw.closedPromise;
      }
    };
    await Promise.all(Array.from({ length: concurrency }, worker));
    expect(pinged).toBe(cycles / 20);
    // Let every shard see the closes, then measure.
    await new Promise((resolve) => setTimeout(resolve, 500));
    const after = await heapTotal(server);
    const growth = after - before;
    console.log(`churn: ${cycles} cycles, heap (all threads) ${(before / MiB).toFixed(1)} → ${(after / MiB).toFixed(1)} MiB, growth ${(growth / MiB).toFixed(2)} MiB`);
    expect(growth).toBeLessThan(10 * 1000 * 1000);
    const text = await server.metrics();
    expect(metricSum(text, 'shoal_connections_accepted_total')).toBeGreaterThanOrEqual(cycles);
    expect(metricSum(text, 'shoal_thread_connections')).toBeLessThanOrEqual(2);
    await expectHealthyAndIntact();
  }, 180_000);

  it('refuses a request before login with Unauthenticated, and keeps the connection', async () => {
    const raw = await RawClient.connect(server.tcp);
    const frame = encodeRequestFrame({ client: 3n, operation: Operation.NonReplicated, nonReplicatedCode: CommandCode.GetStreams }, new Uint8Array(0));
    expect(classifyServerFrame(await raw.request(frame) as Uint8Array)).toMatchObject({ errorCode: ErrorCode.Unauthenticated });
    expect(classifyServerFrame(await raw.request(ping(3n)) as Uint8Array)).toMatchObject({ outcome: 'ok' });
    raw.destroy();
  });
});
