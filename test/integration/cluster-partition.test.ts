/**
 * A network partition through in-test TCP proxies (every replica link of the cluster goes through
 * one): the primary is cut off from both peers (its links stall, as a TCP partition does).
 * - the minority (the old primary alone) cannot commit: a write sent to it is never acknowledged;
 * - the majority elects a new primary and keeps acknowledging writes;
 * - after healing, the old primary rejoins: every node holds the same committed data, the write
 *   the minority took is nowhere, and every acknowledged message is there exactly once.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TestCluster, waitFor } from './support/cluster.js';
import { checkPartition, newLog, readPartition, sendTagged, sendAcked } from './support/produce.js';

const STREAM = 'np';
const TOPIC = 'events';
const PARTITIONS = 2;

describe('cluster: the primary partitioned from the others', () => {
  let cluster: TestCluster;

  beforeAll(async () => {
    cluster = await TestCluster.start({ nodes: 3, proxies: true });
  }, 90_000);

  afterAll(async () => {
    await cluster?.stop();
  }, 60_000);

  // A window deeper than the partition core's queues (32 prepares + 64 queued by default): the
  // primary parks the excess and hands it on as commits free room. Before, it dropped them without
  // an answer and every client waited for its request timeout.
  it('a window deeper than the primary\'s queues: every request is answered, in order, exactly once', async () => {
    // attemptsMax 1: whichever node the SDK reaches first must answer (it forwards to the
    // partition's primary when it does not lead it: docs/cluster.md "Forwarded partition requests").
    const noRetry = { requestTimeoutMs: 30_000, cluster: { retry: { attemptsMax: 1 } } } as const;
    const producers = [cluster.client(noRetry), cluster.client(noRetry)];
    const admin = cluster.client({ requestTimeoutMs: 10_000 });
    await admin.stream.create({ name: 'deep' });
    try {
      await admin.topic.create({ streamId: 'deep', name: 'w', partitionsCount: 1 });
      const log = newLog();
      const PER_PRODUCER = 120;
      const results = await Promise.all(producers.flatMap((client, p) => Array.from({ length: PER_PRODUCER }, (_, i) =>
        sendTagged(client, log, 'deep', 'w', 0, `deep-${p}-${i}`, 1))));
      expect(log.errors).toEqual([]);
      expect(results.every((ok) => ok)).toBe(true);
      // A new connection to the metadata leader has no write to wait for: its replica of the
      // partition may serve the poll before it applied the last commits. Every acknowledged
      // message must be there once it caught up.
      const reader = cluster.nodeClient(await cluster.leader());
      const stored = await waitFor('the leader holds every acknowledged message', async () => {
        const got = await readPartition(reader, 'deep', 'w', 0);
        return got.size >= 2 * PER_PRODUCER ? got : null;
      }, 30_000, 100);
      expect(stored.size).toBe(2 * PER_PRODUCER);
      expect(checkPartition(stored, 0, log)).toEqual([]);
    } finally {
      // The next test checks the exact stream list: never leave this one behind.
      await admin.stream.delete({ streamId: 'deep' });
      await Promise.all([admin, ...producers].map((client) => client.destroy()));
    }
  }, 120_000);

  it('the minority cannot commit, the majority elects and continues, healing converges', async () => {
    const everywhere = cluster.client({ requestTimeoutMs: 5_000 });
    await everywhere.stream.create({ name: STREAM });
    await everywhere.topic.create({ streamId: STREAM, name: TOPIC, partitionsCount: PARTITIONS });
    const log = newLog();
    for (let i = 0; i < 10; i++) await sendAcked(everywhere, log, STREAM, TOPIC, i % PARTITIONS, `before-${i}`, 20);
    await everywhere.destroy();

    const old = await cluster.leader();
    const majority = [0, 1, 2].filter((id) => id !== old);
    cluster.isolate(old);

    // The minority: a write to the old primary (which still believes it leads) is never acknowledged.
    const minority = cluster.nodeClient(old, { requestTimeoutMs: 8_000, cluster: { leaderAware: false, retry: { attemptsMax: 1 } } });
    const stranded = newLog();
    const [lost, lostStream] = await Promise.all([
      sendTagged(minority, stranded, STREAM, TOPIC, 0, 'minority', 5),
      minority.stream.create({ name: 'minority-stream' }).then(() => true, () => false),
    ]);
    expect(lost).toBe(false);
    expect(lostStream).toBe(false);

    // The majority elects a new primary and acknowledges writes.
    const next = await cluster.leader({ among: majority, not: old, timeoutMs: 30_000 });
    expect(majority).toContain(next);
    const survivors = cluster.client({ requestTimeoutMs: 5_000 }, majority);
    for (let i = 0; i < 10; i++) await sendAcked(survivors, log, STREAM, TOPIC, i % PARTITIONS, `during-${i}`, 20);
    await survivors.stream.create({ name: 'majority-stream' });

    // Heal: the old primary learns the new view, drops what it alone had, and catches up.
    cluster.heal();
    const oldReader = cluster.nodeClient(old);
    await waitFor('the old primary sees the majority stream', async () => (await oldReader.stream.list()).some((s) => s.name === 'majority-stream'), 30_000);
    const reference = cluster.nodeClient(next);
    for (let p = 0; p < PARTITIONS; p++) {
      const want = await readPartition(reference, STREAM, TOPIC, p);
      await waitFor(`node ${old} partition ${p} converged`, async () => {
        const got = await readPartition(oldReader, STREAM, TOPIC, p);
        return got.size === want.size && [...want].every(([offset, payload]) => got.get(offset) === payload);
      }, 30_000, 250);
    }
    for (const id of [0, 1, 2]) {
      const reader = cluster.nodeClient(id);
      expect((await reader.stream.list()).map((s) => s.name).sort()).toEqual(['majority-stream', STREAM]);
      for (let p = 0; p < PARTITIONS; p++) {
        const stored = await readPartition(reader, STREAM, TOPIC, p);
        expect(checkPartition(stored, p, log), `node ${id} partition ${p}`).toEqual([]);
        expect([...stored.values()].some((payload) => payload.startsWith('minority')), `node ${id} partition ${p}`).toBe(false);
      }
    }
    // And the healed cluster keeps serving through any node.
    const after = cluster.client({ requestTimeoutMs: 5_000 });
    await sendAcked(after, log, STREAM, TOPIC, 1, 'after-heal', 5);
  }, 180_000);
});

