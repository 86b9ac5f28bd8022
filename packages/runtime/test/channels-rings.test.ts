/**
 * Channels over a real mesh (both ends in this thread: a ring has one producer and one consumer,
 * whichever threads they live on). Covers fragmentation of messages larger than the ring's frame
 * limit, FIFO order per destination across the backlog when a ring is full, and the receive loop.
 */
import { describe, expect, it } from 'vitest';
import { createMesh, meshEndpoints } from '@shoal/ring';
import { Channels } from '../src/channels/channels.js';
import type { ChannelMessage } from '../src/channels/messages.js';
import { createLogger } from '../src/log/logger.js';

const log = createLogger({ logging: { defaultLevel: 'off', directives: [] }, thread: 'test', target: 'test', sinks: [] });

function pair(capacityBytes: number): { a: Channels; b: Channels; received: { to: string; message: ChannelMessage; from: number }[] } {
  const mesh = createMesh({ threadCount: 2, capacityBytes });
  const received: { to: string; message: ChannelMessage; from: number }[] = [];
  const make = (thread: number, name: string): Channels => new Channels({
    endpoints: meshEndpoints(mesh, thread),
    // Views are valid during the call only: copy.
    onMessage: (message, from) => received.push({ to: name, message: structuredClone(message), from }),
    onBatchEnd: () => undefined,
    framesPerRingPerTurn: 8,
    messageBytesMax: 1 << 20,
    log,
  });
  return { a: make(0, 'a'), b: make(1, 'b'), received };
}

function reply(token: number, size: number): ChannelMessage {
  return { kind: 'reply', token, group: 0n, frame: Uint8Array.from({ length: size }, (_, i) => (i * 31 + token) & 0xff), completes: true };
}

async function until(predicate: () => boolean): Promise<void> {
  for (let i = 0; i < 2000 && !predicate(); i++) await new Promise((resolve) => setImmediate(resolve));
  expect(predicate()).toBe(true);
}

describe('channels over SharedArrayBuffer rings', () => {
  it('delivers messages both ways, in order, with the source thread', async () => {
    const { a, b, received } = pair(4096);
    void a.run();
    void b.run();
    for (let i = 1; i <= 20; i++) a.send(1, reply(i, 10));
    b.send(0, reply(99, 3));
    a.flush();
    b.flush();
    await until(() => received.length === 21);
    expect(received.filter((r) => r.to === 'b').map((r) => (r.message as { token: number }).token)).toEqual(Array.from({ length: 20 }, (_, i) => i + 1));
    expect(received.find((r) => r.to === 'a')).toMatchObject({ from: 1, message: { token: 99 } });
    a.close();
    b.close();
  });

  it('fragments a message larger than the ring frame limit and reassembles it intact', async () => {
    const { a, b, received } = pair(4096); // frame limit 2040 bytes
    void b.run();
    const big = reply(5, 50_000);
    a.send(1, reply(4, 8));
    a.send(1, big);
    a.send(1, reply(6, 8));
    a.flush();
    await until(() => received.length === 3);
    expect(received.map((r) => (r.message as { token: number }).token)).toEqual([4, 5, 6]);
    expect(received[1]?.message).toEqual(big);
    a.close();
    b.close();
  });

  it('keeps FIFO order through the backlog when the ring is full, and drains it', async () => {
    const { a, b, received } = pair(1024);
    for (let i = 1; i <= 200; i++) a.send(1, reply(i, 100)); // far more than 1 KiB: most wait in the backlog
    a.flush();
    expect(a.backlogBytes).toBeGreaterThan(0);
    void b.run();
    await until(() => received.length === 200);
    expect(received.map((r) => (r.message as { token: number }).token)).toEqual(Array.from({ length: 200 }, (_, i) => i + 1));
    await until(() => a.backlogBytes === 0);
    expect(a.stats()).toMatchObject({ sent: 200 });
    expect(b.stats()).toMatchObject({ received: 200 });
    a.close();
    b.close();
  });
});
