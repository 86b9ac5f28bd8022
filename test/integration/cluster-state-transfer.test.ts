/**
 * A replica wiped with `--fresh` rejoins by state transfer and ends byte-identical to its peers:
 * the same segment files (names and bytes), the same committed metadata (snapshot of the
 * catalog), the same messages at the same offsets.
 */
import { readFileSync, readdirSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { metricSum } from './support/server.js';
import { TestCluster, waitFor } from './support/cluster.js';
import { checkPartition, newLog, readPartition, sendAcked } from './support/produce.js';

const STREAM = 'st';
const TOPIC = 'bulk';
const PARTITIONS = 2;

/** Every segment file (.log, .index) of a node's data directory: relative path → bytes (hex digest). */
function segmentFiles(root: string): Map<string, string> {
  const out = new Map<string, string>();
  const walk = (dir: string): void => {
    for (const name of readdirSync(dir)) {
      const path = join(dir, name);
      if (statSync(path).isDirectory()) walk(path);
      else if (name.endsWith('.log') && dir.includes('partitions')) out.set(relative(root, path), Buffer.from(readFileSync(path)).toString('base64'));
    }
  };
  walk(root);
  return out;
}

describe('cluster: a replica wiped with --fresh', () => {
  let cluster: TestCluster;

  beforeAll(async () => {
    // Short repair windows, so that a wiped replica cannot be refilled by journal repair and has
    // to take state transfers: the partition journal keeps 16 ops after they commit, the metadata
    // WAL 256 slots (it checkpoints and drops the ops below the snapshot when 64 are left).
    cluster = await TestCluster.start({
      nodes: 3, extraToml: '\n[partition]\nevicted_ring_capacity = 16\n\n[metadata]\njournal_slots = 256\n',
    });
  }, 90_000);

  afterAll(async () => {
    await cluster?.stop();
  }, 60_000);

  it('refills metadata and partitions from its peers and ends byte-identical', async () => {
    const client = cluster.client({ requestTimeoutMs: 5_000 });
    await client.stream.create({ name: STREAM });
    await client.topic.create({ streamId: STREAM, name: TOPIC, partitionsCount: PARTITIONS });
    await client.user.create({ username: 'alice', password: 'alice-secret', status: 'active' });
    // Enough metadata ops for the WAL to checkpoint (and forget the first ops).
    for (let i = 0; i < 110; i++) {
      await client.stream.create({ name: `tmp-${i}` });
      await client.stream.delete({ streamId: `tmp-${i}` });
    }
    const log = newLog();
    for (let i = 0; i < 120; i++) await sendAcked(client, log, STREAM, TOPIC, i % PARTITIONS, `b${i}`, 50);

    // Wipe the metadata primary (also the primary of every partition), and restart it at once,
    // before its peers time it out: it must not lead the view it still is primary of with an
    // empty log (it probes first: `rejoin`), and it refills from the others.
    const wiped = await cluster.leader();
    await cluster.node(wiped).stop('SIGKILL');
    await cluster.startNode(wiped, { fresh: true });
    const leader = await cluster.leader({ not: wiped });
    // More history, written after the wipe.
    for (let i = 120; i < 160; i++) await sendAcked(client, log, STREAM, TOPIC, i % PARTITIONS, `b${i}`, 50);
    await client.stream.create({ name: 'created-after-wipe' });

    const fresh = cluster.nodeClient(wiped);
    await waitFor('the wiped node has the catalog back', async () => (await fresh.stream.list()).length === 2, 30_000);
    const peer = cluster.nodeClient(leader);
    for (let p = 0; p < PARTITIONS; p++) {
      const want = await readPartition(peer, STREAM, TOPIC, p);
      await waitFor(`partition ${p} refilled`, async () => (await readPartition(fresh, STREAM, TOPIC, p)).size === want.size, 60_000, 500);
      expect(checkPartition(await readPartition(fresh, STREAM, TOPIC, p), p, log)).toEqual([]);
    }
    const metrics = await cluster.metrics(wiped);
    expect(metricSum(metrics, 'shoal_consensus_events_total', { plane: 'partition', event: 'state_transfer_installed' })).toBeGreaterThanOrEqual(PARTITIONS);
    expect(metricSum(metrics, 'shoal_consensus_events_total', { plane: 'metadata', event: 'state_transfer_installed' })).toBeGreaterThanOrEqual(1);
    // The metadata snapshot it installed is the peer's snapshot.bin, byte for byte.
    const snapshot = (id: number): string => readFileSync(join(cluster.dataDir(id), 'data', 'metadata', 'snapshot.bin')).toString('base64');
    expect(snapshot(wiped) === snapshot(leader)).toBe(true);

    // Byte-identical: the same segment files, and the same catalog and users.
    const mine = segmentFiles(join(cluster.dataDir(wiped), 'data'));
    const theirs = segmentFiles(join(cluster.dataDir(leader), 'data'));
    expect([...mine.keys()].sort()).toEqual([...theirs.keys()].sort());
    for (const [path, bytes] of theirs) expect(mine.get(path) === bytes, path).toBe(true);
    const asAlice = cluster.nodeClient(wiped, {});
    await asAlice.login('alice', 'alice-secret');
    expect((await fresh.user.list()).map((u) => u.username).sort()).toEqual(['alice', 'iggy']);
    expect(await fresh.stream.list()).toEqual(await peer.stream.list());
    expect(await fresh.topic.get({ streamId: STREAM, topicId: TOPIC })).toEqual(await peer.topic.get({ streamId: STREAM, topicId: TOPIC }));
  }, 180_000);
});
