/**
 * A partition directory knows which incarnation of its ids it holds (`purge.gen`'s created
 * revision), and a node opens it against the committed partition's revision: a leftover of an
 * OLDER incarnation (the topic deleted and re-created under the same ids while the node was away,
 * or the node killed between the metadata commit and the directory's removal) is wiped, never
 * served as the new partition's data; a directory recording none (0: written before the node
 * passed revisions) adopts the committed one and keeps everything; one recording a NEWER revision
 * than the node's metadata (a boot state behind what the node had applied) is left alone.
 */
import { existsSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { ShoalClient } from '@shoal/client';
import { PURGE_GENERATION_FILE_NAME, classifyPurgeRecord, encodePurgeRecord } from '@shoal/storage';
import { removeDataDir, startServer, tempDataDir, type ServerHandle } from './support/server.js';

const decode = (bytes: Uint8Array): string => new TextDecoder().decode(bytes);

/** `<data>/streams/<s>/topics/<t>/partitions/<p>` of the one topic the test creates. */
function partitionDir(dataDir: string, partition: number): string {
  const streams = join(dataDir, 'data', 'streams');
  const [stream] = readdirSync(streams);
  const topics = join(streams, stream as string, 'topics');
  const [topic] = readdirSync(topics);
  return join(topics, topic as string, 'partitions', String(partition));
}

function createdRevision(dir: string): bigint {
  const read = classifyPurgeRecord(readFileSync(join(dir, PURGE_GENERATION_FILE_NAME)));
  if (read.kind !== 'ok') throw new Error(`purge.gen of ${dir}: ${read.kind}`);
  return read.record.createdRevision;
}

describe('partition incarnations across a restart', () => {
  const dataDir = tempDataDir('shoal-incarnation-');
  let server: ServerHandle | null = null;
  const start = async (): Promise<ServerHandle> =>
    (server = await startServer({ shards: 1, dataDir, readyTimeoutMs: 90_000, env: { IGGY_SYSTEM_LOGGING_LEVEL: process.env['SHOAL_TEST_LOG'] ?? 'info' } }));
  const open = (): ShoalClient =>
    new ShoalClient({ address: (server as ServerHandle).address, credentials: { username: 'iggy', password: 'iggy' }, heartbeatIntervalMs: 0, reconnect: { enabled: false } });
  const payloads = async (client: ShoalClient, partitionId: number): Promise<string[]> => {
    const polled = await client.message.poll({ streamId: 's', topicId: 't', partitionId, consumer: 1, strategy: { offset: 0n }, count: 100 });
    return polled.messages.map((m) => decode(m.payload));
  };

  afterAll(async () => {
    if (server !== null) await server.stop('SIGKILL');
    removeDataDir(dataDir);
  });

  it('wipes an older incarnation\'s leftover and keeps a directory that recorded no revision', async () => {
    await start();
    const client = open();
    await client.stream.create({ name: 's' });
    // A first incarnation of the topic's ids, deleted; the second one takes the same ids.
    await client.topic.create({ streamId: 's', name: 't', partitionsCount: 2 });
    const first = createdRevision(partitionDir(dataDir, 0));
    await client.topic.delete({ streamId: 's', topicId: 't' });
    await client.topic.create({ streamId: 's', name: 't', partitionsCount: 2 });
    for (let i = 0; i < 5; i++) {
      for (const partitionId of [0, 1]) {
        await client.message.send({ streamId: 's', topicId: 't', partitioning: { partitionId }, messages: [{ payload: `p${partitionId}-${i}` }] });
      }
    }
    await client.destroy();
    expect((await (server as ServerHandle).stop('SIGTERM')).code).toBe(0);

    // The node recorded the committed revision of each partition when it created it.
    const leftover = partitionDir(dataDir, 0);
    const legacy = partitionDir(dataDir, 1);
    const revision = createdRevision(leftover);
    expect(revision).toBeGreaterThan(first);
    expect(createdRevision(legacy)).toBe(revision);
    // Partition 0's directory now claims the first incarnation; partition 1's records none.
    writeFileSync(join(leftover, PURGE_GENERATION_FILE_NAME), encodePurgeRecord({ generation: 0n, createdRevision: first }));
    rmSync(join(legacy, PURGE_GENERATION_FILE_NAME));

    await start();
    const after = open();
    expect(await payloads(after, 0)).toEqual([]);
    expect(await payloads(after, 1)).toEqual([0, 1, 2, 3, 4].map((i) => `p1-${i}`));
    const sent = await after.message.send({ streamId: 's', topicId: 't', partitioning: { partitionId: 0 }, messages: [{ payload: 'fresh' }] });
    expect(sent.confirmations[0]?.baseOffset).toBe(0n);
    expect(await payloads(after, 0)).toEqual(['fresh']);
    await after.destroy();
    expect(createdRevision(leftover)).toBe(revision);
    expect(existsSync(join(legacy, PURGE_GENERATION_FILE_NAME))).toBe(true);
    expect(createdRevision(legacy)).toBe(revision);
  });

  it('leaves a directory of a newer incarnation than its metadata alone, and keeps serving the rest', async () => {
    expect((await (server as ServerHandle).stop('SIGTERM')).code).toBe(0);
    const ahead = partitionDir(dataDir, 1);
    const revision = createdRevision(ahead);
    const files = readdirSync(ahead).sort();
    writeFileSync(join(ahead, PURGE_GENERATION_FILE_NAME), encodePurgeRecord({ generation: 0n, createdRevision: revision + 1000n }));

    const node = await start();
    const client = open();
    // Not opened (the copy may yet catch up with it), not removed, and no exit: an exit would
    // meet the same boot state again.
    await expect(payloads(client, 1)).rejects.toThrow();
    expect(await payloads(client, 0)).toEqual(['fresh']);
    expect(node.lines.some((l) => l.includes('partition directory ahead of the metadata copy'))).toBe(true);
    expect(readdirSync(ahead).sort()).toEqual(files);
    await client.destroy();
    expect((await node.stop('SIGTERM')).code).toBe(0);

    writeFileSync(join(ahead, PURGE_GENERATION_FILE_NAME), encodePurgeRecord({ generation: 0n, createdRevision: revision }));
    await start();
    const again = open();
    expect(await payloads(again, 1)).toEqual([0, 1, 2, 3, 4].map((i) => `p1-${i}`));
    await again.destroy();
  });
});
