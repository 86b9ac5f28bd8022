/**
 * Restarting the process keeps everything committed: metadata (streams, topics, partitions,
 * users, tokens, consumer groups, consumer offsets) and every acknowledged message at its offset.
 * Once after a graceful SIGTERM (exit 0), and twice after SIGKILL: idle, and in the middle of a
 * stream of sends (only what was acknowledged is checked; the rest may or may not be there).
 */
import { afterAll, describe, expect, it } from 'vitest';
import { ShoalClient } from '@shoal/client';
import { removeDataDir, startServer, tempDataDir, type ServerHandle } from './support/server.js';

const decode = (bytes: Uint8Array): string => new TextDecoder().decode(bytes);

interface Acked {
  readonly partition: number;
  readonly offset: number;
  readonly payload: string;
}

async function readAll(client: ShoalClient, streamId: string, topicId: string, partition: number): Promise<Map<number, string>> {
  const out = new Map<number, string>();
  for (;;) {
    const polled = await client.message.poll({ streamId, topicId, partitionId: partition, consumer: 77, strategy: { offset: BigInt(out.size) }, count: 1000 });
    if (polled.messages.length === 0) return out;
    for (const m of polled.messages) out.set(Number(m.offset), decode(m.payload));
  }
}

describe('restart: committed state survives SIGTERM and SIGKILL', () => {
  const dataDir = tempDataDir('shoal-restart-');
  let server: ServerHandle | null = null;
  const acked: Acked[] = [];
  let token = '';

  const open = (credentials: NonNullable<ConstructorParameters<typeof ShoalClient>[0]>['credentials'] = { username: 'iggy', password: 'iggy' }): ShoalClient =>
    new ShoalClient({ address: (server as ServerHandle).address, credentials, heartbeatIntervalMs: 0, reconnect: { enabled: false } });

  async function verify(client: ShoalClient): Promise<void> {
    const streams = await client.stream.list();
    expect(streams.map((s) => s.name)).toEqual(['durable']);
    const topic = await client.topic.get({ streamId: 'durable', topicId: 'events' });
    expect(topic?.partitionsCount).toBe(3);
    expect((await client.user.list()).map((u) => u.username)).toEqual(['iggy', 'bob']);
    expect((await client.group.list({ streamId: 'durable', topicId: 'events' })).map((g) => g.name)).toEqual(['g']);
    expect((await client.offset.get({ streamId: 'durable', topicId: 'events', partitionId: 1, consumer: 5 }))?.storedOffset).toBe(3n);
    for (let partition = 0; partition < 3; partition++) {
      const stored = await readAll(client, 'durable', 'events', partition);
      for (const a of acked.filter((x) => x.partition === partition)) {
        expect(stored.get(a.offset), `partition ${partition} offset ${a.offset}`).toBe(a.payload);
      }
      expect([...stored.keys()]).toEqual([...stored.keys()].map((_, i) => i)); // contiguous from 0
    }
    const asBob = open({ token });
    expect((await asBob.getMe()).userId).toBe(1);
    await asBob.destroy();
  }

  afterAll(async () => {
    if (server !== null) await server.stop('SIGKILL');
    removeDataDir(dataDir);
  });

  it('keeps everything after a graceful SIGTERM restart', async () => {
    server = await startServer({ shards: 2, dataDir, readyTimeoutMs: 90_000, env: { IGGY_SYSTEM_LOGGING_LEVEL: process.env['SHOAL_TEST_LOG'] ?? 'info' } });
    const client = open();
    await client.stream.create({ name: 'durable' });
    await client.topic.create({ streamId: 'durable', name: 'events', partitionsCount: 3 });
    await client.user.create({ username: 'bob', password: 'bob-password' });
    const asBob = open({ username: 'bob', password: 'bob-password' });
    token = await asBob.token.create({ name: 'restart' });
    await asBob.destroy();
    await client.group.create({ streamId: 'durable', topicId: 'events', name: 'g' });
    for (let i = 0; i < 60; i++) {
      const partition = i % 3;
      const payload = `m-${i}-${'z'.repeat(i * 50)}`;
      const sent = await client.message.send({ streamId: 'durable', topicId: 'events', partitioning: { partitionId: partition }, messages: [{ payload }] });
      acked.push({ partition, offset: Number(sent.confirmations[0]?.baseOffset ?? -1n), payload });
    }
    await client.offset.store({ streamId: 'durable', topicId: 'events', partitionId: 1, consumer: 5, offset: 3n });
    await client.destroy();
    expect((await server.stop('SIGTERM')).code).toBe(0);

    server = await startServer({ shards: 2, dataDir, readyTimeoutMs: 90_000, env: { IGGY_SYSTEM_LOGGING_LEVEL: process.env['SHOAL_TEST_LOG'] ?? 'info' } });
    const after = open();
    await verify(after);
    await after.destroy();
  });

  it('keeps every acknowledged message after SIGKILL, idle and in the middle of sends', async () => {
    const client = open();
    for (let i = 0; i < 30; i++) {
      const sent = await client.message.send({ streamId: 'durable', topicId: 'events', partitioning: { partitionId: i % 3 }, messages: [{ payload: `idle-${i}` }] });
      acked.push({ partition: i % 3, offset: Number(sent.confirmations[0]?.baseOffset ?? -1n), payload: `idle-${i}` });
    }
    await client.destroy();
    expect((await (server as ServerHandle).stop('SIGKILL')).signal).toBe('SIGKILL');

    server = await startServer({ shards: 2, dataDir, readyTimeoutMs: 90_000, env: { IGGY_SYSTEM_LOGGING_LEVEL: process.env['SHOAL_TEST_LOG'] ?? 'info' } });
    const busy = open();
    await verify(busy);
    // Several senders keep the node busy; the kill lands between acknowledgements.
    let stop = false;
    const senders = Array.from({ length: 4 }, async (_, k) => {
      for (let i = 0; !stop; i++) {
        const payload = `busy-${k}-${i}`;
        const partition = (k + i) % 3;
        try {
          const sent = await busy.message.send({ streamId: 'durable', topicId: 'events', partitioning: { partitionId: partition }, messages: [{ payload }, { payload: `${payload}-b` }] });
          if (!stop) {
            const base = Number(sent.confirmations[0]?.baseOffset ?? -1n);
            acked.push({ partition, offset: base, payload }, { partition, offset: base + 1, payload: `${payload}-b` });
          }
        } catch {
          return;
        }
      }
    });
    await new Promise((resolve) => setTimeout(resolve, 1500));
    const killed = (server as ServerHandle).stop('SIGKILL');
    stop = true;
    expect((await killed).signal).toBe('SIGKILL');
    await Promise.all(senders);
    await busy.destroy();
    expect(acked.filter((a) => a.payload.startsWith('busy-')).length).toBeGreaterThan(20);

    server = await startServer({ shards: 2, dataDir, readyTimeoutMs: 90_000, env: { IGGY_SYSTEM_LOGGING_LEVEL: process.env['SHOAL_TEST_LOG'] ?? 'info' } });
    const after = open();
    await verify(after);
    await after.destroy();
    expect((await server.stop('SIGTERM')).code).toBe(0);
    server = null;
  });

  it('--fresh wipes the data directory and starts empty (root user re-created)', async () => {
    server = await startServer({ shards: 2, dataDir, args: ['--fresh'] });
    const client = open();
    expect(await client.stream.list()).toEqual([]);
    expect((await client.user.list()).map((u) => u.username)).toEqual(['iggy']);
    await client.destroy();
    expect((await server.stop('SIGTERM')).code).toBe(0);
    server = null;
  });
});
